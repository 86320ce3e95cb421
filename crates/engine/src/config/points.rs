//! Extension points and plugin args as the configuration names them: plain data the
//! engine builds profiles from (see `engine::profile`). schedscope's own: upstream
//! names them in the v1 types and in `frameworkruntime`'s extension-point table.

use serde_json::Value;

use super::v1::{PluginSet, Plugins};

/// An extension point, in the order upstream's `getExtensionPoints` lists them (the
/// order errors are found in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExtensionPoint {
    PreFilter,
    Filter,
    PostFilter,
    Reserve,
    PreScore,
    Score,
    PreBind,
    Bind,
    PostBind,
    Permit,
    PreEnqueue,
    QueueSort,
}

impl ExtensionPoint {
    pub const ALL: [ExtensionPoint; 12] = [
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::PostFilter,
        ExtensionPoint::Reserve,
        ExtensionPoint::PreScore,
        ExtensionPoint::Score,
        ExtensionPoint::PreBind,
        ExtensionPoint::Bind,
        ExtensionPoint::PostBind,
        ExtensionPoint::Permit,
        ExtensionPoint::PreEnqueue,
        ExtensionPoint::QueueSort,
    ];

    /// The Go interface name used in construction errors.
    pub fn type_name(self) -> &'static str {
        match self {
            ExtensionPoint::PreFilter => "PreFilterPlugin",
            ExtensionPoint::Filter => "FilterPlugin",
            ExtensionPoint::PostFilter => "PostFilterPlugin",
            ExtensionPoint::Reserve => "ReservePlugin",
            ExtensionPoint::PreScore => "PreScorePlugin",
            ExtensionPoint::Score => "ScorePlugin",
            ExtensionPoint::PreBind => "PreBindPlugin",
            ExtensionPoint::Bind => "BindPlugin",
            ExtensionPoint::PostBind => "PostBindPlugin",
            ExtensionPoint::Permit => "PermitPlugin",
            ExtensionPoint::PreEnqueue => "PreEnqueuePlugin",
            ExtensionPoint::QueueSort => "QueueSortPlugin",
        }
    }

    pub fn set(self, p: &Plugins) -> &PluginSet {
        match self {
            ExtensionPoint::PreFilter => &p.pre_filter,
            ExtensionPoint::Filter => &p.filter,
            ExtensionPoint::PostFilter => &p.post_filter,
            ExtensionPoint::Reserve => &p.reserve,
            ExtensionPoint::PreScore => &p.pre_score,
            ExtensionPoint::Score => &p.score,
            ExtensionPoint::PreBind => &p.pre_bind,
            ExtensionPoint::Bind => &p.bind,
            ExtensionPoint::PostBind => &p.post_bind,
            ExtensionPoint::Permit => &p.permit,
            ExtensionPoint::PreEnqueue => &p.pre_enqueue,
            ExtensionPoint::QueueSort => &p.queue_sort,
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Args of one pluginConfig entry after defaulting.
#[derive(Clone, Debug, PartialEq)]
pub enum Args {
    /// Defaulted args (args kind) or the raw args (`Null` when none).
    Ready(Value),
    /// Errors of an args kind that upstream validates only inside the plugin's
    /// factory; they surface as `initializing plugin "<name>": ...`.
    Invalid(Vec<String>),
}

/// Renders a list of errors like Go's `utilerrors.Aggregate`: one as is, several as
/// `[a, b]`, repeated messages once.
pub fn aggregate(errs: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errs {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    match seen.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_like_go() {
        assert_eq!(aggregate(&["a".into()]), "a");
        assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    }
}

//! `ValidateKubeSchedulerConfiguration` (upstream:
//! pkg/scheduler/apis/config/validation/validation.go): every error of a defaulted configuration,
//! in upstream's order, with upstream's messages.

use serde_json::Value;

use super::field;

#[derive(Clone, Copy)]
enum RawKind {
    Invalid,
    Duplicate,
}
use super::v1::{Extender, PluginSet, child, index};
use super::{DefaultedConfig, DefaultedProfile};

/// Plugins removed from v1, rejected by name (`invalidPluginsByVersion`).
pub const REMOVED_PLUGINS: [&str; 4] = [
    "AzureDiskLimits",
    "CinderLimits",
    "EBSLimits",
    "GCEPDLimits",
];

/// Plugins whose args config validation checks (`validatePluginConfig`'s map). Upstream
/// registers NodeResourcesFit's validator under the key `NodeResourcesFitArgs`, so its
/// args are only checked when the plugin is built; out-of-tree args likewise.
pub const CONFIG_VALIDATED_ARGS: [&str; 7] = [
    "DefaultPreemption",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "PodTopologySpread",
    "VolumeBinding",
    "DynamicResources",
];

pub fn removed_message(api_version: &str) -> String {
    format!(
        "was invalid in version {:?} (KubeSchedulerConfiguration is version {api_version:?})",
        super::v1::API_VERSION
    )
}

pub fn is_removed(name: &str) -> bool {
    REMOVED_PLUGINS.contains(&name)
}

/// A field error whose value upstream prints unquoted (a `Stringer` such as a field
/// path or a duration, or a `%#v` struct).
fn raw_value(kind: RawKind, path: &str, value: &str, detail: &str) -> String {
    let kind = match kind {
        RawKind::Invalid => "Invalid value",
        RawKind::Duplicate => "Duplicate value",
    };
    if detail.is_empty() {
        format!("{path}: {kind}: {value}")
    } else {
        format!("{path}: {kind}: {value}: {detail}")
    }
}

pub(crate) fn validate(c: &DefaultedConfig) -> Vec<String> {
    let mut errs = Vec::new();

    if c.client_connection.burst < 0 {
        errs.push(field::invalid(
            "clientConnection.burst",
            c.client_connection.burst,
            "must be non-negative",
        ));
    }
    let le = &c.leader_election;
    if le.leader_elect {
        let dur = |name: &str, ns: i64, detail: &str| {
            raw_value(
                RawKind::Invalid,
                &format!("leaderElection.{name}"),
                &super::v1::format_go_duration(ns),
                detail,
            )
        };
        if le.lease_duration <= 0 {
            errs.push(dur(
                "leaseDuration",
                le.lease_duration,
                "must be greater than zero",
            ));
        }
        if le.renew_deadline <= 0 {
            errs.push(dur(
                "renewDeadline",
                le.renew_deadline,
                "must be greater than zero",
            ));
        }
        if le.retry_period <= 0 {
            errs.push(dur(
                "retryPeriod",
                le.retry_period,
                "must be greater than zero",
            ));
        }
        if le.lease_duration <= le.renew_deadline {
            // Upstream reports the renew deadline as the bad value here.
            errs.push(dur(
                "leaseDuration",
                le.renew_deadline,
                "must be greater than `RenewDeadline`",
            ));
        }
        for (name, v) in [
            ("resourceLock", &le.resource_lock),
            ("resourceNamespace", &le.resource_namespace),
            ("resourceName", &le.resource_name),
        ] {
            if v.is_empty() {
                errs.push(field::required(&format!("leaderElection.{name}"), ""));
            }
        }
        if le.resource_lock != "leases" {
            errs.push(field::invalid(
                "leaderElection.resourceLock",
                le.resource_lock.as_str(),
                r#"resourceLock value must be "leases""#,
            ));
        }
    }

    if c.parallelism <= 0 {
        errs.push(field::invalid(
            "parallelism",
            c.parallelism,
            "should be an integer value greater than zero",
        ));
    }

    if c.profiles.is_empty() {
        errs.push(field::required("profiles", ""));
    } else {
        let mut seen: Vec<(&str, usize)> = Vec::new();
        for (i, p) in c.profiles.iter().enumerate() {
            let path = index("profiles", i);
            validate_profile(&path, &c.api_version, p, &mut errs);
            let name_path = child(&path, "schedulerName");
            // The map keeps the latest index of a name, as upstream's does.
            match seen.iter_mut().find(|(n, _)| *n == p.name) {
                Some((_, idx)) => {
                    let first = child(&index("profiles", *idx), "schedulerName");
                    errs.push(raw_value(RawKind::Duplicate, &name_path, &first, ""));
                    *idx = i;
                }
                None => seen.push((&p.name, i)),
            }
        }
        validate_common_queue_sort(&c.profiles, &mut errs);
    }

    if let Err(e) = percentage("percentageOfNodesToScore", c.percentage_of_nodes_to_score) {
        errs.push(e);
    }
    if c.pod_initial_backoff_seconds <= 0 {
        errs.push(field::invalid(
            "podInitialBackoffSeconds",
            c.pod_initial_backoff_seconds,
            "must be greater than 0",
        ));
    }
    if c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds {
        errs.push(field::invalid(
            "podMaxBackoffSeconds",
            c.pod_max_backoff_seconds,
            "must be greater than or equal to PodInitialBackoffSeconds",
        ));
    }
    validate_extenders(&c.extenders, &mut errs);
    errs
}

fn percentage(path: &str, v: Option<i32>) -> Result<(), String> {
    match v {
        Some(p) if !(0..=100).contains(&p) => {
            Err(field::invalid(path, p, "not in valid range [0-100]"))
        }
        _ => Ok(()),
    }
}

fn validate_profile(path: &str, api_version: &str, p: &DefaultedProfile, errs: &mut Vec<String>) {
    if p.name.is_empty() {
        errs.push(field::required(&child(path, "schedulerName"), ""));
    }
    if let Err(e) = percentage(
        &child(path, "percentageOfNodesToScore"),
        p.percentage_of_nodes_to_score,
    ) {
        errs.push(e);
    }
    // Removed plugins at each point; MultiPoint is not checked here (upstream neither),
    // so a removed name there fails later as an unknown plugin. Upstream walks a map of
    // the points; the order here is fixed.
    let plugins_path = child(path, "plugins");
    let pl = &p.plugins;
    for (stage, set) in [
        ("preEnqueue", &pl.pre_enqueue),
        ("queueSort", &pl.queue_sort),
        ("preFilter", &pl.pre_filter),
        ("filter", &pl.filter),
        ("postFilter", &pl.post_filter),
        ("preScore", &pl.pre_score),
        ("score", &pl.score),
        ("reserve", &pl.reserve),
        ("permit", &pl.permit),
        ("preBind", &pl.pre_bind),
        ("bind", &pl.bind),
        ("postBind", &pl.post_bind),
    ] {
        for (k, plugin) in set.enabled.iter().enumerate() {
            if is_removed(&plugin.name) {
                errs.push(field::invalid(
                    &index(&child(&child(&plugins_path, stage), "enabled"), k),
                    plugin.name.as_str(),
                    &removed_message(api_version),
                ));
            }
        }
    }
    // Duplicate, removed and args errors of each pluginConfig entry, computed while
    // defaulting.
    for entry in &p.plugin_config {
        errs.extend(entry.errors.iter().cloned());
    }
}

/// Go's `%#v` of an internal `config.PluginSet` (nil slices when empty, as merging
/// leaves them).
fn go_plugin_set(s: &PluginSet) -> String {
    let list = |l: &[super::v1::PluginRef]| {
        if l.is_empty() {
            return "[]config.Plugin(nil)".to_string();
        }
        let items: Vec<String> = l
            .iter()
            .map(|p| {
                format!(
                    "config.Plugin{{Name:{:?}, Weight:{}}}",
                    p.name,
                    p.weight.unwrap_or(0)
                )
            })
            .collect();
        format!("[]config.Plugin{{{}}}", items.join(", "))
    };
    format!(
        "config.PluginSet{{Enabled:{}, Disabled:{}}}",
        list(&s.enabled),
        list(&s.disabled)
    )
}

/// Plugin sets compared the way `apiequality.Semantic.DeepEqual` does (unset weight
/// and 0 are the same internal value).
fn same_plugin_set(a: &PluginSet, b: &PluginSet) -> bool {
    let eq = |x: &[super::v1::PluginRef], y: &[super::v1::PluginRef]| {
        x.len() == y.len()
            && x.iter()
                .zip(y)
                .all(|(p, q)| p.name == q.name && p.weight.unwrap_or(0) == q.weight.unwrap_or(0))
    };
    eq(&a.enabled, &b.enabled) && eq(&a.disabled, &b.disabled)
}

/// `validateCommonQueueSort`: the explicit queueSort sets (and the args of profile 0's
/// queue sort plugin) must be the same in every profile.
fn validate_common_queue_sort(profiles: &[DefaultedProfile], errs: &mut Vec<String>) {
    let canon = &profiles[0].plugins.queue_sort;
    let queue_sort_name = canon.enabled.first().map(|p| p.name.as_str());
    if canon.enabled.len() > 1 {
        // Upstream spells this path with a capital `Enabled`.
        errs.push(field::invalid(
            "profiles[0].plugins.queueSort.Enabled",
            canon.enabled.len(),
            "only one queue sort plugin can be enabled",
        ));
    }
    let mut canon_args: Option<&Value> = None;
    if let Some(qs) = queue_sort_name {
        for e in &profiles[0].plugin_config {
            if e.name == qs {
                canon_args = e.comparable_args();
            }
        }
    }
    for (i, p) in profiles.iter().enumerate().skip(1) {
        let curr = &p.plugins.queue_sort;
        if !same_plugin_set(canon, curr) {
            errs.push(raw_value(
                RawKind::Invalid,
                &child(&child(&index("profiles", i), "plugins"), "queueSort"),
                &go_plugin_set(curr),
                "must be the same for all profiles",
            ));
        }
        for e in &p.plugin_config {
            if Some(e.name.as_str()) == queue_sort_name && e.comparable_args() != canon_args {
                // Upstream prints the args object with `%#v`; JSON is shown here.
                let shown = e.comparable_args().cloned().unwrap_or(Value::Null);
                errs.push(raw_value(
                    RawKind::Invalid,
                    &format!("profiles[{i}].pluginConfig.args"),
                    &shown.to_string(),
                    "queueSort must be the same for all profiles",
                ));
            }
        }
    }
}

fn validate_extenders(extenders: &[Extender], errs: &mut Vec<String>) {
    let mut binders = 0;
    let mut managed: Vec<&str> = Vec::new();
    for (i, e) in extenders.iter().enumerate() {
        let path = index("extenders", i);
        if !e.prioritize_verb.is_empty() && e.weight <= 0 {
            errs.push(field::invalid(
                &child(&path, "weight"),
                e.weight,
                "must have a positive weight applied to it",
            ));
        }
        if !e.bind_verb.is_empty() {
            binders += 1;
        }
        for (j, r) in e.managed_resources.iter().enumerate() {
            let name_path = child(&index(&child(&path, "managedResources"), j), "name");
            errs.extend(validate_extended_resource_name(&name_path, &r.name));
            if managed.contains(&r.name.as_str()) {
                errs.push(field::invalid(
                    &name_path,
                    r.name.as_str(),
                    "duplicate extender managed resource name",
                ));
            }
            managed.push(&r.name);
        }
    }
    if binders > 1 {
        errs.push(field::invalid(
            "extenders",
            format!("found {binders} extenders implementing bind"),
            "only one extender can implement bind",
        ));
    }
}

const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
            && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    })
}

/// `validation.IsQualifiedName`.
fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > 253 {
                    errs.push("prefix part must be no more than 253 characters".to_string());
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!("prefix part {DNS1123_SUBDOMAIN_ERR}"));
                }
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {QUALIFIED_NAME_ERR} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_qualified_name_part(name) {
        errs.push(format!("name part {QUALIFIED_NAME_ERR}"));
    }
    errs
}

/// `validateExtendedResourceName`: a qualified name, not native (`kubernetes.io/`
/// prefixed or unprefixed), and not starting with `requests.`.
fn validate_extended_resource_name(path: &str, name: &str) -> Vec<String> {
    let errs: Vec<String> = is_qualified_name(name)
        .iter()
        .map(|m| field::invalid(path, name, m))
        .collect();
    if !errs.is_empty() {
        return errs;
    }
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    let extended = !native
        && !name.starts_with("requests.")
        && is_qualified_name(&format!("requests.{name}")).is_empty();
    if extended {
        Vec::new()
    } else {
        vec![field::invalid(
            path,
            name,
            "is an invalid extended resource name",
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("example.com/foo").is_empty());
        assert!(is_qualified_name("foo").is_empty());
        assert_eq!(
            is_qualified_name("/foo"),
            vec!["prefix part must be non-empty".to_string()]
        );
        assert_eq!(is_qualified_name("a/b/c").len(), 1);
        assert_eq!(
            is_qualified_name("Example.com/foo"),
            vec![format!("prefix part {DNS1123_SUBDOMAIN_ERR}")]
        );
        assert_eq!(
            is_qualified_name("example.com/-foo"),
            vec![format!("name part {QUALIFIED_NAME_ERR}")]
        );
    }

    #[test]
    fn extended_resource_names() {
        assert!(validate_extended_resource_name("p", "example.com/gpu").is_empty());
        for bad in ["cpu", "kubernetes.io/foo", "requests.example.com/gpu"] {
            assert_eq!(
                validate_extended_resource_name("p", bad),
                vec![format!(
                    "p: Invalid value: {bad:?}: is an invalid extended resource name"
                )],
                "{bad}"
            );
        }
    }

    #[test]
    fn go_rendering_of_plugin_sets() {
        let s = PluginSet {
            enabled: vec![super::super::v1::PluginRef::new("PrioritySort", None)],
            disabled: vec![],
        };
        assert_eq!(
            go_plugin_set(&s),
            r#"config.PluginSet{Enabled:[]config.Plugin{config.Plugin{Name:"PrioritySort", Weight:0}}, Disabled:[]config.Plugin(nil)}"#
        );
    }
}

//! Framework status codes and statuses (upstream: pkg/scheduler/framework/interface.go,
//! `Code` and `Status`).

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Code {
    Success,
    Error,
    Unschedulable,
    UnschedulableAndUnresolvable,
    Wait,
    Skip,
    Pending,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::Success => "Success",
            Code::Error => "Error",
            Code::Unschedulable => "Unschedulable",
            Code::UnschedulableAndUnresolvable => "UnschedulableAndUnresolvable",
            Code::Wait => "Wait",
            Code::Skip => "Skip",
            Code::Pending => "Pending",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The result of one plugin call. `plugin` is stamped by the framework on rejections.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Status {
    pub code: Code,
    pub reasons: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
}

impl Default for Status {
    fn default() -> Self {
        Status::success()
    }
}

impl Status {
    pub fn new(code: Code, reasons: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Status {
            code,
            reasons: reasons.into_iter().map(Into::into).collect(),
            plugin: None,
        }
    }
    pub fn success() -> Self {
        Status {
            code: Code::Success,
            reasons: Vec::new(),
            plugin: None,
        }
    }
    pub fn skip() -> Self {
        Status {
            code: Code::Skip,
            reasons: Vec::new(),
            plugin: None,
        }
    }
    pub fn unschedulable(reason: impl Into<String>) -> Self {
        Status::new(Code::Unschedulable, [reason.into()])
    }
    pub fn unresolvable(reason: impl Into<String>) -> Self {
        Status::new(Code::UnschedulableAndUnresolvable, [reason.into()])
    }
    pub fn error(reason: impl Into<String>) -> Self {
        Status::new(Code::Error, [reason.into()])
    }
    pub fn with_plugin(mut self, plugin: &str) -> Self {
        self.plugin = Some(plugin.to_string());
        self
    }
    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }
    pub fn is_skip(&self) -> bool {
        self.code == Code::Skip
    }
    /// Unschedulable, UnschedulableAndUnresolvable or Pending.
    pub fn is_rejected(&self) -> bool {
        matches!(
            self.code,
            Code::Unschedulable | Code::UnschedulableAndUnresolvable | Code::Pending
        )
    }
    /// `Status.Message()`: reasons joined by ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

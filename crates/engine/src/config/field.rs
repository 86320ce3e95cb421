//! Field errors rendered like Kubernetes' `field.Error` (upstream:
//! staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go):
//! `<path>: <Type>: <value>: <detail>`.

use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorType {
    Invalid,
    Required,
    Duplicate,
    NotSupported,
    Forbidden,
}

impl ErrorType {
    fn as_str(self) -> &'static str {
        match self {
            ErrorType::Invalid => "Invalid value",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
        }
    }
}

/// Go's rendering of a bad value: strings quoted, numbers and bools bare, others JSON.
pub fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// One field error. Required and Forbidden carry no value, as upstream prints them.
pub fn field_error(kind: ErrorType, path: &str, value: Option<&Value>, detail: &str) -> String {
    let mut s = format!("{path}: {}", kind.as_str());
    if let Some(v) = value
        && !matches!(kind, ErrorType::Required | ErrorType::Forbidden)
    {
        s.push_str(": ");
        s.push_str(&render_value(v));
    }
    if !detail.is_empty() {
        s.push_str(": ");
        s.push_str(detail);
    }
    s
}

pub fn invalid(path: &str, value: impl Into<Value>, detail: &str) -> String {
    field_error(ErrorType::Invalid, path, Some(&value.into()), detail)
}

pub fn required(path: &str, detail: &str) -> String {
    field_error(ErrorType::Required, path, None, detail)
}

pub fn duplicate(path: &str, value: impl Into<Value>) -> String {
    field_error(ErrorType::Duplicate, path, Some(&value.into()), "")
}

/// `Unsupported value: "x": supported values: "a", "b"`.
pub fn not_supported(path: &str, value: impl Into<Value>, supported: &[&str]) -> String {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    field_error(
        ErrorType::NotSupported,
        path,
        Some(&value.into()),
        &format!("supported values: {}", list.join(", ")),
    )
}

pub fn forbidden(path: &str, detail: &str) -> String {
    field_error(ErrorType::Forbidden, path, None, detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_kubernetes() {
        assert_eq!(
            invalid("a.b", 200, "not in valid range [0, 100]"),
            "a.b: Invalid value: 200: not in valid range [0, 100]"
        );
        assert_eq!(
            not_supported("t", "X", &["A", "B"]),
            "t: Unsupported value: \"X\": supported values: \"A\", \"B\""
        );
        assert_eq!(
            required("p", "can not be empty"),
            "p: Required value: can not be empty"
        );
    }
}

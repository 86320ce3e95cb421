//! The Kubernetes DRA CEL environment on the `cel` crate: the `device` variable
//! (`driver`, `attributes[domain][id]`, `capacity[domain][id]`) and the Kubernetes
//! quantity and semver libraries. Evaluation never panics (a panic inside the crate
//! becomes a runtime error) and is bounded: expressions are limited in length, as
//! the API server limits them, and every evaluation in its runtime cost, as the
//! scheduler limits it (see its `eval` module).

mod eval;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use cel::extractors::{Arguments, This};
use cel::objects::{Key, Opaque};
use cel::{Context, ExecutionError, FunctionContext, Program, Value};

pub use eval::{COST_LIMIT_EXCEEDED, MAX_REGEX_PROGRAM_BYTES};
use k8s_openapi::api::resource::v1::{DeviceAttribute, DeviceCapacity};

use crate::model::Quantity;
use crate::model::dra::Semver;

/// `resource.CELSelectorExpressionMaxLength`.
pub const MAX_EXPRESSION_LENGTH: usize = 10 * 1024;
/// `resource.CELSelectorExpressionMaxCost`: the runtime cost budget of one
/// evaluation (one selector on one device), as cel-go counts cost.
pub const MAX_COST: u64 = 1_000_000;

/// Stack of the thread that parses an expression.
const PARSER_STACK_BYTES: usize = 256 << 20;

/// A compiled selector expression.
pub struct Selector {
    plan: eval::Node,
    /// String literals of the expression: a domain named by one that the device
    /// lacks must read as an empty map, not as a missing key.
    literals: Vec<String>,
    /// The two forms most selectors take, answered without building the device's
    /// CEL value (the interpreter's cost dominates allocation on large pools).
    fast: Option<Fast>,
}

/// `device.driver == "x"` or `device.attributes["domain"].name == "x"`.
#[derive(Debug, PartialEq, Eq)]
enum Fast {
    Driver(String),
    Attribute {
        domain: String,
        name: String,
        value: String,
    },
}

/// A plain string literal (`"..."` without escapes) at the start of `s`: the
/// literal and the rest.
fn plain_literal(s: &str) -> Option<(&str, &str)> {
    let s = s.strip_prefix('"')?;
    let end = s.find(['"', '\\'])?;
    (s.as_bytes()[end] == b'"').then(|| (&s[..end], &s[end + 1..]))
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

impl Fast {
    /// Recognizes the two forms exactly (any spacing around `==`); anything else,
    /// or a literal with escapes, goes to the interpreter.
    fn parse(expr: &str) -> Option<Fast> {
        let (lhs, rhs) = expr.split_once("==")?;
        let (lhs, rhs) = (lhs.trim(), rhs.trim());
        let (value, rest) = plain_literal(rhs)?;
        if !rest.is_empty() {
            return None;
        }
        if lhs == "device.driver" {
            return Some(Fast::Driver(value.to_string()));
        }
        let inner = lhs.strip_prefix("device.attributes[")?;
        let (domain, rest) = plain_literal(inner)?;
        let name = rest.strip_prefix("].")?;
        is_identifier(name).then(|| Fast::Attribute {
            domain: domain.to_string(),
            name: name.to_string(),
            value: value.to_string(),
        })
    }

    /// The answer, or `None` where the interpreter must give it (a missing
    /// attribute is a runtime error; a value of another type compares by CEL's
    /// rules).
    fn eval(&self, dev: &DeviceView<'_>) -> Option<bool> {
        match self {
            Fast::Driver(d) => Some(dev.driver == d),
            Fast::Attribute {
                domain,
                name,
                value,
            } => {
                let attr = dev
                    .attributes?
                    .iter()
                    .find(|(k, _)| split_name(k, dev.driver) == (domain.as_str(), name.as_str()))?
                    .1;
                let s = attr.string.as_deref()?;
                let other_types =
                    attr.bool.is_some() || attr.int.is_some() || attr.version.is_some();
                (!other_types).then(|| s == value)
            }
        }
    }
}

/// Compiles `expr`; the error is the detail after `CEL compile error: `.
pub fn compile(expr: &str) -> Result<Selector, String> {
    if expr.len() > MAX_EXPRESSION_LENGTH {
        return Err(format!(
            "expression too long ({} bytes, maximum {MAX_EXPRESSION_LENGTH})",
            expr.len()
        ));
    }
    let parse = || match catch_unwind(|| Program::compile(expr)) {
        Ok(Ok(p)) => Ok(eval::plan(p.expression(), &mut vec!["device".to_string()])),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the expression could not be parsed".to_string()),
    };
    // The crate's parser takes a lot of stack per nesting level (up to its limit
    // of 96 levels): it runs on a thread with room for that, not on a worker's.
    let plan = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(s, parse)
            .map(|h| h.join())
    });
    let plan = match plan {
        Ok(Ok(plan)) => plan?,
        Ok(Err(_)) => return Err("the expression could not be parsed".into()),
        Err(_) => parse()?,
    };
    Ok(Selector {
        plan,
        literals: string_literals(expr),
        fast: Fast::parse(expr),
    })
}

/// What the selector sees of a device.
pub struct DeviceView<'a> {
    pub driver: &'a str,
    pub attributes: Option<&'a BTreeMap<String, DeviceAttribute>>,
    pub capacity: Option<&'a BTreeMap<String, DeviceCapacity>>,
}

/// `domain/id` splits at the slash; a bare id belongs to the driver's domain.
pub fn split_name<'a>(name: &'a str, driver: &'a str) -> (&'a str, &'a str) {
    name.split_once('/').unwrap_or((driver, name))
}

fn attribute_value(a: &DeviceAttribute) -> Value {
    if let Some(b) = a.bool {
        Value::Bool(b)
    } else if let Some(i) = a.int {
        Value::Int(i)
    } else if let Some(s) = &a.string {
        Value::String(Arc::new(s.clone()))
    } else if let Some(v) = a.version.as_deref().and_then(|v| Semver::parse(v, false)) {
        Value::Opaque(Arc::new(SemverValue(v)))
    } else {
        Value::Null
    }
}

fn device_value(dev: &DeviceView<'_>, literals: &[String]) -> Value {
    let mut attrs: BTreeMap<String, HashMap<Key, Value>> = BTreeMap::new();
    for (name, a) in dev.attributes.into_iter().flatten() {
        let (dom, id) = split_name(name, dev.driver);
        attrs
            .entry(dom.to_string())
            .or_default()
            .insert(Key::from(id.to_string()), attribute_value(a));
    }
    let mut caps: BTreeMap<String, HashMap<Key, Value>> = BTreeMap::new();
    for (name, c) in dev.capacity.into_iter().flatten() {
        let (dom, id) = split_name(name, dev.driver);
        let q = Quantity::parse(&c.value.0).unwrap_or_default();
        caps.entry(dom.to_string()).or_default().insert(
            Key::from(id.to_string()),
            Value::Opaque(Arc::new(QuantityValue(q))),
        );
    }
    for lit in literals {
        attrs.entry(lit.clone()).or_default();
        caps.entry(lit.clone()).or_default();
    }
    let nest = |m: BTreeMap<String, HashMap<Key, Value>>| -> Value {
        let outer: HashMap<Key, Value> = m
            .into_iter()
            .map(|(k, v)| (Key::from(k), Value::from(v)))
            .collect();
        Value::from(outer)
    };
    let mut device: HashMap<Key, Value> = HashMap::new();
    device.insert(
        Key::from("driver".to_string()),
        Value::String(Arc::new(dev.driver.to_string())),
    );
    device.insert(Key::from("attributes".to_string()), nest(attrs));
    device.insert(Key::from("capacity".to_string()), nest(caps));
    Value::from(device)
}

/// Evaluates the selector on a device: `Ok(bool)` or the runtime error text (after
/// `CEL runtime error: `), [`COST_LIMIT_EXCEEDED`] once [`MAX_COST`] is spent.
pub fn evaluate(sel: &Selector, dev: &DeviceView<'_>) -> Result<bool, String> {
    evaluate_within(sel, dev, MAX_COST)
}

fn evaluate_within(sel: &Selector, dev: &DeviceView<'_>, limit: u64) -> Result<bool, String> {
    if let Some(answer) = sel.fast.as_ref().and_then(|f| f.eval(dev)) {
        return Ok(answer);
    }
    let device = device_value(dev, &sel.literals);
    let run = || -> Result<Value, String> {
        BASE_CONTEXT.with(|base| {
            let base = base.as_ref().map_err(Clone::clone)?;
            match eval::Eval::new(base, limit, device).eval(&sel.plan) {
                Ok(v) => Ok(v),
                Err(eval::Fault::Cancelled) => Err(COST_LIMIT_EXCEEDED.to_string()),
                Err(eval::Fault::Error(e)) => Err(runtime_message(&e)),
            }
        })
    };
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(Value::Bool(b))) => Ok(b),
        Ok(Ok(other)) => Err(format!(
            "expression must evaluate to bool, got {}",
            type_name(&other)
        )),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("internal error while evaluating the expression".into()),
    }
}

/// cel-go's wording where upstream's is known (`no such key: <id>`).
fn runtime_message(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::List(_) => "list",
        Value::Map(_) => "map",
        Value::Int(_) => "int",
        Value::UInt(_) => "uint",
        Value::Float(_) => "double",
        Value::String(_) => "string",
        Value::Bytes(_) => "bytes",
        Value::Bool(_) => "bool",
        Value::Null => "null_type",
        Value::Opaque(o) => {
            if o.downcast_ref::<QuantityValue>().is_some() {
                "kubernetes.Quantity"
            } else {
                "kubernetes.Semver"
            }
        }
        _ => "unknown",
    }
}

/// Quoted string literals of the source (no escapes resolved: domain names have
/// none).
fn string_literals(expr: &str) -> Vec<String> {
    let mut out = BTreeSet::new();
    let b = expr.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let q = b[i];
        if q == b'"' || q == b'\'' {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j] != q {
                if b[j] == b'\\' {
                    j += 1;
                }
                j += 1;
            }
            if j <= b.len()
                && let Some(s) = expr.get(start..j.min(b.len()))
            {
                out.insert(s.to_string());
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    out.into_iter().collect()
}

// ---------------------------------------------------------------------------------
// Quantity and semver values and functions

#[derive(Debug, PartialEq, Eq)]
struct QuantityValue(Quantity);

impl Opaque for QuantityValue {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

#[derive(Debug, PartialEq, Eq)]
struct SemverValue(Semver);

impl Opaque for SemverValue {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

fn quantity_of(v: &Value) -> Option<Quantity> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<QuantityValue>().map(|q| q.0),
        _ => None,
    }
}

fn semver_of(v: &Value) -> Option<&Semver> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<SemverValue>().map(|s| &s.0),
        _ => None,
    }
}

fn no_overload(ftx: &FunctionContext, what: &str) -> ExecutionError {
    ftx.error(format!("no such overload: {}({what})", ftx.name))
}

fn quantity(ftx: &FunctionContext, s: Arc<String>) -> Result<Value, ExecutionError> {
    Quantity::parse(&s)
        .map(|q| Value::Opaque(Arc::new(QuantityValue(q))))
        .map_err(|_| {
            ftx.error(
                "quantities must match the regular expression \
                 '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            )
        })
}

fn is_quantity(s: Arc<String>) -> bool {
    Quantity::parse(&s).is_ok()
}

fn semver_args(
    ftx: &FunctionContext,
    args: &[Value],
) -> Result<(Arc<String>, bool), ExecutionError> {
    match args {
        [Value::String(s)] => Ok((s.clone(), false)),
        [Value::String(s), Value::Bool(loose)] => Ok((s.clone(), *loose)),
        _ => Err(no_overload(ftx, "...")),
    }
}

fn semver(ftx: &FunctionContext, Arguments(args): Arguments) -> Result<Value, ExecutionError> {
    let (s, loose) = semver_args(ftx, &args)?;
    Semver::parse(&s, loose)
        .map(|v| Value::Opaque(Arc::new(SemverValue(v))))
        .ok_or_else(|| ftx.error("invalid semver"))
}

fn is_semver(ftx: &FunctionContext, Arguments(args): Arguments) -> Result<bool, ExecutionError> {
    let (s, loose) = semver_args(ftx, &args)?;
    Ok(Semver::parse(&s, loose).is_some())
}

fn ordering(
    ftx: &FunctionContext,
    this: &Value,
    other: &Value,
) -> Result<std::cmp::Ordering, ExecutionError> {
    if let (Some(a), Some(b)) = (quantity_of(this), quantity_of(other)) {
        return Ok(a.cmp(&b));
    }
    if let (Some(a), Some(b)) = (semver_of(this), semver_of(other)) {
        return Ok(a.compare(b));
    }
    Err(no_overload(
        ftx,
        &format!("{}, {}", type_name(this), type_name(other)),
    ))
}

fn compare_to(
    ftx: &FunctionContext,
    This(this): This<Value>,
    other: Value,
) -> Result<i64, ExecutionError> {
    Ok(ordering(ftx, &this, &other)? as i64)
}

fn is_greater_than(
    ftx: &FunctionContext,
    This(this): This<Value>,
    other: Value,
) -> Result<bool, ExecutionError> {
    Ok(ordering(ftx, &this, &other)?.is_gt())
}

fn is_less_than(
    ftx: &FunctionContext,
    This(this): This<Value>,
    other: Value,
) -> Result<bool, ExecutionError> {
    Ok(ordering(ftx, &this, &other)?.is_lt())
}

const NANO: i128 = 1_000_000_000;

fn arith(
    ftx: &FunctionContext,
    this: &Value,
    other: &Value,
    sign: i128,
) -> Result<Value, ExecutionError> {
    let a = quantity_of(this).ok_or_else(|| no_overload(ftx, type_name(this)))?;
    let b = match other {
        Value::Int(i) => Quantity(i128::from(*i) * NANO),
        v => quantity_of(v).ok_or_else(|| no_overload(ftx, type_name(v)))?,
    };
    let sum =
        a.0.checked_add(sign * b.0)
            .ok_or_else(|| ftx.error("quantity overflow"))?;
    Ok(Value::Opaque(Arc::new(QuantityValue(Quantity(sum)))))
}

fn add(
    ftx: &FunctionContext,
    This(this): This<Value>,
    other: Value,
) -> Result<Value, ExecutionError> {
    arith(ftx, &this, &other, 1)
}

fn sub(
    ftx: &FunctionContext,
    This(this): This<Value>,
    other: Value,
) -> Result<Value, ExecutionError> {
    arith(ftx, &this, &other, -1)
}

fn this_quantity(ftx: &FunctionContext, this: &Value) -> Result<Quantity, ExecutionError> {
    quantity_of(this).ok_or_else(|| no_overload(ftx, type_name(this)))
}

fn is_integer(ftx: &FunctionContext, This(this): This<Value>) -> Result<bool, ExecutionError> {
    let q = this_quantity(ftx, &this)?;
    Ok(q.0 % NANO == 0 && i64::try_from(q.0 / NANO).is_ok())
}

fn as_integer(ftx: &FunctionContext, This(this): This<Value>) -> Result<i64, ExecutionError> {
    let q = this_quantity(ftx, &this)?;
    if q.0 % NANO != 0 {
        return Err(ftx.error("cannot convert value to integer"));
    }
    i64::try_from(q.0 / NANO).map_err(|_| ftx.error("cannot convert value to integer"))
}

fn as_approximate_float(
    ftx: &FunctionContext,
    This(this): This<Value>,
) -> Result<f64, ExecutionError> {
    let q = this_quantity(ftx, &this)?;
    Ok(q.0 as f64 / NANO as f64)
}

fn sign(ftx: &FunctionContext, This(this): This<Value>) -> Result<i64, ExecutionError> {
    let q = this_quantity(ftx, &this)?;
    Ok(q.0.signum() as i64)
}

fn this_semver<'a>(ftx: &FunctionContext, this: &'a Value) -> Result<&'a Semver, ExecutionError> {
    semver_of(this).ok_or_else(|| no_overload(ftx, type_name(this)))
}

fn clamp(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn major(ftx: &FunctionContext, This(this): This<Value>) -> Result<i64, ExecutionError> {
    Ok(clamp(this_semver(ftx, &this)?.major))
}

fn minor(ftx: &FunctionContext, This(this): This<Value>) -> Result<i64, ExecutionError> {
    Ok(clamp(this_semver(ftx, &this)?.minor))
}

fn patch(ftx: &FunctionContext, This(this): This<Value>) -> Result<i64, ExecutionError> {
    Ok(clamp(this_semver(ftx, &this)?.patch))
}

// ---------------------------------------------------------------------------------
// String extensions (cel-go's `ext.Strings`, the version Kubernetes enables):
// indexes count code points, as cel-go's do.

fn text(s: String) -> Value {
    Value::String(Arc::new(s))
}

fn chars_of(s: &str) -> Vec<char> {
    s.chars().collect()
}

fn int_arg(ftx: &FunctionContext, v: Option<&Value>) -> Result<Option<i64>, ExecutionError> {
    match v {
        None => Ok(None),
        Some(Value::Int(i)) => Ok(Some(*i)),
        Some(other) => Err(no_overload(ftx, type_name(other))),
    }
}

fn str_arg(ftx: &FunctionContext, v: Option<&Value>) -> Result<Arc<String>, ExecutionError> {
    match v {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(no_overload(ftx, type_name(other))),
        None => Err(no_overload(ftx, "")),
    }
}

fn index_in(ftx: &FunctionContext, i: i64, len: usize) -> Result<usize, ExecutionError> {
    usize::try_from(i)
        .ok()
        .filter(|&i| i <= len)
        .ok_or_else(|| ftx.error(format!("index out of range: {i}")))
}

fn lower_ascii(This(this): This<Arc<String>>) -> String {
    this.to_ascii_lowercase()
}

fn upper_ascii(This(this): This<Arc<String>>) -> String {
    this.to_ascii_uppercase()
}

fn trim(This(this): This<Arc<String>>) -> String {
    this.trim().to_string()
}

fn char_at(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    i: i64,
) -> Result<Value, ExecutionError> {
    let chars = chars_of(&this);
    let i = index_in(ftx, i, chars.len())?;
    Ok(text(
        chars.get(i).map(|c| c.to_string()).unwrap_or_default(),
    ))
}

/// Code-point index of `sub` in `hay` at or after `from`.
fn find_from(hay: &[char], sub: &[char], from: usize) -> Option<usize> {
    if sub.is_empty() {
        return Some(from);
    }
    (from..=hay.len().saturating_sub(sub.len())).find(|&i| hay[i..].starts_with(sub))
}

fn index_of(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<i64, ExecutionError> {
    let sub = chars_of(&str_arg(ftx, args.first())?);
    let hay = chars_of(&this);
    let from = index_in(ftx, int_arg(ftx, args.get(1))?.unwrap_or(0), hay.len())?;
    Ok(find_from(&hay, &sub, from).map_or(-1, |i| i as i64))
}

fn last_index_of(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<i64, ExecutionError> {
    let sub = chars_of(&str_arg(ftx, args.first())?);
    let hay = chars_of(&this);
    let last = match int_arg(ftx, args.get(1))? {
        Some(i) => index_in(ftx, i, hay.len())?,
        None => hay.len(),
    };
    if sub.is_empty() {
        return Ok(last as i64);
    }
    let start_max = last.min(hay.len().saturating_sub(sub.len()));
    if sub.len() > hay.len() {
        return Ok(-1);
    }
    Ok((0..=start_max)
        .rev()
        .find(|&i| hay[i..].starts_with(&sub))
        .map_or(-1, |i| i as i64))
}

fn replace(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<Value, ExecutionError> {
    let old = str_arg(ftx, args.first())?;
    let new = str_arg(ftx, args.get(1))?;
    let limit = match int_arg(ftx, args.get(2))? {
        Some(n) if n >= 0 => n as usize,
        _ => usize::MAX,
    };
    // The result's size first: one replacement may multiply it (`''` matches
    // between every two characters).
    let found = if old.is_empty() {
        this.chars().count() + 1
    } else {
        this.matches(old.as_str()).count()
    }
    .min(limit);
    let grown = (found as u64).saturating_mul(new.len() as u64);
    let shrunk = (found as u64).saturating_mul(old.len() as u64);
    eval::afford((this.len() as u64 + grown).saturating_sub(shrunk), 0)?;
    Ok(text(this.replacen(old.as_str(), &new, limit)))
}

fn split(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<Value, ExecutionError> {
    let sep = str_arg(ftx, args.first())?;
    let pieces = if sep.is_empty() {
        this.chars().count()
    } else {
        this.matches(sep.as_str()).count() + 1
    };
    eval::afford(this.len() as u64, pieces as u64)?;
    let parts: Vec<String> = match int_arg(ftx, args.get(1))? {
        Some(0) => Vec::new(),
        Some(n) if n > 0 => {
            let n = n as usize;
            if sep.is_empty() {
                // Go's SplitN on "": code points, the last one holding the rest.
                let chars = chars_of(&this);
                let mut v: Vec<String> = chars.iter().take(n - 1).map(|c| c.to_string()).collect();
                if chars.len() >= n {
                    v.push(chars[n - 1..].iter().collect());
                }
                v
            } else {
                this.splitn(n, sep.as_str()).map(str::to_string).collect()
            }
        }
        _ if sep.is_empty() => this.chars().map(|c| c.to_string()).collect(),
        _ => this.split(sep.as_str()).map(str::to_string).collect(),
    };
    Ok(Value::List(Arc::new(
        parts
            .into_iter()
            .map(|p| Value::String(Arc::new(p)))
            .collect(),
    )))
}

fn substring(
    ftx: &FunctionContext,
    This(this): This<Arc<String>>,
    Arguments(args): Arguments,
) -> Result<Value, ExecutionError> {
    let chars = chars_of(&this);
    let start = int_arg(ftx, args.first())?.ok_or_else(|| no_overload(ftx, ""))?;
    let start = index_in(ftx, start, chars.len())?;
    let end = match int_arg(ftx, args.get(1))? {
        Some(e) => index_in(ftx, e, chars.len())?,
        None => chars.len(),
    };
    if start > end {
        return Err(ftx.error(format!(
            "invalid substring range. start: {start}, end: {end}"
        )));
    }
    Ok(text(chars[start..end].iter().collect()))
}

fn join(
    ftx: &FunctionContext,
    This(this): This<Value>,
    Arguments(args): Arguments,
) -> Result<Value, ExecutionError> {
    let sep = match args.first() {
        None => Arc::new(String::new()),
        v => str_arg(ftx, v)?,
    };
    let Value::List(items) = this else {
        return Err(no_overload(ftx, type_name(&this)));
    };
    let text_len: usize = items
        .iter()
        .map(|v| match v {
            Value::String(s) => s.len(),
            _ => 0,
        })
        .sum();
    let seps = (items.len().saturating_sub(1) as u64).saturating_mul(sep.len() as u64);
    eval::afford((text_len as u64).saturating_add(seps), 0)?;
    let parts: Result<Vec<&str>, ExecutionError> = items
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.as_str()),
            other => Err(no_overload(ftx, type_name(other))),
        })
        .collect();
    Ok(text(parts?.join(&sep)))
}

thread_local! {
    /// The standard library plus the Kubernetes functions, built once per thread:
    /// each evaluation only adds `device` in an inner scope.
    static BASE_CONTEXT: Result<Context<'static, 'static>, String> = base_context();
}

fn base_context() -> Result<Context<'static, 'static>, String> {
    let mut ctx = Context::default();
    let err = |e: cel::DeclarationError| e.to_string();
    ctx.add_function("quantity", quantity).map_err(err)?;
    ctx.add_function("lowerAscii", lower_ascii).map_err(err)?;
    ctx.add_function("upperAscii", upper_ascii).map_err(err)?;
    ctx.add_function("trim", trim).map_err(err)?;
    ctx.add_function("charAt", char_at).map_err(err)?;
    ctx.add_function("indexOf", index_of).map_err(err)?;
    ctx.add_function("lastIndexOf", last_index_of)
        .map_err(err)?;
    ctx.add_function("replace", replace).map_err(err)?;
    ctx.add_function("split", split).map_err(err)?;
    ctx.add_function("substring", substring).map_err(err)?;
    ctx.add_function("join", join).map_err(err)?;
    ctx.add_function("isQuantity", is_quantity).map_err(err)?;
    ctx.add_function("semver", semver).map_err(err)?;
    ctx.add_function("isSemver", is_semver).map_err(err)?;
    ctx.add_function("compareTo", compare_to).map_err(err)?;
    ctx.add_function("isGreaterThan", is_greater_than)
        .map_err(err)?;
    ctx.add_function("isLessThan", is_less_than).map_err(err)?;
    ctx.add_function("add", add).map_err(err)?;
    ctx.add_function("sub", sub).map_err(err)?;
    ctx.add_function("isInteger", is_integer).map_err(err)?;
    ctx.add_function("asInteger", as_integer).map_err(err)?;
    ctx.add_function("asApproximateFloat", as_approximate_float)
        .map_err(err)?;
    ctx.add_function("sign", sign).map_err(err)?;
    ctx.add_function("major", major).map_err(err)?;
    ctx.add_function("minor", minor).map_err(err)?;
    ctx.add_function("patch", patch).map_err(err)?;
    Ok(ctx)
}

#[cfg(test)]
mod cost_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

    /// cel-go's string extensions, on the examples of its documentation.
    #[test]
    fn string_extensions() {
        let attrs = attrs();
        let view = DeviceView {
            driver: "gpu.example.com",
            attributes: Some(&attrs),
            capacity: None,
        };
        let ok = |e: &str| {
            let s = compile(e).unwrap_or_else(|err| panic!("{e}: {err}"));
            evaluate(&s, &view).unwrap_or_else(|err| panic!("{e}: {err}"))
        };
        for e in [
            r#"'hello'.charAt(4) == 'o'"#,
            r#"'hello'.charAt(5) == ''"#,
            r#"'hello mellow'.indexOf('') == 0"#,
            r#"'hello mellow'.indexOf('ello') == 1"#,
            r#"'hello mellow'.indexOf('jello') == -1"#,
            r#"'hello mellow'.indexOf('', 2) == 2"#,
            r#"'hello mellow'.indexOf('ello', 2) == 7"#,
            r#"'hello mellow'.lastIndexOf('') == 12"#,
            r#"'hello mellow'.lastIndexOf('ello') == 7"#,
            r#"'hello mellow'.lastIndexOf('jello') == -1"#,
            r#"'hello mellow'.lastIndexOf('ello', 6) == 1"#,
            r#"'TacoCat'.lowerAscii() == 'tacocat'"#,
            r#"'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'"#,
            r#"'TacoCat'.upperAscii() == 'TACOCAT'"#,
            r#"'hello hello'.replace('he', 'we') == 'wello wello'"#,
            r#"'hello hello'.replace('he', 'we', 1) == 'wello hello'"#,
            r#"'hello hello'.replace('he', 'we', 0) == 'hello hello'"#,
            r#"'hello hello'.split(' ') == ['hello', 'hello']"#,
            r#"'hello hello hello'.split(' ', 2) == ['hello', 'hello hello']"#,
            r#"'hello hello hello'.split(' ', 0) == []"#,
            r#"'tacocat'.substring(4) == 'cat'"#,
            r#"'tacocat'.substring(0, 4) == 'taco'"#,
            r#"'  \ttrim\n    '.trim() == 'trim'"#,
            r#"['hello', 'mellow'].join() == 'hellomellow'"#,
            r#"['hello', 'mellow'].join(' ') == 'hello mellow'"#,
            r#"device.attributes["gpu.example.com"].model.upperAscii() == "A100""#,
        ] {
            assert!(ok(e), "{e}");
        }
        for (e, want) in [
            ("'hello'.charAt(6) == ''", "index out of range: 6"),
            ("'tacocat'.substring(40) == ''", "index out of range: 40"),
            (
                "'tacocat'.substring(4, 2) == ''",
                "invalid substring range. start: 4, end: 2",
            ),
        ] {
            let s = compile(e).unwrap();
            let err = evaluate(&s, &view).unwrap_err();
            assert!(err.contains(want), "{e}: {err}");
        }
    }

    /// The fast path answers exactly as the interpreter, and leaves to it what it
    /// cannot answer the same way (missing attributes, other types, other forms).
    #[test]
    fn fast_path_agrees_with_the_interpreter() {
        let attr = |s: Option<&str>, i: Option<i64>| DeviceAttribute {
            string: s.map(str::to_string),
            int: i,
            ..Default::default()
        };
        let mut devices: Vec<(String, BTreeMap<String, DeviceAttribute>)> = Vec::new();
        for driver in ["gpu.example.com", "nic.example.com"] {
            let mut m = BTreeMap::new();
            m.insert("model".to_string(), attr(Some("a100"), None));
            m.insert(
                "gpu.example.com/family".to_string(),
                attr(Some("ampere"), None),
            );
            m.insert("index".to_string(), attr(None, Some(3)));
            devices.push((driver.to_string(), m));
            devices.push((driver.to_string(), BTreeMap::new()));
        }
        let exprs = [
            r#"device.driver == "gpu.example.com""#,
            r#"device.driver=="nic.example.com""#,
            r#"device.attributes["gpu.example.com"].model == "a100""#,
            r#"device.attributes["gpu.example.com"].model == "t4""#,
            r#"device.attributes["gpu.example.com"].family == "ampere""#,
            r#"device.attributes["nic.example.com"].model == "a100""#,
            r#"device.attributes["gpu.example.com"].index == "3""#,
            r#"device.attributes["gpu.example.com"].missing == "x""#,
            r#"device.driver == "a\"b""#,
        ];
        let mut fast_answers = 0;
        for e in exprs {
            let fast = compile(e).unwrap();
            let mut slow = compile(e).unwrap();
            slow.fast = None;
            for (driver, attributes) in &devices {
                let view = DeviceView {
                    driver,
                    attributes: Some(attributes),
                    capacity: None,
                };
                assert_eq!(
                    evaluate(&fast, &view),
                    evaluate(&slow, &view),
                    "{e} on {driver} {attributes:?}"
                );
                fast_answers +=
                    usize::from(fast.fast.as_ref().and_then(|f| f.eval(&view)).is_some());
            }
        }
        assert!(
            fast_answers > 10,
            "the fast path answered {fast_answers} times"
        );
        assert_eq!(Fast::parse(r#"device.driver == "x" && true"#), None);
        assert_eq!(Fast::parse(r#"device.attributes["d"].a.b == "x""#), None);
    }

    fn attrs() -> BTreeMap<String, DeviceAttribute> {
        let mut m = BTreeMap::new();
        m.insert(
            "model".into(),
            DeviceAttribute {
                string: Some("a100".into()),
                ..Default::default()
            },
        );
        m.insert(
            "driverVersion".into(),
            DeviceAttribute {
                version: Some("1.2.3".into()),
                ..Default::default()
            },
        );
        m.insert(
            "resource.kubernetes.io/pcieRoot".into(),
            DeviceAttribute {
                string: Some("pci0".into()),
                ..Default::default()
            },
        );
        m.insert(
            "cores".into(),
            DeviceAttribute {
                int: Some(8),
                ..Default::default()
            },
        );
        m
    }

    fn caps() -> BTreeMap<String, DeviceCapacity> {
        let mut m = BTreeMap::new();
        m.insert(
            "memory".into(),
            DeviceCapacity {
                value: K8sQuantity("40Gi".into()),
                ..Default::default()
            },
        );
        m
    }

    fn eval(expr: &str) -> Result<bool, String> {
        let a = attrs();
        let c = caps();
        let dev = DeviceView {
            driver: "gpu.example.com",
            attributes: Some(&a),
            capacity: Some(&c),
        };
        evaluate(&compile(expr)?, &dev)
    }

    #[test]
    fn driver_attributes_and_domains() {
        assert_eq!(eval(r#"device.driver == "gpu.example.com""#), Ok(true));
        assert_eq!(
            eval(r#"device.attributes["gpu.example.com"].model == "a100""#),
            Ok(true)
        );
        assert_eq!(
            eval(r#"device.attributes["resource.kubernetes.io"].pcieRoot == "pci0""#),
            Ok(true)
        );
        assert_eq!(
            eval(r#"device.attributes["gpu.example.com"].cores > 4"#),
            Ok(true)
        );
        // An unknown domain is an empty map; has() and `in` test keys.
        assert_eq!(
            eval(r#"!has(device.attributes["other.io"].model)"#),
            Ok(true)
        );
        assert_eq!(
            eval(r#""model" in device.attributes["gpu.example.com"]"#),
            Ok(true)
        );
    }

    #[test]
    fn quantity_functions() {
        assert_eq!(
            eval(r#"device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0"#),
            Ok(true)
        );
        assert_eq!(
            eval(r#"device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))"#),
            Ok(false)
        );
        assert_eq!(
            eval(r#"device.capacity["gpu.example.com"].memory.isLessThan(quantity("80Gi"))"#),
            Ok(true)
        );
        assert_eq!(eval(r#"quantity("1").add(2).asInteger() == 3"#), Ok(true));
        assert_eq!(
            eval(r#"quantity("1").sub(quantity("1500m")).sign() == -1"#),
            Ok(true)
        );
        assert_eq!(eval(r#"quantity("500m").isInteger()"#), Ok(false));
        assert_eq!(
            eval(r#"quantity("1.5").asApproximateFloat() == 1.5"#),
            Ok(true)
        );
        assert_eq!(eval(r#"isQuantity("1Gi") && !isQuantity("x")"#), Ok(true));
        assert_eq!(eval(r#"quantity("1") == quantity("1000m")"#), Ok(true));
        assert!(eval(r#"quantity("500m").asInteger() == 0"#).is_err());
        assert!(eval(r#"quantity("bad") == quantity("1")"#).is_err());
    }

    #[test]
    fn semver_functions() {
        assert_eq!(
            eval(
                r#"device.attributes["gpu.example.com"].driverVersion.compareTo(semver("1.2.0")) >= 0"#
            ),
            Ok(true)
        );
        assert_eq!(
            eval(
                r#"device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.10.0"))"#
            ),
            Ok(true)
        );
        assert_eq!(
            eval(
                r#"semver("1.2.3").major() == 1 && semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3"#
            ),
            Ok(true)
        );
        assert_eq!(eval(r#"semver("v1.2", true).minor() == 2"#), Ok(true));
        assert_eq!(
            eval(r#"isSemver("1.2.3") && !isSemver("1.2") && isSemver("1.2", true)"#),
            Ok(true)
        );
        assert_eq!(
            eval(r#"semver("1.2.3").isGreaterThan(semver("1.2.3-rc.1"))"#),
            Ok(true)
        );
    }

    #[test]
    fn errors() {
        assert_eq!(
            eval(r#"device.attributes["gpu.example.com"].missing == "x""#),
            Err("no such key: missing".into())
        );
        assert_eq!(
            eval(r#"device.attributes["other.io"].model == "x""#),
            Err("no such key: model".into())
        );
        assert!(compile("device.driver ==").is_err());
        assert!(
            eval(r#"device.driver"#)
                .unwrap_err()
                .contains("must evaluate to bool")
        );
        assert!(compile(&"a".repeat(MAX_EXPRESSION_LENGTH + 1)).is_err());
        // Multi-byte text is scanned by bytes: no slicing inside a character.
        assert_eq!(
            eval(
                r#"device.attributes["gpu.example.com"].model != "ä100" && ["é"].all(x, x != "a")"#
            ),
            Ok(true)
        );
        // Nesting is bounded by what an evaluation spends, not by its shape: the
        // scheduler evaluates this one (v1.35.4 oracle).
        let nested = "[1,2].all(a, [1,2].all(b, [1,2].all(c, [1,2].all(d, true))))";
        assert_eq!(eval(nested), Ok(true));
        // Comparing unrelated kinds is an error, never a panic.
        assert!(eval(r#"quantity("1").compareTo(semver("1.0.0")) == 0"#).is_err());
    }
}

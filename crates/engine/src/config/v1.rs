//! The external `kubescheduler.config.k8s.io/v1` types (upstream:
//! staging/src/k8s.io/kube-scheduler/config/v1/types.go), decoded strictly from a JSON
//! value: unknown fields, duplicate keys and wrong types are errors naming the field,
//! as kube-scheduler's strict, case-sensitive decoder treats them.

use serde_json::{Map, Value};

pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
pub const KIND: &str = "KubeSchedulerConfiguration";

/// A field that could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Field path, e.g. `profiles[0].plugins.score.enabled[1].weight`.
    pub field: String,
    pub message: String,
}

type Result<T> = std::result::Result<T, DecodeError>;

fn err(field: &str, message: impl Into<String>) -> DecodeError {
    DecodeError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// `Plugin`: a name and an optional weight (`*int32`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginRef {
    pub name: String,
    pub weight: Option<i32>,
}

impl PluginRef {
    pub fn new(name: &str, weight: Option<i32>) -> Self {
        PluginRef {
            name: name.to_string(),
            weight,
        }
    }
}

/// `PluginSet`: enabled and disabled plugins of one extension point.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PluginSet {
    pub enabled: Vec<PluginRef>,
    pub disabled: Vec<PluginRef>,
}

/// `Plugins`: the plugin sets of every extension point plus `multiPoint`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plugins {
    pub pre_enqueue: PluginSet,
    pub queue_sort: PluginSet,
    pub pre_filter: PluginSet,
    pub filter: PluginSet,
    pub post_filter: PluginSet,
    pub pre_score: PluginSet,
    pub score: PluginSet,
    pub reserve: PluginSet,
    pub permit: PluginSet,
    pub pre_bind: PluginSet,
    pub bind: PluginSet,
    pub post_bind: PluginSet,
    pub multi_point: PluginSet,
}

/// `PluginConfig`: `args` is kept as given (`None` when absent or null).
#[derive(Clone, Debug, PartialEq)]
pub struct PluginConfig {
    pub name: String,
    pub args: Option<Value>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Profile {
    pub scheduler_name: Option<String>,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub plugins: Option<Plugins>,
    pub plugin_config: Vec<PluginConfig>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ManagedResource {
    pub name: String,
    pub ignored_by_scheduler: bool,
}

/// A scheduler extender. schedscope cannot call one; it is validated and reported.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extender {
    pub url_prefix: String,
    pub filter_verb: String,
    pub preempt_verb: String,
    pub prioritize_verb: String,
    pub weight: i64,
    pub bind_verb: String,
    pub enable_https: bool,
    /// Nanoseconds.
    pub http_timeout: i64,
    pub node_cache_capable: bool,
    pub managed_resources: Vec<ManagedResource>,
    pub ignorable: bool,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderElection {
    pub leader_elect: Option<bool>,
    /// Nanoseconds; `None` or 0 = default.
    pub lease_duration: Option<i64>,
    pub renew_deadline: Option<i64>,
    pub retry_period: Option<i64>,
    pub resource_lock: String,
    pub resource_name: String,
    pub resource_namespace: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientConnection {
    pub kubeconfig: String,
    pub accept_content_types: String,
    pub content_type: String,
    pub qps: f64,
    pub burst: i32,
}

/// `KubeSchedulerConfiguration` as written (pointers = `Option`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KubeSchedulerConfiguration {
    pub api_version: String,
    pub parallelism: Option<i32>,
    pub leader_election: LeaderElection,
    pub client_connection: ClientConnection,
    pub enable_profiling: Option<bool>,
    pub enable_contention_profiling: Option<bool>,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub pod_initial_backoff_seconds: Option<i64>,
    pub pod_max_backoff_seconds: Option<i64>,
    pub profiles: Vec<Profile>,
    pub extenders: Vec<Extender>,
    pub delay_cache_until_active: bool,
}

/// Field path of a child: `a.b`, or `b` at the root.
pub fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

pub fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// The fields of one object; reading marks a field known, [`Fields::finish`]
/// rejects the rest.
struct Fields<'a> {
    map: Option<&'a Map<String, Value>>,
    path: String,
    known: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    fn new(v: &'a Value, path: &str) -> Result<Self> {
        let map = match v {
            Value::Object(m) => Some(m),
            Value::Null => None,
            other => {
                return Err(err(
                    path,
                    format!("expected an object, got {}", describe(other)),
                ));
            }
        };
        Ok(Fields {
            map,
            path: path.to_string(),
            known: Vec::new(),
        })
    }

    fn path(&self, key: &str) -> String {
        child(&self.path, key)
    }

    /// The value of `key`; null counts as absent, as for Go pointers and slices.
    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.known.push(key);
        match self.map?.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    fn opt<T>(
        &mut self,
        key: &'static str,
        f: impl FnOnce(&'a Value, &str) -> Result<T>,
    ) -> Result<Option<T>> {
        let p = self.path(key);
        self.get(key).map(|v| f(v, &p)).transpose()
    }

    fn string(&mut self, key: &'static str) -> Result<String> {
        Ok(self.opt(key, as_string)?.unwrap_or_default())
    }

    fn boolean(&mut self, key: &'static str) -> Result<bool> {
        Ok(self.opt(key, as_bool)?.unwrap_or(false))
    }

    fn list<T>(
        &mut self,
        key: &'static str,
        mut f: impl FnMut(&'a Value, &str) -> Result<T>,
    ) -> Result<Vec<T>> {
        let p = self.path(key);
        let Some(v) = self.get(key) else {
            return Ok(Vec::new());
        };
        let Value::Array(items) = v else {
            return Err(err(&p, format!("expected a list, got {}", describe(v))));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| f(item, &index(&p, i)))
            .collect()
    }

    /// Fails on the first field that was not read, suggesting the closest known one.
    fn finish(self) -> Result<()> {
        let Some(map) = self.map else { return Ok(()) };
        for key in map.keys() {
            if self.known.iter().any(|k| k == key) {
                continue;
            }
            let mut msg = "unknown field".to_string();
            if let Some(near) = closest(key, &self.known) {
                msg.push_str(&format!(" (did you mean {near:?}?)"));
            }
            return Err(err(&child(&self.path, key), msg));
        }
        Ok(())
    }
}

/// The known field nearest to `key` (case-insensitive equality or edit distance ≤ 2).
fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let lower = key.to_ascii_lowercase();
    known
        .iter()
        .map(|k| {
            let d = if k.to_ascii_lowercase() == lower {
                0
            } else {
                edit_distance(&lower, &k.to_ascii_lowercase())
            };
            (d, *k)
        })
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "a list".into(),
        Value::Object(_) => "an object".into(),
    }
}

fn as_string(v: &Value, path: &str) -> Result<String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        other => Err(err(
            path,
            format!("expected a string, got {}", describe(other)),
        )),
    }
}

fn as_bool(v: &Value, path: &str) -> Result<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => Err(err(
            path,
            format!("expected true or false, got {}", describe(other)),
        )),
    }
}

fn as_i64(v: &Value, path: &str) -> Result<i64> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .ok_or_else(|| err(path, format!("expected an integer (int64), got number {n}"))),
        other => Err(err(
            path,
            format!("expected an integer, got {}", describe(other)),
        )),
    }
}

fn as_i32(v: &Value, path: &str) -> Result<i32> {
    let n = as_i64(v, path)?;
    i32::try_from(n).map_err(|_| err(path, format!("{n} does not fit in an int32")))
}

fn as_f64(v: &Value, path: &str) -> Result<f64> {
    match v {
        Value::Number(n) => n
            .as_f64()
            .ok_or_else(|| err(path, format!("expected a number, got {n}"))),
        other => Err(err(
            path,
            format!("expected a number, got {}", describe(other)),
        )),
    }
}

/// A Go `metav1.Duration` (`"1m30s"`), in nanoseconds.
fn as_duration(v: &Value, path: &str) -> Result<i64> {
    let s = as_string(v, path)?;
    parse_go_duration(&s).ok_or_else(|| {
        err(
            path,
            format!("invalid duration {s:?} (expected e.g. \"15s\", \"1m30s\")"),
        )
    })
}

/// Parses Go's `time.ParseDuration` syntax: `[-+]?(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+` or `0`.
pub fn parse_go_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return None;
        }
        let n: f64 = rest[..num_len].parse().ok()?;
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        total += n * scale;
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let ns = total.round() as i64;
    Some(if neg { -ns } else { ns })
}

/// Go's `time.Duration.String()`: `1m30s`, `1.5s`, `500ms`, `0s`.
pub fn format_go_duration(ns: i64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let neg = ns < 0;
    let u = ns.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        // Sub-second: a single unit with a fraction.
        let (unit, div) = if u < 1_000 {
            ("ns", 1u64)
        } else if u < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        out.push_str(&frac(u, div));
        out.push_str(unit);
    } else {
        let h = u / 3_600_000_000_000;
        let rem = u % 3_600_000_000_000;
        let m = rem / 60_000_000_000;
        let s_ns = rem % 60_000_000_000;
        if h > 0 {
            out.push_str(&format!("{h}h"));
        }
        if h > 0 || m > 0 {
            out.push_str(&format!("{m}m"));
        }
        out.push_str(&frac(s_ns, 1_000_000_000));
        out.push('s');
    }
    if neg {
        out.insert(0, '-');
    }
    out
}

/// `v / div` with the fraction's trailing zeros dropped.
fn frac(v: u64, div: u64) -> String {
    let whole = v / div;
    let rest = v % div;
    if rest == 0 {
        return whole.to_string();
    }
    let width = div.to_string().len() - 1;
    let digits = format!("{rest:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

fn plugin_ref(v: &Value, path: &str) -> Result<PluginRef> {
    let mut f = Fields::new(v, path)?;
    let name = f.string("name")?;
    let weight = f.opt("weight", as_i32)?;
    f.finish()?;
    Ok(PluginRef { name, weight })
}

fn plugin_set(v: &Value, path: &str) -> Result<PluginSet> {
    let mut f = Fields::new(v, path)?;
    let enabled = f.list("enabled", plugin_ref)?;
    let disabled = f.list("disabled", plugin_ref)?;
    f.finish()?;
    Ok(PluginSet { enabled, disabled })
}

fn plugins(v: &Value, path: &str) -> Result<Plugins> {
    let mut f = Fields::new(v, path)?;
    let mut set = |key| -> Result<PluginSet> { Ok(f.opt(key, plugin_set)?.unwrap_or_default()) };
    let out = Plugins {
        pre_enqueue: set("preEnqueue")?,
        queue_sort: set("queueSort")?,
        pre_filter: set("preFilter")?,
        filter: set("filter")?,
        post_filter: set("postFilter")?,
        pre_score: set("preScore")?,
        score: set("score")?,
        reserve: set("reserve")?,
        permit: set("permit")?,
        pre_bind: set("preBind")?,
        bind: set("bind")?,
        post_bind: set("postBind")?,
        multi_point: set("multiPoint")?,
    };
    f.finish()?;
    Ok(out)
}

fn plugin_config(v: &Value, path: &str) -> Result<PluginConfig> {
    let mut f = Fields::new(v, path)?;
    let name = f.string("name")?;
    let args = f.get("args").cloned();
    f.finish()?;
    Ok(PluginConfig { name, args })
}

fn profile(v: &Value, path: &str) -> Result<Profile> {
    let mut f = Fields::new(v, path)?;
    let out = Profile {
        scheduler_name: f.opt("schedulerName", as_string)?,
        percentage_of_nodes_to_score: f.opt("percentageOfNodesToScore", as_i32)?,
        plugins: f.opt("plugins", plugins)?,
        plugin_config: f.list("pluginConfig", plugin_config)?,
    };
    f.finish()?;
    Ok(out)
}

fn managed_resource(v: &Value, path: &str) -> Result<ManagedResource> {
    let mut f = Fields::new(v, path)?;
    let out = ManagedResource {
        name: f.string("name")?,
        ignored_by_scheduler: f.boolean("ignoredByScheduler")?,
    };
    f.finish()?;
    Ok(out)
}

fn tls_config(v: &Value, path: &str) -> Result<()> {
    let mut f = Fields::new(v, path)?;
    f.boolean("insecure")?;
    for key in [
        "serverName",
        "certFile",
        "keyFile",
        "caFile",
        "certData",
        "keyData",
        "caData",
    ] {
        f.string(key)?;
    }
    f.finish()
}

fn extender(v: &Value, path: &str) -> Result<Extender> {
    let mut f = Fields::new(v, path)?;
    let out = Extender {
        url_prefix: f.string("urlPrefix")?,
        filter_verb: f.string("filterVerb")?,
        preempt_verb: f.string("preemptVerb")?,
        prioritize_verb: f.string("prioritizeVerb")?,
        weight: f.opt("weight", as_i64)?.unwrap_or(0),
        bind_verb: f.string("bindVerb")?,
        enable_https: f.boolean("enableHTTPS")?,
        http_timeout: f.opt("httpTimeout", as_duration)?.unwrap_or(0),
        node_cache_capable: f.boolean("nodeCacheCapable")?,
        managed_resources: f.list("managedResources", managed_resource)?,
        ignorable: f.boolean("ignorable")?,
    };
    f.opt("tlsConfig", tls_config)?;
    f.finish()?;
    Ok(out)
}

fn leader_election(v: &Value, path: &str) -> Result<LeaderElection> {
    let mut f = Fields::new(v, path)?;
    let out = LeaderElection {
        leader_elect: f.opt("leaderElect", as_bool)?,
        lease_duration: f.opt("leaseDuration", as_duration)?,
        renew_deadline: f.opt("renewDeadline", as_duration)?,
        retry_period: f.opt("retryPeriod", as_duration)?,
        resource_lock: f.string("resourceLock")?,
        resource_name: f.string("resourceName")?,
        resource_namespace: f.string("resourceNamespace")?,
    };
    f.finish()?;
    Ok(out)
}

fn client_connection(v: &Value, path: &str) -> Result<ClientConnection> {
    let mut f = Fields::new(v, path)?;
    let out = ClientConnection {
        kubeconfig: f.string("kubeconfig")?,
        accept_content_types: f.string("acceptContentTypes")?,
        content_type: f.string("contentType")?,
        qps: f.opt("qps", as_f64)?.unwrap_or(0.0),
        burst: f.opt("burst", as_i32)?.unwrap_or(0),
    };
    f.finish()?;
    Ok(out)
}

/// Decodes a whole configuration; `apiVersion` and `kind` are read but checked by the
/// caller.
pub fn decode(v: &Value) -> Result<KubeSchedulerConfiguration> {
    let mut f = Fields::new(v, "")?;
    f.get("kind");
    let out = KubeSchedulerConfiguration {
        api_version: f.string("apiVersion")?,
        parallelism: f.opt("parallelism", as_i32)?,
        leader_election: f
            .opt("leaderElection", leader_election)?
            .unwrap_or_default(),
        client_connection: f
            .opt("clientConnection", client_connection)?
            .unwrap_or_default(),
        enable_profiling: f.opt("enableProfiling", as_bool)?,
        enable_contention_profiling: f.opt("enableContentionProfiling", as_bool)?,
        percentage_of_nodes_to_score: f.opt("percentageOfNodesToScore", as_i32)?,
        pod_initial_backoff_seconds: f.opt("podInitialBackoffSeconds", as_i64)?,
        pod_max_backoff_seconds: f.opt("podMaxBackoffSeconds", as_i64)?,
        profiles: f.list("profiles", profile)?,
        extenders: f.list("extenders", extender)?,
        delay_cache_until_active: f.boolean("delayCacheUntilActive")?,
    };
    f.finish()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decodes_profiles_and_plugin_sets() {
        let c = decode(&json!({
            "apiVersion": API_VERSION, "kind": KIND,
            "parallelism": 4,
            "profiles": [{
                "schedulerName": "a",
                "plugins": {"score": {"enabled": [{"name": "X", "weight": 3}], "disabled": [{"name": "*"}]}},
                "pluginConfig": [{"name": "X", "args": {"k": 1}}, {"name": "Y"}]
            }]
        }))
        .unwrap();
        assert_eq!(c.parallelism, Some(4));
        let p = &c.profiles[0];
        assert_eq!(p.scheduler_name.as_deref(), Some("a"));
        let pl = p.plugins.as_ref().unwrap();
        assert_eq!(pl.score.enabled, vec![PluginRef::new("X", Some(3))]);
        assert_eq!(pl.score.disabled, vec![PluginRef::new("*", None)]);
        assert_eq!(p.plugin_config[0].args, Some(json!({"k": 1})));
        assert_eq!(p.plugin_config[1].args, None);
    }

    #[test]
    fn errors_name_the_field() {
        let cases = [
            (
                json!({"profiles": [{"plugins": {"score": {"enabled": [{"name": "X", "weight": "3"}]}}}]}),
                "profiles[0].plugins.score.enabled[0].weight",
                "expected an integer, got string \"3\"",
            ),
            (
                json!({"profiles": [{"pluginz": {}}]}),
                "profiles[0].pluginz",
                "unknown field (did you mean \"plugins\"?)",
            ),
            (
                json!({"Parallelism": 3}),
                "Parallelism",
                "unknown field (did you mean \"parallelism\"?)",
            ),
            (
                json!({"parallelism": 3000000000u64}),
                "parallelism",
                "3000000000 does not fit in an int32",
            ),
            (
                json!({"profiles": {"a": 1}}),
                "profiles",
                "expected a list, got an object",
            ),
            (
                json!({"podMaxBackoffSeconds": 1.5}),
                "podMaxBackoffSeconds",
                "expected an integer (int64), got number 1.5",
            ),
            (
                json!({"leaderElection": {"leaseDuration": "15 seconds"}}),
                "leaderElection.leaseDuration",
                "invalid duration \"15 seconds\" (expected e.g. \"15s\", \"1m30s\")",
            ),
        ];
        for (v, field, msg) in cases {
            let e = decode(&v).unwrap_err();
            assert_eq!((e.field.as_str(), e.message.as_str()), (field, msg), "{v}");
        }
    }

    #[test]
    fn go_durations() {
        for (s, ns) in [
            ("15s", 15_000_000_000),
            ("1m30s", 90_000_000_000),
            ("1.5s", 1_500_000_000),
            ("500ms", 500_000_000),
            ("-5s", -5_000_000_000),
            ("0", 0),
            ("2h", 7_200_000_000_000),
        ] {
            assert_eq!(parse_go_duration(s), Some(ns), "{s}");
        }
        assert_eq!(parse_go_duration("5"), None);
        assert_eq!(parse_go_duration("s"), None);
        for (ns, s) in [
            (0, "0s"),
            (15_000_000_000, "15s"),
            (60_000_000_000, "1m0s"),
            (900_000_000_000, "15m0s"),
            (1_500_000_000, "1.5s"),
            (500_000_000, "500ms"),
            (-5_000_000_000, "-5s"),
            (3_723_000_000_000, "1h2m3s"),
        ] {
            assert_eq!(format_go_duration(ns), s);
        }
    }
}

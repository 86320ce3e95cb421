//! KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) as plain data (upstream:
//! pkg/scheduler/apis/config): parsing, defaults, merging with the default plugins,
//! validation. Building each profile's framework from it is the engine's
//! (`engine::profile`, whose `SchedulerConfig` is what runs), as upstream splits
//! `apis/config` from `profile` and `framework/runtime`.
//!
//! The pipeline follows kube-scheduler: strict decoding → defaulting (plugin sets
//! merged with the default MultiPoint set, default args appended to pluginConfig) →
//! validation (all errors at once) → (engine) one framework per profile.

pub mod defaults;
pub mod field;
pub mod points;
pub mod v1;
pub mod validation;

use std::path::PathBuf;

use serde_json::Value;

use crate::version::Features;

pub use points::{Args, ExtensionPoint, aggregate};
use v1::{Extender, KubeSchedulerConfiguration, PluginConfig, Plugins};

/// Where a configuration came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// kube-scheduler's defaults (no file).
    Defaults,
    /// A file (or, for text parsed without one, the origin name given).
    File(PathBuf),
}

/// Why a configuration could not be loaded. Every variant names its origin (the file).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{origin}: cannot read the file: {error}")]
    Io {
        origin: String,
        error: std::io::Error,
    },
    #[error("{origin}: not valid YAML/JSON: {message}")]
    Syntax { origin: String, message: String },
    #[error(
        "{origin}: apiVersion {api_version:?}, kind {kind:?} is not supported: expected kind {k:?}, apiVersion {v:?} (v1beta versions were removed from kube-scheduler)",
        k = v1::KIND,
        v = v1::API_VERSION
    )]
    UnsupportedVersion {
        origin: String,
        api_version: String,
        kind: String,
    },
    #[error("{origin}: {field}: {message}")]
    Decode {
        origin: String,
        field: String,
        message: String,
    },
    /// Validation failed; `errors` are upstream's messages, in upstream's order.
    #[error("{origin}: invalid configuration:\n  {}", .errors.join("\n  "))]
    Invalid { origin: String, errors: Vec<String> },
    /// A profile could not be built (`creating profile for scheduler name ...`) or
    /// profiles disagree on queue sort.
    #[error("{origin}: {message}")]
    Framework { origin: String, message: String },
}

impl ConfigError {
    /// The upstream message(s) without the origin.
    pub fn messages(&self) -> Vec<String> {
        match self {
            ConfigError::Invalid { errors, .. } => errors.clone(),
            ConfigError::Framework { message, .. } => vec![message.clone()],
            ConfigError::Decode { field, message, .. } => vec![format!("{field}: {message}")],
            ConfigError::Syntax { message, .. } => vec![message.clone()],
            ConfigError::Io { error, .. } => vec![error.to_string()],
            ConfigError::UnsupportedVersion {
                api_version, kind, ..
            } => vec![format!(
                "apiVersion {api_version:?}, kind {kind:?} is not supported"
            )],
        }
    }
}

/// Applies a plugin's args kind: its defaults over the user's args (`None` = no
/// pluginConfig entry), then its checks. `path` is the field path of the args object,
/// e.g. `profiles[0].pluginConfig[1].args`; errors are rendered with [`field`].
pub type DefaultArgs = fn(user: Option<&Value>, path: &str) -> Result<Value, Vec<String>>;

/// What defaulting needs to know of the plugins: which have an args kind, and its
/// defaults. The engine's plugin registry answers; the configuration does not know
/// the plugins themselves.
pub trait ArgsKinds {
    fn args_kind(&self, plugin: &str) -> Option<DefaultArgs>;
}

/// kube-scheduler v1.35's defaults (no file): one `default-scheduler` profile.
pub fn defaults(kinds: &dyn ArgsKinds) -> DefaultedConfig {
    defaults_at(kinds, Features::default())
}

/// The defaults of the release `fts` belongs to.
pub fn defaults_at(kinds: &dyn ArgsKinds, fts: Features) -> DefaultedConfig {
    let raw = KubeSchedulerConfiguration {
        api_version: v1::API_VERSION.into(),
        ..Default::default()
    };
    // The defaults are fixed data; failing them is a bug in a plugin's args
    // defaults, which the tests catch.
    defaulted(raw, "defaults", kinds, fts).expect("kube-scheduler's default configuration is valid")
}

/// Parses YAML or JSON text, applies v1.35's defaults and validates; `origin` names
/// the text in errors.
pub fn parse(
    text: &str,
    origin: &str,
    kinds: &dyn ArgsKinds,
) -> Result<DefaultedConfig, ConfigError> {
    parse_at(text, origin, kinds, Features::default())
}

/// [`parse`] with the defaults of the release `fts` belongs to.
pub fn parse_at(
    text: &str,
    origin: &str,
    kinds: &dyn ArgsKinds,
    fts: Features,
) -> Result<DefaultedConfig, ConfigError> {
    let value = parse_text(text, origin).map_err(|message| ConfigError::Syntax {
        origin: origin.to_string(),
        message,
    })?;
    let api_version = value.get("apiVersion").and_then(Value::as_str);
    let kind = value.get("kind").and_then(Value::as_str);
    if api_version != Some(v1::API_VERSION) || kind != Some(v1::KIND) {
        return Err(ConfigError::UnsupportedVersion {
            origin: origin.to_string(),
            api_version: api_version.unwrap_or_default().to_string(),
            kind: kind.unwrap_or_default().to_string(),
        });
    }
    let raw = v1::decode(&value).map_err(|e| ConfigError::Decode {
        origin: origin.to_string(),
        field: e.field,
        message: e.message,
    })?;
    defaulted(raw, origin, kinds, fts)
}

/// Defaulting, then validation (every error at once).
fn defaulted(
    raw: KubeSchedulerConfiguration,
    origin: &str,
    kinds: &dyn ArgsKinds,
    fts: Features,
) -> Result<DefaultedConfig, ConfigError> {
    let c = set_defaults(raw, kinds, fts);
    let errors = dedup(validation::validate(&c));
    if !errors.is_empty() {
        return Err(ConfigError::Invalid {
            origin: origin.to_string(),
            errors,
        });
    }
    Ok(c)
}

/// YAML (JSON is YAML too, but JSON text gets serde_json's clearer errors). Empty
/// documents are skipped, as kube-scheduler's decoder skips a trailing `---`; a second
/// document with content is an error rather than silently ignored.
fn parse_text(text: &str, origin: &str) -> Result<Value, String> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| e.to_string());
    }
    // The library's rendering starts with its own "error: " (the caller's message
    // already says it) and would name the source `<input>`.
    let render = |e: serde_saphyr::Error| {
        let rendered =
            e.render_with_options(serde_saphyr::render_options! { source_name: Some(origin) });
        match rendered.strip_prefix("error: ") {
            Some(rest) => rest.to_string(),
            None => rendered,
        }
    };
    crate::text::check_alias_expansion(text, serde_saphyr::Options::default()).map_err(render)?;
    let documents: Vec<Value> = serde_saphyr::from_multiple(text).map_err(render)?;
    let mut documents = documents.into_iter().filter(|d| !d.is_null());
    let first = documents.next().unwrap_or(Value::Null);
    if documents.next().is_some() {
        return Err(
            "holds more than one YAML document with content; a KubeSchedulerConfiguration file holds one"
                .into(),
        );
    }
    Ok(first)
}

/// One pluginConfig entry after defaulting.
#[derive(Clone, Debug)]
pub struct PluginConfigEntry {
    pub name: String,
    pub args: Args,
    /// Validation errors of this entry (duplicate, removed plugin, args).
    pub errors: Vec<String>,
}

impl PluginConfigEntry {
    pub(crate) fn comparable_args(&self) -> Option<&Value> {
        match &self.args {
            Args::Ready(Value::Null) | Args::Invalid(_) => None,
            Args::Ready(v) => Some(v),
        }
    }
}

#[derive(Clone, Debug)]
pub struct DefaultedProfile {
    /// Empty when not set (only a single profile gets the default name).
    pub name: String,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub plugins: Plugins,
    pub plugin_config: Vec<PluginConfigEntry>,
}

#[derive(Clone, Debug)]
pub struct LeaderElectionDefaults {
    pub leader_elect: bool,
    pub lease_duration: i64,
    pub renew_deadline: i64,
    pub retry_period: i64,
    pub resource_lock: String,
    pub resource_name: String,
    pub resource_namespace: String,
}

/// The configuration after `SetDefaults_KubeSchedulerConfiguration`.
#[derive(Clone, Debug)]
pub struct DefaultedConfig {
    pub api_version: String,
    pub parallelism: i32,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub pod_initial_backoff_seconds: i64,
    pub pod_max_backoff_seconds: i64,
    pub leader_election: LeaderElectionDefaults,
    pub client_connection: v1::ClientConnection,
    pub profiles: Vec<DefaultedProfile>,
    pub extenders: Vec<Extender>,
    /// The release whose defaults were applied.
    pub features: Features,
}

fn set_defaults(
    raw: KubeSchedulerConfiguration,
    kinds: &dyn ArgsKinds,
    fts: Features,
) -> DefaultedConfig {
    let mut profiles = raw.profiles;
    if profiles.is_empty() {
        profiles.push(v1::Profile::default());
    }
    if profiles.len() == 1 && profiles[0].scheduler_name.is_none() {
        profiles[0].scheduler_name = Some(defaults::DEFAULT_SCHEDULER_NAME.into());
    }
    let profiles = profiles
        .into_iter()
        .enumerate()
        .map(|(i, p)| default_profile(i, p, &raw.api_version, kinds, &fts))
        .collect();

    let le = &raw.leader_election;
    let nonzero = |v: Option<i64>, d: i64| v.filter(|&x| x != 0).unwrap_or(d);
    let or = |s: &str, d: &str| {
        if s.is_empty() {
            d.to_string()
        } else {
            s.to_string()
        }
    };
    DefaultedConfig {
        api_version: raw.api_version,
        parallelism: raw.parallelism.unwrap_or(defaults::DEFAULT_PARALLELISM),
        percentage_of_nodes_to_score: Some(
            raw.percentage_of_nodes_to_score
                .unwrap_or(defaults::DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE),
        ),
        pod_initial_backoff_seconds: raw
            .pod_initial_backoff_seconds
            .unwrap_or(defaults::DEFAULT_POD_INITIAL_BACKOFF_SECONDS),
        pod_max_backoff_seconds: raw
            .pod_max_backoff_seconds
            .unwrap_or(defaults::DEFAULT_POD_MAX_BACKOFF_SECONDS),
        leader_election: LeaderElectionDefaults {
            leader_elect: le.leader_elect.unwrap_or(true),
            lease_duration: nonzero(le.lease_duration, 15_000_000_000),
            renew_deadline: nonzero(le.renew_deadline, 10_000_000_000),
            retry_period: nonzero(le.retry_period, 2_000_000_000),
            resource_lock: or(&le.resource_lock, "leases"),
            resource_name: or(&le.resource_name, "kube-scheduler"),
            resource_namespace: or(&le.resource_namespace, "kube-system"),
        },
        client_connection: raw.client_connection,
        profiles,
        extenders: raw.extenders,
        features: fts,
    }
}

/// `setDefaults_KubeSchedulerProfile` plus the args work of `validatePluginConfig`:
/// merges the plugin sets, appends a default pluginConfig entry (sorted by name) for
/// every enabled plugin with an args kind that has none, and materialises the args.
fn default_profile(
    i: usize,
    p: v1::Profile,
    api_version: &str,
    kinds: &dyn ArgsKinds,
    fts: &Features,
) -> DefaultedProfile {
    let plugins = defaults::merge_plugins_at(p.plugins.as_ref(), fts);

    let mut configs: Vec<PluginConfig> = p.plugin_config;
    let mut enabled: Vec<&str> = ExtensionPoint::ALL
        .iter()
        .flat_map(|pt| pt.set(&plugins).enabled.iter())
        .chain(&plugins.multi_point.enabled)
        .map(|e| e.name.as_str())
        .collect();
    enabled.sort_unstable();
    enabled.dedup();
    let mut appended = Vec::new();
    for name in enabled {
        let has_kind = kinds.args_kind(name).is_some();
        if has_kind && !configs.iter().any(|c| c.name == name) {
            appended.push(PluginConfig {
                name: name.to_string(),
                args: None,
            });
        }
    }
    configs.extend(appended);

    let mut seen: Vec<&str> = Vec::new();
    let mut entries = Vec::with_capacity(configs.len());
    for (j, c) in configs.iter().enumerate() {
        let path = format!("profiles[{i}].pluginConfig[{j}]");
        let mut errors = Vec::new();
        if seen.contains(&c.name.as_str()) {
            errors.push(field::duplicate(&path, c.name.as_str()));
        } else {
            seen.push(&c.name);
        }
        let args = if validation::is_removed(&c.name) {
            errors.push(field::invalid(
                &path,
                c.name.as_str(),
                &validation::removed_message(api_version),
            ));
            Args::Ready(c.args.clone().unwrap_or(Value::Null))
        } else {
            let (args, errs) = resolve_args(&path, c, kinds);
            errors.extend(errs);
            args
        };
        entries.push(PluginConfigEntry {
            name: c.name.clone(),
            args,
            errors,
        });
    }

    DefaultedProfile {
        name: p.scheduler_name.unwrap_or_default(),
        percentage_of_nodes_to_score: p.percentage_of_nodes_to_score,
        plugins,
        plugin_config: entries,
    }
}

/// Applies the plugin's args kind (defaults + checks) to one pluginConfig entry.
/// Returns the args and the errors config validation reports for them.
fn resolve_args(path: &str, c: &PluginConfig, kinds: &dyn ArgsKinds) -> (Args, Vec<String>) {
    let raw = c.args.clone().unwrap_or(Value::Null);
    let Some(default_args) = kinds.args_kind(&c.name) else {
        // No args kind (or not a known plugin): kept as given.
        return (Args::Ready(raw), Vec::new());
    };
    let args_path = format!("{path}.args");
    let mut user = match raw {
        Value::Null => None,
        Value::Object(m) => Some(m),
        other => {
            let e = field::invalid(&args_path, other.clone(), "has to match plugin args");
            return (Args::Ready(other), vec![e]);
        }
    };
    // The args may name their own type; it must be this plugin's (upstream checks
    // this when decoding the file).
    if let Some(m) = user.as_mut() {
        let want = format!("{}Args", c.name);
        let kind = m.remove("kind");
        let api_version = m.remove("apiVersion");
        let decoding = path.replacen("profiles", ".profiles", 1);
        if let Some(k) = kind.as_ref().and_then(Value::as_str)
            && k != want
        {
            let e = format!(
                "decoding {decoding}: args for plugin {} were not of type {want}.kubescheduler.config.k8s.io, got {k}.kubescheduler.config.k8s.io",
                c.name
            );
            return (Args::Ready(Value::Object(m.clone())), vec![e]);
        }
        if let Some(v) = api_version.as_ref().and_then(Value::as_str)
            && v != v1::API_VERSION
        {
            let e = format!(
                "decoding {decoding}: args for plugin {}: apiVersion {v:?} is not supported, use {:?}",
                c.name,
                v1::API_VERSION
            );
            return (Args::Ready(Value::Object(m.clone())), vec![e]);
        }
    }
    let user = user.map(Value::Object);
    match default_args(user.as_ref(), &args_path) {
        Ok(v) => (Args::Ready(v), Vec::new()),
        Err(errs) if validation::CONFIG_VALIDATED_ARGS.contains(&c.name.as_str()) => {
            (Args::Ready(user.unwrap_or(Value::Null)), errs)
        }
        // Checked only by the plugin's factory, which upstream calls with no field path.
        Err(errs) => {
            let prefix = format!("{args_path}.");
            let errs = errs
                .into_iter()
                .map(|e| e.strip_prefix(&prefix).map(str::to_string).unwrap_or(e))
                .collect();
            (Args::Invalid(errs), Vec::new())
        }
    }
}

/// Repeated messages once, as Go's aggregate prints them.
fn dedup(errs: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(errs.len());
    for e in errs {
        if !out.contains(&e) {
            out.push(e);
        }
    }
    out
}

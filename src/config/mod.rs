//! KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): parsing, defaults,
//! merging with the default plugins, validation, and building each profile's
//! [`Framework`](crate::engine::Framework).
//!
//! The pipeline follows kube-scheduler: strict decoding → defaulting (plugin sets
//! merged with the default MultiPoint set, default args appended to pluginConfig) →
//! validation (all errors at once) → one framework per profile (first error wins).

pub mod defaults;
pub mod field;
pub mod profile;
pub mod v1;
pub mod validation;

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::engine::Framework;
use crate::engine::plugins::{Registry, registry};
use profile::{Args, ProfileSpec, new_framework};
pub use profile::{ExtensionPoint, PluginEntry, describe};
use v1::{Extender, KubeSchedulerConfiguration, PluginConfig, Plugins};

/// Where a configuration came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// kube-scheduler's defaults (no file).
    Defaults,
    /// A file (or, for [`SchedulerConfig::from_str`], the origin name given).
    File(PathBuf),
}

/// A loaded configuration: every profile built, ready for scheduling cycles.
#[derive(Clone)]
pub struct SchedulerConfig {
    pub profiles: Vec<Framework>,
    pub parallelism: i32,
    /// Global value; a profile's own value (in its `Framework`) takes precedence.
    /// Defaults to `Some(0)` (adaptive), as upstream.
    pub percentage_of_nodes_to_score: Option<i32>,
    pub pod_initial_backoff_seconds: i64,
    pub pod_max_backoff_seconds: i64,
    pub source: ConfigSource,
    /// Extenders are validated but cannot be called by schedscope; callers should warn
    /// when this is not empty, since their verdicts are missing.
    pub extenders: Vec<Extender>,
}

impl std::fmt::Debug for SchedulerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulerConfig")
            .field(
                "profiles",
                &self
                    .profiles
                    .iter()
                    .map(|p| p.profile_name.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("parallelism", &self.parallelism)
            .field(
                "percentage_of_nodes_to_score",
                &self.percentage_of_nodes_to_score,
            )
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
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

impl SchedulerConfig {
    /// kube-scheduler v1.35's defaults: one `default-scheduler` profile.
    pub fn defaults() -> Self {
        let raw = KubeSchedulerConfiguration {
            api_version: v1::API_VERSION.into(),
            ..Default::default()
        };
        // The defaults are fixed data; failing to build them is a bug in a plugin's
        // args defaults, which the tests catch.
        build(raw, ConfigSource::Defaults, "defaults", &registry())
            .expect("kube-scheduler's default configuration must build")
    }

    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|error| ConfigError::Io {
            origin: origin.clone(),
            error,
        })?;
        // The snapshot loader's decoding: UTF-8 with or without BOM, or UTF-16 with one.
        let text = crate::source::snapshot::bytes_to_text(&bytes, &origin).map_err(|e| {
            ConfigError::Syntax {
                origin: origin.clone(),
                message: match e {
                    crate::source::SnapshotError::NotText { offset, .. } => {
                        format!("not UTF-8 or UTF-16 text (invalid byte at offset {offset})")
                    }
                    other => other.to_string(),
                },
            }
        })?;
        let mut c = Self::from_str(&text, &origin)?;
        c.source = ConfigSource::File(path.to_path_buf());
        Ok(c)
    }

    /// Parses YAML or JSON text; `origin` names it in errors.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        Self::from_str_with_registry(text, origin, &registry())
    }

    /// As [`SchedulerConfig::from_str`], with another plugin registry.
    pub fn from_str_with_registry(
        text: &str,
        origin: &str,
        registry: &Registry,
    ) -> Result<Self, ConfigError> {
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
        build(
            raw,
            ConfigSource::File(PathBuf::from(origin)),
            origin,
            registry,
        )
    }

    /// The profile a pod with `spec.schedulerName` = `scheduler_name` uses.
    pub fn profile(&self, scheduler_name: &str) -> Option<&Framework> {
        self.profiles
            .iter()
            .find(|p| p.profile_name == scheduler_name)
    }
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
    crate::source::snapshot::check_alias_expansion(text, serde_saphyr::Options::default())
        .map_err(render)?;
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
pub(crate) struct PluginConfigEntry {
    pub name: String,
    pub args: Args,
    /// Validation errors of this entry (duplicate, removed plugin, args).
    pub errors: Vec<String>,
}

impl PluginConfigEntry {
    fn comparable_args(&self) -> Option<&Value> {
        match &self.args {
            Args::Ready(Value::Null) | Args::Invalid(_) => None,
            Args::Ready(v) => Some(v),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct DefaultedProfile {
    /// Empty when not set (only a single profile gets the default name).
    pub name: String,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub plugins: Plugins,
    pub plugin_config: Vec<PluginConfigEntry>,
}

#[derive(Clone, Debug)]
pub(crate) struct LeaderElectionDefaults {
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
pub(crate) struct DefaultedConfig {
    pub api_version: String,
    pub parallelism: i32,
    pub percentage_of_nodes_to_score: Option<i32>,
    pub pod_initial_backoff_seconds: i64,
    pub pod_max_backoff_seconds: i64,
    pub leader_election: LeaderElectionDefaults,
    pub client_connection: v1::ClientConnection,
    pub profiles: Vec<DefaultedProfile>,
    pub extenders: Vec<Extender>,
}

fn set_defaults(raw: KubeSchedulerConfiguration, registry: &Registry) -> DefaultedConfig {
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
        .map(|(i, p)| default_profile(i, p, &raw.api_version, registry))
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
    }
}

/// `setDefaults_KubeSchedulerProfile` plus the args work of `validatePluginConfig`:
/// merges the plugin sets, appends a default pluginConfig entry (sorted by name) for
/// every enabled plugin with an args kind that has none, and materialises the args.
fn default_profile(
    i: usize,
    p: v1::Profile,
    api_version: &str,
    registry: &Registry,
) -> DefaultedProfile {
    let plugins = defaults::merge_plugins(p.plugins.as_ref());

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
        let has_kind = registry.get(name).is_some_and(|f| f.args.is_some());
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
            let (args, errs) = resolve_args(&path, c, registry);
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
fn resolve_args(path: &str, c: &PluginConfig, registry: &Registry) -> (Args, Vec<String>) {
    let raw = c.args.clone().unwrap_or(Value::Null);
    let Some(default_args) = registry.get(c.name.as_str()).and_then(|f| f.args) else {
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

fn build(
    raw: KubeSchedulerConfiguration,
    source: ConfigSource,
    origin: &str,
    registry: &Registry,
) -> Result<SchedulerConfig, ConfigError> {
    let c = set_defaults(raw, registry);
    let errors = dedup(validation::validate(&c));
    if !errors.is_empty() {
        return Err(ConfigError::Invalid {
            origin: origin.to_string(),
            errors,
        });
    }

    let framework_error = |message: String| ConfigError::Framework {
        origin: origin.to_string(),
        message,
    };
    let mut profiles = Vec::with_capacity(c.profiles.len());
    // `profile.NewMap`'s check that every profile sorts the queue the same way.
    let mut first_queue_sort: Option<(String, Option<Value>)> = None;
    for p in &c.profiles {
        let plugin_config: Vec<(String, Args)> = p
            .plugin_config
            .iter()
            .map(|e| (e.name.clone(), e.args.clone()))
            .collect();
        let spec = ProfileSpec {
            name: &p.name,
            // The cycle needs the effective value: the profile's, else the global one.
            percentage_of_nodes_to_score: p
                .percentage_of_nodes_to_score
                .or(c.percentage_of_nodes_to_score),
            plugins: &p.plugins,
            plugin_config: &plugin_config,
        };
        let fw = new_framework(registry, &spec).map_err(|e| {
            framework_error(format!(
                "creating profile for scheduler name {}: {e}",
                p.name
            ))
        })?;

        let queue_sort = fw.queue_sort[0].name().to_string();
        let args = p
            .plugin_config
            .iter()
            .rev()
            .find(|e| e.name == queue_sort)
            .and_then(|e| e.comparable_args().cloned());
        match &first_queue_sort {
            None => first_queue_sort = Some((queue_sort, args)),
            Some((first, first_args)) => {
                if *first != queue_sort {
                    return Err(framework_error(format!(
                        "different queue sort plugins for profile {:?}: {queue_sort:?}, first: {first:?}",
                        p.name
                    )));
                }
                if *first_args != args {
                    return Err(framework_error(format!(
                        "different queue sort plugin args for profile {:?}",
                        p.name
                    )));
                }
            }
        }
        profiles.push(fw);
    }

    Ok(SchedulerConfig {
        profiles,
        parallelism: c.parallelism,
        percentage_of_nodes_to_score: c.percentage_of_nodes_to_score,
        pod_initial_backoff_seconds: c.pod_initial_backoff_seconds,
        pod_max_backoff_seconds: c.pod_max_backoff_seconds,
        source,
        extenders: c.extenders,
    })
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

#[cfg(test)]
mod tests;

//! The profiles a scheduler runs (upstream: pkg/scheduler/profile/profile.go,
//! `NewMap`): kube-scheduler's configuration, already parsed, defaulted and validated
//! by [`crate::config`] (upstream `apis/config`), with one [`Framework`] built per
//! profile by [`new_framework`] (`frameworkruntime.NewFramework`). `config` is the
//! configuration as data; this module is what the engine runs from it.

use crate::model::Pod;
use crate::version::KubeVersion;
use std::path::PathBuf;

use serde_json::Value;

use super::framework::Framework;
use super::plugins::{Registry, registry};
use crate::config::v1::Extender;
use crate::config::{
    self, Args, ArgsKinds, ConfigError, ConfigSource, DefaultArgs, DefaultedConfig,
};

mod at_release;
mod new_framework;
pub use at_release::at_release;
pub use new_framework::{PluginEntry, ProfileSpec, describe, new_framework};

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
    /// The release replayed (every profile's `Framework::features` is its).
    pub version: KubeVersion,
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
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl SchedulerConfig {
    /// kube-scheduler v1.35's defaults: one `default-scheduler` profile.
    pub fn defaults() -> Self {
        Self::defaults_at(KubeVersion::default())
    }

    /// The defaults of kube-scheduler `version`.
    pub fn defaults_at(version: KubeVersion) -> Self {
        let registry = registry();
        // The defaults are fixed data; failing to build them is a bug in a plugin,
        // which the tests catch.
        build(
            config::defaults_at(&registry, version.features()),
            ConfigSource::Defaults,
            "defaults",
            &registry,
        )
        .expect("kube-scheduler's default configuration must build")
    }

    /// Parses YAML or JSON text; `origin` names it in errors.
    #[allow(clippy::should_implement_trait)]
    pub fn from_str(text: &str, origin: &str) -> Result<Self, ConfigError> {
        Self::from_str_with_registry(text, origin, &registry())
    }

    /// [`SchedulerConfig::from_str`] as kube-scheduler `version` reads it (its
    /// default plugins and feature gates).
    pub fn from_str_at(
        text: &str,
        origin: &str,
        version: KubeVersion,
    ) -> Result<Self, ConfigError> {
        let registry = registry();
        let c = config::parse_at(text, origin, &registry, version.features())?;
        build(
            c,
            ConfigSource::File(PathBuf::from(origin)),
            origin,
            &registry,
        )
    }

    /// As [`SchedulerConfig::from_str`], with another plugin registry.
    pub fn from_str_with_registry(
        text: &str,
        origin: &str,
        registry: &Registry,
    ) -> Result<Self, ConfigError> {
        let c = config::parse(text, origin, registry)?;
        build(
            c,
            ConfigSource::File(PathBuf::from(origin)),
            origin,
            registry,
        )
    }

    /// Every profile re-built for kube-scheduler `version` (see [`at_release`]).
    pub fn at_version(&self, version: KubeVersion) -> SchedulerConfig {
        let fts = version.features();
        let registry = registry();
        SchedulerConfig {
            profiles: self
                .profiles
                .iter()
                .map(|fw| at_release(fw, &fts, &registry))
                .collect(),
            version,
            ..self.clone()
        }
    }

    /// The profile a pod with `spec.schedulerName` = `scheduler_name` uses.
    pub fn profile(&self, scheduler_name: &str) -> Option<&Framework> {
        self.profiles
            .iter()
            .find(|p| p.profile_name == scheduler_name)
    }
}

/// No profile serves a pod's schedulerName: another scheduler's pod.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "pod {pod} asks for schedulerName {scheduler:?}, which no profile serves (profiles: {profiles})"
)]
pub struct NoProfile {
    pub pod: String,
    pub scheduler: String,
    /// The profiles there are, comma-separated.
    pub profiles: String,
}

/// The profile serving `pod`: the one its `spec.schedulerName` names, as
/// kube-scheduler's profile map picks it (`profile.Map`).
pub fn profile_for<'f>(profiles: &'f [Framework], pod: &Pod) -> Result<&'f Framework, NoProfile> {
    profiles
        .iter()
        .find(|f| f.profile_name == pod.scheduler_name)
        .ok_or_else(|| NoProfile {
            pod: pod.key(),
            scheduler: pod.scheduler_name.clone(),
            profiles: profiles
                .iter()
                .map(|p| p.profile_name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The registry tells the configuration which plugins have an args kind.
impl ArgsKinds for Registry {
    fn args_kind(&self, plugin: &str) -> Option<DefaultArgs> {
        self.get(plugin).and_then(|f| f.args)
    }
}

/// One framework per profile (`profile.NewMap`): the first error wins.
fn build(
    c: DefaultedConfig,
    source: ConfigSource,
    origin: &str,
    registry: &Registry,
) -> Result<SchedulerConfig, ConfigError> {
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
            features: c.features,
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
        version: c.features.version,
    })
}

#[cfg(test)]
mod tests;

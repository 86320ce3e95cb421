//! The arguments several subcommands share: where the cluster is (a snapshot, or a
//! live cluster and its namespace), the scheduler configuration, and the inspector's
//! own flags (accepted before any subcommand too).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::source::live::LiveOptions;
use crate::source::presets::Preset;
use crate::version::KubeVersion;

/// `schedscope tui`: the inspector's options, also accepted before the subcommand.
#[derive(Debug, Args, Clone, Default)]
pub struct TuiCommand {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Colour theme for the inspector: a shipped name (dark, light, mono, colorblind) or a
    /// path to a theme YAML file.
    #[arg(long, value_name = "NAME|PATH")]
    pub theme: Option<String>,
    #[command(flatten)]
    pub tui: TuiArgs,
}

/// What the inspector runs with, from the top-level flags and `tui`'s own.
#[derive(Debug, Clone, Default)]
pub struct Inspector {
    pub source: SourceArgs,
    pub theme: Option<String>,
    pub tui: TuiArgs,
}

#[derive(Debug, Args, Clone, Default)]
pub struct TuiArgs {
    /// Step through the scheduler loop in the inspector: play/pause (space), one cycle
    /// (n), waiting pods with live countdowns, Allow/Reject, each pod's attempts.
    #[arg(long)]
    pub simulate: bool,
    /// Act as a scheduler on the live cluster: schedule the pods whose
    /// spec.schedulerName is --scheduler-name, binding them through the API and
    /// recording failures (PodScheduled=False, FailedScheduling events) and
    /// preempting as kube-scheduler does. Pods held at Permit appear in the Waiting
    /// tab with live countdowns: `a` allows, `r` rejects. Needs the rights of
    /// deploy/rbac/act-role.yaml.
    #[arg(long, conflicts_with = "snapshot")]
    pub act: bool,
    /// With --act: no inspector; log each write to stderr until Ctrl-C (the Lease is
    /// released on the way out).
    #[arg(long, requires = "act")]
    pub headless: bool,
    /// With --act: the schedulerName to serve (a profile of the configuration must
    /// have it) and the name of the leader-election Lease.
    #[arg(long, value_name = "NAME", default_value = crate::act::DEFAULT_SCHEDULER_NAME, requires = "act")]
    pub scheduler_name: String,
    /// With --act: the Lease's namespace.
    #[arg(long, value_name = "NAMESPACE", default_value = crate::act::DEFAULT_LEASE_NAMESPACE, requires = "act")]
    pub lease_namespace: String,
    /// What-if edit of the model the inspector shows (repeatable), active from the
    /// first frame under a WHAT-IF banner; `u` undoes. Nothing is ever written, even
    /// with --act (which schedules on the real model). See --help for every edit.
    #[arg(long = "what-if", value_name = "EDIT", long_help = super::whatif::WHAT_IF_HELP)]
    pub what_if: Vec<String>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Snapshot file or directory (`kubectl get ... -o yaml|json`, multi-document or
    /// List; a directory is read with its sub-directories, as a must-gather).
    #[arg(long, short = 's', value_name = "PATH")]
    pub snapshot: Option<PathBuf>,
    /// KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1); default: the
    /// v1.35 default profile.
    #[arg(
        long,
        short = 'c',
        visible_alias = "scheduler-config",
        value_name = "FILE"
    )]
    pub config: Option<PathBuf>,
    /// A published scheduler profile instead of --config (a file under profiles/:
    /// LowNodeUtilization, HighNodeUtilization, NoScoring, MostAllocated).
    #[arg(long, value_name = "NAME", conflicts_with = "config")]
    pub profile_preset: Option<Preset>,
    /// The kube-scheduler release to replay: 1.32, 1.33, 1.34 or 1.35, or a patch
    /// (1.34.1). A minor means its newest patch checked (1.34 = 1.34.7). Default: the
    /// version the snapshot recorded, else 1.35.
    #[arg(long, value_name = "VERSION")]
    pub kube_version: Option<KubeVersion>,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// Where a live cluster is, and which namespace is meant.
#[derive(Debug, Args, Clone, Default)]
pub struct LiveArgs {
    /// Live cluster: kubeconfig file (default: KUBECONFIG, ~/.kube/config, then the
    /// in-cluster service account).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// Live cluster: kubeconfig context (default: the current context).
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace meant: where a bare pod name is looked up and whose pods are
    /// listed. Live, only its pods are read (nodes and cluster-wide objects always
    /// whole); a snapshot is read whole.
    #[arg(long, short = 'n', value_name = "NAMESPACE")]
    pub namespace: Option<String>,
}

impl LiveArgs {
    pub fn live_options(&self) -> LiveOptions {
        LiveOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            namespace: self.namespace.clone(),
            first_answer: None,
        }
    }
}

impl SourceArgs {
    /// Each flag from `self`, else from `outer` (the flags before the subcommand).
    pub fn or(self, outer: &SourceArgs) -> SourceArgs {
        SourceArgs {
            snapshot: self.snapshot.or_else(|| outer.snapshot.clone()),
            // A preset given here stands for a configuration file (`preset:NAME`),
            // read through the same loader.
            config: self
                .profile_preset
                .map(Preset::config_path)
                .or(self.config)
                .or_else(|| outer.config.clone()),
            profile_preset: self.profile_preset.or(outer.profile_preset),
            kube_version: self.kube_version.or(outer.kube_version),
            live: LiveArgs {
                kubeconfig: self
                    .live
                    .kubeconfig
                    .or_else(|| outer.live.kubeconfig.clone()),
                context: self.live.context.or_else(|| outer.live.context.clone()),
                namespace: self.live.namespace.or_else(|| outer.live.namespace.clone()),
            },
        }
    }

    /// `schedscope SUBCOMMAND` with these source flags, for hints that must work as
    /// printed.
    pub fn command_line(&self, subcommand: &str) -> String {
        let mut words = vec!["schedscope".to_string(), subcommand.to_string()];
        let quote = |s: &str| {
            if s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=@".contains(c))
            {
                s.to_string()
            } else {
                format!("'{}'", s.replace('\'', r"'\''"))
            }
        };
        let mut flag = |name: &str, v: Option<String>| {
            if let Some(v) = v {
                words.push(format!("{name} {}", quote(&v)));
            }
        };
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        flag("--snapshot", path(&self.snapshot));
        flag("--kubeconfig", path(&self.live.kubeconfig));
        flag("--context", self.live.context.clone());
        flag("-n", self.live.namespace.clone());
        words.join(" ")
    }

    /// A snapshot and a live cluster's address together are a contradiction.
    pub fn check(&self) -> Result<()> {
        if self.snapshot.is_some() {
            if self.live.kubeconfig.is_some() {
                anyhow::bail!(
                    "--kubeconfig is for a live cluster; give it or --snapshot, not both"
                );
            }
            if self.live.context.is_some() {
                anyhow::bail!("--context is for a live cluster; give it or --snapshot, not both");
            }
        }
        Ok(())
    }

    /// `pod` as `namespace/name`: a bare name is in `--namespace`, else `default`
    /// ([`crate::explain::pod_key`]).
    pub fn pod_key(&self, pod: &str) -> String {
        crate::explain::pod_key(pod, self.live.namespace.as_deref())
    }

    pub fn live_options(&self) -> LiveOptions {
        self.live.live_options()
    }

    /// Which scheduler configuration is in use, in words.
    pub fn config_label(&self) -> String {
        let version = match self.kube_version {
            Some(v) => format!("{v} (from --kube-version)"),
            None => "v1.35".into(),
        };
        match &self.config {
            Some(p) => match Preset::of_path(p) {
                Some(preset) => format!(
                    "scheduler profile preset {preset} ({}), {version}",
                    preset.file().display()
                ),
                None if self.kube_version.is_some() => {
                    format!("scheduler config {}, {version}", p.display())
                }
                None => format!("scheduler config {}", p.display()),
            },
            None => format!("scheduler config: {version} defaults"),
        }
    }
}

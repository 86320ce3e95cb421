//! Which kube-scheduler release is replayed, and what follows from it (upstream:
//! pkg/features/kube_features.go and versioned_kube_features.go for the default
//! feature gates; pkg/scheduler/framework/plugins/feature/feature.go for the
//! `Features` struct plugins are built with).
//!
//! Releases 1.32 to 1.35 are supported. A version is a minor with an optional patch:
//! `1.34` stands for the newest patch of 1.34 whose real scheduler was checked
//! ([`KubeVersion::resolved`]), `1.34.1` for that patch. Behaviour that differs
//! without a gate (message wording, a plugin's rule) is asked of [`Features`] by
//! name too, so that plugins read one struct. Sources for every switch are in
//! `docs/version-semantics.md` of the shared research notes (rows R1–R6, M1–M4, P1).

use std::fmt;
use std::str::FromStr;

/// The oldest supported minor.
pub const OLDEST_MINOR: u32 = 32;
/// The newest supported minor (and the default).
pub const NEWEST_MINOR: u32 = 35;

/// A kube-scheduler release: `1.<minor>[.<patch>]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KubeVersion {
    pub minor: u32,
    /// `None`: the newest patch known for the minor ([`KubeVersion::resolved`]).
    pub patch: Option<u32>,
}

impl Default for KubeVersion {
    /// v1.35 (its newest known patch).
    fn default() -> Self {
        KubeVersion {
            minor: NEWEST_MINOR,
            patch: None,
        }
    }
}

/// Why a version string was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error(
        "{0:?} is not a Kubernetes version: expected 1.MINOR or 1.MINOR.PATCH, e.g. 1.34 or 1.34.1"
    )]
    Syntax(String),
    #[error(
        "kube-scheduler {0} is not supported: schedscope replays 1.{OLDEST_MINOR} to 1.{NEWEST_MINOR}"
    )]
    Unsupported(String),
}

impl KubeVersion {
    pub const fn new(minor: u32, patch: Option<u32>) -> Self {
        KubeVersion { minor, patch }
    }

    /// The newest patch of `minor` whose real scheduler answered the version
    /// scenarios (v1.32.0, v1.33.3, v1.34.7, v1.35.4).
    pub const fn newest_known_patch(minor: u32) -> u32 {
        match minor {
            32 => 0,
            33 => 3,
            34 => 7,
            _ => 4,
        }
    }

    /// The patch this version stands for.
    pub fn patch_or_newest(&self) -> u32 {
        self.patch
            .unwrap_or_else(|| Self::newest_known_patch(self.minor))
    }

    /// With the patch made explicit.
    pub fn resolved(&self) -> KubeVersion {
        KubeVersion::new(self.minor, Some(self.patch_or_newest()))
    }

    /// `(minor, patch)` for comparisons.
    fn at_least(&self, minor: u32, patch: u32) -> bool {
        (self.minor, self.patch_or_newest()) >= (minor, patch)
    }

    /// Reads a version as kubectl and the API server print it: `1.34`, `1.34.1`,
    /// `v1.34.1`, and a `GitVersion` with a suffix (`v1.34.1-eks-abc`, `v1.33.3+k3s1`:
    /// the suffix is ignored).
    pub fn parse(text: &str) -> Result<KubeVersion, VersionError> {
        let syntax = || VersionError::Syntax(text.to_string());
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        let core = t.split(['-', '+']).next().unwrap_or_default();
        let parts: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(syntax());
        }
        let number = |s: &str| -> Result<u32, VersionError> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 6 {
                return Err(syntax());
            }
            s.parse().map_err(|_| syntax())
        };
        let major = number(parts[0])?;
        let minor = number(parts[1])?;
        let patch = parts.get(2).map(|p| number(p)).transpose()?;
        if major != 1 || !(OLDEST_MINOR..=NEWEST_MINOR).contains(&minor) {
            return Err(VersionError::Unsupported(format!("v{core}")));
        }
        Ok(KubeVersion { minor, patch })
    }

    /// The default feature gates of this release, and its behaviour switches.
    pub fn features(&self) -> Features {
        Features::of(*self)
    }
}

impl FromStr for KubeVersion {
    type Err = VersionError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        KubeVersion::parse(s)
    }
}

impl fmt::Display for KubeVersion {
    /// `v1.34` or `v1.34.1`, as given.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "v1.{}.{p}", self.minor),
            None => write!(f, "v1.{}", self.minor),
        }
    }
}

impl serde::Serialize for KubeVersion {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where the replayed release came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionSource {
    /// `--kube-version`.
    Flag,
    /// The version a snapshot recorded (`schedscope snapshot save`).
    Snapshot,
    /// The live API server's `/version`.
    ApiServer,
    /// A must-gather's or cluster dump's own record of the version, with the phrase
    /// naming it ("from the must-gather's ClusterOperator kube-scheduler").
    Dump(String),
    /// None given: schedscope's default (the newest supported release).
    Default,
}

impl VersionSource {
    /// "from --kube-version", "from the API server", ...
    pub fn phrase(&self) -> &str {
        match self {
            VersionSource::Flag => "from --kube-version",
            VersionSource::Snapshot => "recorded in the snapshot",
            VersionSource::ApiServer => "from the API server",
            VersionSource::Dump(what) => what,
            VersionSource::Default => "default",
        }
    }

    /// The source's kind, as JSON names it (`flag`, `snapshot`, `api_server`, `dump`,
    /// `default`).
    pub fn kind(&self) -> &'static str {
        match self {
            VersionSource::Flag => "flag",
            VersionSource::Snapshot => "snapshot",
            VersionSource::ApiServer => "api_server",
            VersionSource::Dump(_) => "dump",
            VersionSource::Default => "default",
        }
    }
}

impl serde::Serialize for VersionSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.kind())
    }
}

/// The release a replay follows and where that came from.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Release {
    pub version: KubeVersion,
    pub source: VersionSource,
}

impl Release {
    pub fn new(version: KubeVersion, source: VersionSource) -> Release {
        Release { version, source }
    }
}

impl fmt::Display for Release {
    /// `v1.34 (from --kube-version)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.version, self.source.phrase())
    }
}

/// Default feature gates that matter to the scheduler, and the behaviour switches of
/// one release. Plugins are built with it (upstream `feature.Features`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// The release these follow.
    pub version: KubeVersion,
    /// DynamicResourceAllocation: beta/off in 1.32–1.33, GA/on from 1.34. Off, the
    /// DynamicResources plugin is not in the default profile and claims are ignored.
    pub dynamic_resource_allocation: bool,
    /// DRAPrioritizedList (`firstAvailable`): on from 1.34.
    pub dra_prioritized_list: bool,
    /// DRAAdminAccess: on from 1.34.
    pub dra_admin_access: bool,
    /// DRASchedulerFilterTimeout: on from 1.34.
    pub dra_scheduler_filter_timeout: bool,
    /// InPlacePodVerticalScaling: off in 1.32, on from 1.33 (running pods count at
    /// the larger of spec, allocated and actual resources).
    pub in_place_pod_vertical_scaling: bool,
    /// PodLevelResources: on from 1.34 (`spec.resources` replaces the containers' sum).
    pub pod_level_resources: bool,
    /// VolumeAttributesClass: on from 1.34 (off, VolumeBinding errors on a claim that
    /// names a class).
    pub volume_attributes_class: bool,
    /// SchedulerAsyncPreemption: on from 1.33 (same victims; deleted asynchronously).
    pub scheduler_async_preemption: bool,
    /// SchedulerPopFromBackoffQ: on from 1.33 (queue order only).
    pub scheduler_pop_from_backoff_q: bool,
    /// SchedulerAsyncAPICalls: on in 1.34.0–1.34.1 and 1.35.0 only (API plumbing only).
    pub scheduler_async_api_calls: bool,
    /// OpportunisticBatching: on from 1.35 (inert with the default profile).
    pub opportunistic_batching: bool,
    /// MutableCSINodeAllocatableCount: on from 1.35.
    pub mutable_csi_node_allocatable_count: bool,
}

impl Default for Features {
    /// v1.35's.
    fn default() -> Self {
        KubeVersion::default().features()
    }
}

impl Features {
    pub fn of(version: KubeVersion) -> Features {
        let v = version;
        let from = |minor: u32| v.minor >= minor;
        Features {
            version: v,
            dynamic_resource_allocation: from(34),
            dra_prioritized_list: from(34),
            dra_admin_access: from(34),
            dra_scheduler_filter_timeout: from(34),
            in_place_pod_vertical_scaling: from(33),
            pod_level_resources: from(34),
            volume_attributes_class: from(34),
            scheduler_async_preemption: from(33),
            scheduler_pop_from_backoff_q: from(33),
            scheduler_async_api_calls: (v.minor == 34 && v.patch_or_newest() <= 1)
                || (v.minor == 35 && v.patch_or_newest() == 0),
            opportunistic_batching: from(35),
            mutable_csi_node_allocatable_count: from(35),
        }
    }

    /// The gates by upstream name, in name order (for display).
    pub fn gates(&self) -> [(&'static str, bool); 12] {
        [
            ("DRAAdminAccess", self.dra_admin_access),
            ("DRAPrioritizedList", self.dra_prioritized_list),
            (
                "DRASchedulerFilterTimeout",
                self.dra_scheduler_filter_timeout,
            ),
            (
                "DynamicResourceAllocation",
                self.dynamic_resource_allocation,
            ),
            (
                "InPlacePodVerticalScaling",
                self.in_place_pod_vertical_scaling,
            ),
            (
                "MutableCSINodeAllocatableCount",
                self.mutable_csi_node_allocatable_count,
            ),
            ("OpportunisticBatching", self.opportunistic_batching),
            ("PodLevelResources", self.pod_level_resources),
            ("SchedulerAsyncAPICalls", self.scheduler_async_api_calls),
            ("SchedulerAsyncPreemption", self.scheduler_async_preemption),
            (
                "SchedulerPopFromBackoffQ",
                self.scheduler_pop_from_backoff_q,
            ),
            ("VolumeAttributesClass", self.volume_attributes_class),
        ]
    }

    /// TaintToleration names the taint in its reason (`node(s) had untolerated taint
    /// {key: value}`), one FitError bucket per distinct taint: before 1.34.2 (M2).
    pub fn taint_reason_names_taint(&self) -> bool {
        !self.version.at_least(34, 2)
    }

    /// NodeResourcesFit marks a request over the node's whole allocatable
    /// UnschedulableAndUnresolvable (so preemption skips the node): from 1.34 (R2).
    pub fn fit_over_allocatable_unresolvable(&self) -> bool {
        self.version.minor >= 34
    }

    /// NodePorts counts host ports of restartable init containers (sidecars): from
    /// 1.34, and 1.33.6+ where the backport is expected (R4).
    pub fn sidecar_host_ports(&self) -> bool {
        self.version.at_least(33, 6)
    }

    /// NodeResourcesBalancedAllocation also scores pods without cpu/memory requests:
    /// 1.32 only (R1).
    pub fn balanced_allocation_scores_best_effort(&self) -> bool {
        self.version.minor <= 32
    }

    /// VolumeBinding's bound-PV node-affinity reason is `node(s) had volume node
    /// affinity conflict`: 1.32 only (M1).
    pub fn old_pv_node_affinity_reason(&self) -> bool {
        self.version.minor <= 32
    }

    /// VolumeRestrictions' ReadWriteOncePod reason is the pre-1.34 text (M4).
    pub fn old_read_write_once_pod_reason(&self) -> bool {
        self.version.minor <= 33
    }

    /// DynamicResources scores nodes by the `firstAvailable` sub-request they can
    /// allocate: 1.35 (R5).
    pub fn dra_score(&self) -> bool {
        self.version.minor >= 35 && self.dra_prioritized_list
    }

    /// The DRA allocator never allocates from incomplete or invalid pools: 1.35. 1.34
    /// still uses incomplete pools.
    pub fn dra_skips_incomplete_pools(&self) -> bool {
        self.version.minor >= 35
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_minors_patches_and_git_versions() {
        let v = |s: &str| KubeVersion::parse(s).map(|v| v.to_string());
        assert_eq!(v("1.34").as_deref(), Ok("v1.34"));
        assert_eq!(v("1.34.1").as_deref(), Ok("v1.34.1"));
        assert_eq!(v("v1.33.3+k3s1").as_deref(), Ok("v1.33.3"));
        assert_eq!(v("v1.32.9-eks-1234").as_deref(), Ok("v1.32.9"));
        assert_eq!(
            KubeVersion::parse("1.34").unwrap().resolved().to_string(),
            "v1.34.7"
        );
        assert!(matches!(
            KubeVersion::parse("1.31"),
            Err(VersionError::Unsupported(_))
        ));
        for bad in ["", "1", "1.x", "2.34", "1.34.1.2", "one.two", "1..3"] {
            assert!(KubeVersion::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            KubeVersion::parse("1.31").unwrap_err().to_string(),
            "kube-scheduler v1.31 is not supported: schedscope replays 1.32 to 1.35"
        );
    }

    #[test]
    fn gates_and_switches_follow_the_research_note() {
        let f = |s: &str| KubeVersion::parse(s).unwrap().features();
        assert!(!f("1.33").dynamic_resource_allocation);
        assert!(f("1.34").dynamic_resource_allocation);
        assert!(!f("1.32").in_place_pod_vertical_scaling);
        assert!(f("1.33").in_place_pod_vertical_scaling);
        assert!(f("1.34.1").taint_reason_names_taint());
        assert!(!f("1.34.2").taint_reason_names_taint());
        assert!(!f("1.34").taint_reason_names_taint());
        assert!(!f("1.33").sidecar_host_ports());
        assert!(f("1.33.6").sidecar_host_ports());
        assert!(f("1.34.0").sidecar_host_ports());
        assert!(f("1.34.1").scheduler_async_api_calls);
        assert!(!f("1.34").scheduler_async_api_calls);
        assert!(!f("1.34.7").dra_score());
        assert!(f("1.35").dra_score());
        assert_eq!(Features::default(), f("1.35"));
    }
}

//! Named scheduler profiles (`--profile-preset`): KubeSchedulerConfiguration files
//! shipped under `profiles/` (each cites its source), built into the binary and
//! loaded through the same parser, defaulting and validation as a user's `--config`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use crate::config::{ConfigError, ConfigSource};
use crate::engine::SchedulerConfig;

/// A published scheduler profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Preset {
    /// OpenShift's default: kube-scheduler's own defaults.
    LowNodeUtilization,
    /// OpenShift: MostAllocated with weight 5, no BalancedAllocation.
    HighNodeUtilization,
    /// OpenShift: no PreScore or Score plugin.
    NoScoring,
    /// Bin packing: NodeResourcesFit MostAllocated over cpu and memory.
    MostAllocated,
}

/// The prefix of the configuration path that names a preset rather than a file.
const PATH_PREFIX: &str = "preset:";

impl Preset {
    pub const ALL: [Preset; 4] = [
        Preset::LowNodeUtilization,
        Preset::HighNodeUtilization,
        Preset::NoScoring,
        Preset::MostAllocated,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::LowNodeUtilization => "LowNodeUtilization",
            Preset::HighNodeUtilization => "HighNodeUtilization",
            Preset::NoScoring => "NoScoring",
            Preset::MostAllocated => "MostAllocated",
        }
    }

    /// The file's text, as shipped in `profiles/`.
    pub fn text(self) -> &'static str {
        match self {
            Preset::LowNodeUtilization => include_str!("../../profiles/LowNodeUtilization.yaml"),
            Preset::HighNodeUtilization => {
                include_str!("../../profiles/HighNodeUtilization.yaml")
            }
            Preset::NoScoring => include_str!("../../profiles/NoScoring.yaml"),
            Preset::MostAllocated => include_str!("../../profiles/MostAllocated.yaml"),
        }
    }

    /// Where the file lives in the repository (named in errors and labels).
    pub fn file(self) -> PathBuf {
        PathBuf::from(format!("profiles/{}.yaml", self.name()))
    }

    /// The configuration path that stands for this preset (`preset:NAME`), which
    /// [`Preset::of_path`] reads back.
    pub fn config_path(self) -> PathBuf {
        PathBuf::from(format!("{PATH_PREFIX}{}", self.name()))
    }

    /// The preset a configuration path stands for, if it is `preset:NAME`.
    pub fn of_path(path: &Path) -> Option<Preset> {
        path.to_str()?.strip_prefix(PATH_PREFIX)?.parse().ok()
    }

    /// The built configuration.
    pub fn load(self) -> Result<SchedulerConfig, ConfigError> {
        let file = self.file();
        let mut c = SchedulerConfig::from_str(self.text(), &file.display().to_string())?;
        c.source = ConfigSource::File(file);
        Ok(c)
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Preset::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Preset::ALL.iter().map(|p| p.name()).collect();
                format!(
                    "unknown profile preset {s:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset is a valid configuration at every supported release, and the
    /// file under `profiles/` is the one built in.
    #[test]
    fn every_preset_loads_at_every_release() {
        for p in Preset::ALL {
            let on_disk =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(p.file()))
                    .unwrap();
            assert_eq!(on_disk, p.text(), "{p}");
            assert!(p.text().contains("Source"), "{p} cites its source");
            let c = p.load().unwrap_or_else(|e| panic!("{p}: {e}"));
            for minor in 32..=35 {
                let v = crate::version::KubeVersion::new(minor, None);
                let at = SchedulerConfig::from_str_at(p.text(), p.name(), v)
                    .unwrap_or_else(|e| panic!("{p} at {v}: {e}"));
                assert_eq!(at.profiles.len(), c.profiles.len());
            }
            assert_eq!(Preset::of_path(&p.config_path()), Some(p));
            assert_eq!(p.name().to_lowercase().parse::<Preset>(), Ok(p));
        }
        assert_eq!(Preset::of_path(Path::new("profiles/NoScoring.yaml")), None);
    }
}

//! Reading a KubeSchedulerConfiguration file. The engine builds profiles from text;
//! the file itself is read here, at the I/O edge, so the engine stays free of files.

use std::path::Path;

use crate::config::{ConfigError, ConfigSource};
use crate::engine::SchedulerConfig;

/// Reads, parses and builds the configuration in `path`.
pub fn read_scheduler_config(path: &Path) -> Result<SchedulerConfig, ConfigError> {
    let origin = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|error| ConfigError::Io {
        origin: origin.clone(),
        error,
    })?;
    // The snapshot loader's decoding: UTF-8 with or without BOM, or UTF-16 with one.
    let text = crate::text::bytes_to_text(&bytes).map_err(|e| ConfigError::Syntax {
        origin: origin.clone(),
        message: e.to_string(),
    })?;
    let mut c = SchedulerConfig::from_str(&text, &origin)?;
    c.source = ConfigSource::File(path.to_path_buf());
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_named() {
        let e = read_scheduler_config(Path::new("/nonexistent/sched.yaml")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/sched.yaml: cannot read the file"),
            "{e}"
        );
    }

    /// A UTF-16 file (what PowerShell's `>` writes) loads, as snapshots do.
    #[test]
    fn utf16_config_file_loads() {
        let text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nparallelism: 3\n";
        let mut bytes = vec![0xFF, 0xFE];
        for u in text.encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("utf16.yaml");
        std::fs::write(&path, &bytes).unwrap();
        let c = read_scheduler_config(&path).unwrap();
        assert_eq!(c.parallelism, 3);
        assert_eq!(c.source, ConfigSource::File(path));
    }

    /// Every fidelity scenario's configuration reads from its file and says where
    /// it came from.
    #[test]
    fn fidelity_config_files_load() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path().join("config.yaml");
            if p.exists() {
                let c = read_scheduler_config(&p).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(c.source, ConfigSource::File(p));
                n += 1;
            }
        }
        assert!(n >= 9, "found {n}");
    }
}

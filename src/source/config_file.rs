//! Reading a KubeSchedulerConfiguration file. The engine builds profiles from text;
//! the file itself is read here, at the I/O edge, so the engine stays free of files.

use std::path::Path;

use crate::config::{ConfigError, ConfigSource};
use crate::engine::SchedulerConfig;

impl SchedulerConfig {
    /// Reads, parses and builds the configuration in `path`.
    pub fn from_file(path: &Path) -> Result<Self, ConfigError> {
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
        let mut c = Self::from_str(&text, &origin)?;
        c.source = ConfigSource::File(path.to_path_buf());
        Ok(c)
    }
}

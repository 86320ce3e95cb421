//! Where the cluster model comes from. `snapshot` reads `kubectl get -o yaml|json`
//! output (files or a directory) into a [`Cluster`](crate::model::Cluster), applying the
//! defaulting and admission the API server would have applied first.

mod config_file;
pub use config_file::read_scheduler_config;
pub mod convert;
pub mod kinds;
pub mod lean_pod;
pub mod live;
pub mod observed;
pub mod presets;
pub mod redact;
pub mod save;
pub mod snapshot;
pub mod template;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

pub use observed::{
    SchedulerWord, SchedulingEvent, SchedulingEvents, SourceStatus, api_error_text,
    error_chain_text, status_text,
};
pub use snapshot::{
    DumpFacts, DumpKind, LoadProgress, LoadStats, Snapshot, load_snapshot, load_snapshot_str,
    load_snapshot_with_progress,
};

/// A replacement of the cluster from a data source (snapshot reload, live watch, the
/// acting scheduler), as the TUI consumes it.
#[derive(Clone, Debug)]
pub struct DataUpdate {
    pub cluster: std::sync::Arc<crate::model::Cluster>,
    /// New source label, when it changed.
    pub source: Option<String>,
    /// A live source's connection state (None: unchanged, or not live).
    pub status: Option<SourceStatus>,
    /// The real scheduler's latest FailedScheduling event per pod (live only).
    pub events: Option<std::sync::Arc<SchedulingEvents>>,
    /// Something the user should hear about now (the acting scheduler's writes).
    pub notice: Option<Notice>,
}

impl DataUpdate {
    /// The same model with a message only.
    pub fn notice(
        cluster: std::sync::Arc<crate::model::Cluster>,
        text: String,
        error: bool,
    ) -> Self {
        DataUpdate {
            cluster,
            source: None,
            status: None,
            events: None,
            notice: Some(Notice { text, error }),
        }
    }
}

/// A one-line message for the status bar; `error` when it is bad news.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Notice {
    pub text: String,
    pub error: bool,
}

/// Where in the input a problem is: file, document (1-based, empty documents not
/// counted), item of a `kind: List`, and the line/column when known.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub document: Option<usize>,
    pub item: Option<usize>,
    /// The item is an element of a bare JSON array (`[...]`), not of a List's `items`.
    pub array: bool,
    pub line: Option<u64>,
    pub column: Option<u64>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(d) = self.document {
            write!(f, ": document {d}")?;
        }
        match (self.item, self.array) {
            (Some(i), false) => write!(f, ", items[{i}]")?,
            (Some(i), true) => write!(f, ", array element {i}")?,
            (None, _) => {}
        }
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, " (line {l}, column {c})"),
            (Some(l), None) => write!(f, " (line {l})"),
            _ => Ok(()),
        }
    }
}

/// Why a snapshot could not be loaded. Every message names the file and, where it
/// applies, the document, the object and the field, so the input can be fixed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    // The io error is part of the message, not a separate source, so `{:#}` chains
    // do not print it twice.
    #[error("cannot read {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error(
        "{dir}: no snapshot files in this directory or below it (expected *.yaml, *.yml \
         or *.json)"
    )]
    EmptyDirectory { dir: PathBuf },
    #[error(
        "{file}: the file is empty; expected Kubernetes objects as printed by \
         `kubectl get ... -o yaml` or `-o json`"
    )]
    EmptyFile { file: String },
    #[error(
        "{file}: not a text file (invalid UTF-8 at byte {offset}); expected YAML or JSON \
         as printed by `kubectl get ... -o yaml` or `-o json`"
    )]
    NotText { file: String, offset: usize },
    #[error(
        "{file}: not a snapshot ({detail}); expected Kubernetes objects as printed by \
         `kubectl get ... -o yaml` or `-o json`"
    )]
    NotASnapshot { file: String, detail: String },
    #[error(
        "{file}: more than {limit_gib} GiB read without reaching its end (a device or an \
         endless pipe?); a snapshot read whole is at most {limit_gib} GiB (a larger JSON \
         List file is streamed)"
    )]
    TooLarge { file: String, limit_gib: u64 },
    #[error("{at}: {format} syntax error: {message}")]
    Syntax {
        at: Box<Origin>,
        format: &'static str,
        message: String,
    },
    #[error(
        "{at}: expected a Kubernetes object (a mapping with apiVersion and kind), found {found}"
    )]
    NotAnObject { at: Box<Origin>, found: String },
    #[error(
        "{at}: object{} has no `kind` field; every object needs `apiVersion` and `kind`, \
         as `kubectl get -o yaml` prints them", name_suffix(.name)
    )]
    MissingKind {
        at: Box<Origin>,
        name: Option<String>,
    },
    #[error(
        "{at}: {object}: apiVersion {api_version:?} is not supported for kind {kind} \
         (expected {expected:?})"
    )]
    UnsupportedApiVersion {
        at: Box<Origin>,
        object: String,
        kind: String,
        api_version: String,
        expected: &'static str,
    },
    #[error("{at}: {object}: {}{message}", field_prefix(.field))]
    InvalidObject {
        at: Box<Origin>,
        /// `Kind namespace/name` (or just `Kind` when the name could not be read).
        object: String,
        /// JSON path of the offending field inside the object, when known.
        field: Option<String>,
        message: String,
    },
    #[error(
        "{at}: {object}: spec.priorityClassName {class:?}: no PriorityClass with that \
         name in the snapshot (the API server would have rejected this pod); add the \
         PriorityClass or set spec.priority"
    )]
    MissingPriorityClass {
        at: Box<Origin>,
        object: String,
        class: String,
    },
}

fn name_suffix(name: &Option<String>) -> String {
    name.as_ref().map(|n| format!(" {n}")).unwrap_or_default()
}

fn field_prefix(field: &Option<String>) -> String {
    match field.as_deref() {
        Some(f) if !f.is_empty() && f != "." => format!("field {f}: "),
        _ => String::new(),
    }
}

/// What a load read and what it left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Files read, in the order read.
    pub files: Vec<String>,
    pub bytes: u64,
    /// Non-empty documents (a `kind: List` counts once).
    pub documents: usize,
    /// Objects loaded per kind (after terminal pods were dropped).
    pub objects: BTreeMap<String, usize>,
    /// Objects not read, per kind: kinds the scheduler does not look at (Secret and
    /// ConfigMap are never parsed), and kinds this tool does not know.
    pub skipped_kinds: BTreeMap<String, usize>,
    /// Pods in phase Succeeded or Failed: the scheduler ignores them.
    pub terminal_pods: usize,
    /// Objects that replaced an earlier, different object of the same kind and name
    /// (the later one is kept), as `Kind namespace/name`, in the order met.
    pub replaced: Vec<String>,
    /// Objects read again unchanged (a must-gather holds each pod twice).
    pub repeated: usize,
    /// Files of a directory left out because they hold no Kubernetes objects:
    /// `(file, why)`, in the order read.
    pub skipped_files: Vec<(String, String)>,
    /// Objects read at an older apiVersion whose schema equals the one read, per
    /// `Kind (apiVersion)`.
    pub older_versions: BTreeMap<String, usize>,
    /// Whether a directory was read (then what was read is worth saying).
    pub from_directory: bool,
    /// What may make answers differ from the real scheduler's, or what was read in a
    /// way the user may not expect; one sentence each, in a fixed order.
    pub warnings: Vec<String>,
    /// What the user should know that changes no answer (logs skipped, kinds taken
    /// from paths, where the release came from); one sentence each.
    pub notes: Vec<String>,
    /// What a dump (must-gather, cluster-info dump, Insights archive) says about the
    /// cluster's own scheduler, and how it was read.
    pub dump: DumpFacts,
}

impl LoadReport {
    pub fn count(&self, kind: &str) -> usize {
        self.objects.get(kind).copied().unwrap_or(0)
    }
}

impl fmt::Display for LoadReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files = self.files.len();
        write!(
            f,
            "read {files} file{} ({} bytes, {} document{})",
            if files == 1 { "" } else { "s" },
            self.bytes,
            self.documents,
            if self.documents == 1 { "" } else { "s" }
        )?;
        let list = |m: &BTreeMap<String, usize>| {
            m.iter()
                .map(|(k, v)| format!("{v} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.objects.is_empty() {
            write!(f, ": {}", list(&self.objects))?;
        }
        if self.terminal_pods > 0 {
            write!(
                f,
                "; ignored {} terminated pod{} (Succeeded/Failed)",
                self.terminal_pods,
                if self.terminal_pods == 1 { "" } else { "s" }
            )?;
        }
        if !self.skipped_kinds.is_empty() {
            write!(f, "; skipped {}", list(&self.skipped_kinds))?;
        }
        if self.repeated > 0 {
            write!(
                f,
                "; {} object{} read twice unchanged",
                self.repeated,
                if self.repeated == 1 { "" } else { "s" }
            )?;
        }
        // Replaced objects and files left out are warnings, said apart.
        Ok(())
    }
}

//! Snapshot files → [`Cluster`].
//!
//! Input is what `kubectl get nodes,pods,pv,pvc,sc,... -A -o yaml` (or `-o json`)
//! prints: one or more files (a directory is read with its sub-directories, `*.yaml`,
//! `*.yml`, `*.json` in path order), each holding multi-document YAML, a `kind: List` (or a
//! typed list such as `PodList`), a stream of JSON objects or a JSON array.
//!
//! Each object is peeked at for `apiVersion`/`kind` and then deserialised straight from
//! its own text (JSON) or from the parsed YAML tree into the k8s-openapi type, then
//! converted into the scheduler's view. Secrets and ConfigMaps are never materialised.
//! JSON List items, YAML documents and groups of YAML List items are decoded on all
//! cores; results are applied in input order, so the outcome and the first error
//! reported never depend on timing.
//!
//! YAML scalars follow YAML 1.2 (only `true`/`false` are booleans) and digits with
//! leading zeros stay strings; otherwise an unquoted number where Kubernetes wants a
//! string is an error, as `kubectl apply` would report it.
//!
//! What the API server would have applied before the scheduler sees the objects
//! (priority admission, RuntimeClass overhead, StorageClass and PriorityClass
//! defaults, the namespace name label) is applied once everything is read, since a
//! PriorityClass may come after the pods that name it. Container requests from limits,
//! port defaults and node allocatable are applied by the model's `from_k8s`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{LoadReport, SnapshotError};
use crate::model::Cluster;

mod decode;
mod dumps;
mod events;
mod json;
mod loader;
mod parallel;
mod stream;
mod text;
mod warnings;
mod yaml;

pub use dumps::{DumpFacts, DumpKind};
pub(crate) use dumps::{implied_kind_at, without_container_logs};
pub use stream::LoadProgress;

use loader::Loader;
use text::Format;

pub(crate) use text::bytes_to_text;
pub(crate) use yaml::yaml_documents;

/// A loaded snapshot: the cluster as the scheduler would see it, and what was read.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub cluster: Cluster,
    pub report: LoadReport,
    pub stats: LoadStats,
}

/// Where a load's time went. With the streaming path reading and decoding overlap:
/// `read` is the time spent waiting for the file, `decode` the rest of the wall time
/// until every object is decoded, `model` building the cluster from them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub read: Duration,
    pub decode: Duration,
    pub model: Duration,
    /// Bytes of input read.
    pub bytes: u64,
    /// Objects decoded (List items and documents, of every kind).
    pub objects: u64,
    /// The file took the streaming path (a JSON List read in pieces).
    pub streamed: bool,
}

/// Load a snapshot file, or every `*.yaml`/`*.yml`/`*.json` file of a directory and
/// its sub-directories (a must-gather's `namespaces/<ns>/core/pods.yaml` layout), in
/// path order. In a directory, a file holding no Kubernetes objects (empty, not YAML
/// or JSON, or without `kind`) is left out and listed in the report; an object that
/// is Kubernetes but invalid is an error, as for a single file.
pub fn load_snapshot(path: &Path) -> Result<Snapshot, SnapshotError> {
    load_snapshot_with_progress(path, None)
}

/// [`load_snapshot`], telling `progress` how far it is as it goes.
pub fn load_snapshot_with_progress(
    path: &Path,
    progress: Option<&LoadProgress>,
) -> Result<Snapshot, SnapshotError> {
    let io = |e| SnapshotError::Io {
        path: path.to_path_buf(),
        error: e,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if let Some(p) = progress
        && !meta.is_dir()
    {
        p.bytes_total.store(meta.len(), Ordering::Relaxed);
    }
    let start = Instant::now();
    // Only a regular file can be read twice: a pipe (`--snapshot <(kubectl ...)`) is
    // read once, whole, below.
    if meta.is_file() {
        // The large-file case first; anything it does not take goes the precise way.
        let name = path.display().to_string();
        if let Some(streamed) = stream::stream_json_list(path, &name, progress)? {
            let decoded = start.elapsed();
            let mut stats = LoadStats {
                read: streamed.read,
                decode: decoded.saturating_sub(streamed.read),
                bytes: streamed.loader.report.bytes,
                objects: streamed.loader.decoded,
                streamed: true,
                ..LoadStats::default()
            };
            return finish(streamed.loader, &mut stats, progress);
        }
        if let Some(p) = progress {
            p.bytes_read.store(0, Ordering::Relaxed);
            p.objects.store(0, Ordering::Relaxed);
        }
    }
    let mut read = Duration::ZERO;
    let mut timed_read = |f: &Path| {
        let t = Instant::now();
        let r = read_whole(f, MAX_WHOLE_READ);
        read += t.elapsed();
        if let (Some(p), Ok(b)) = (progress, &r) {
            p.bytes_read.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
        r
    };
    let mut loader = Loader::default();
    if meta.is_dir() {
        let (mut files, mut others) = (Vec::new(), Vec::new());
        snapshot_files(path, &mut files, &mut others)?;
        if files.is_empty() {
            return Err(SnapshotError::EmptyDirectory {
                dir: path.to_path_buf(),
            });
        }
        loader.report.from_directory = true;
        let parts = |f: &PathBuf| dumps::relative_parts(path, f);
        let all: Vec<Vec<String>> = files.iter().chain(&others).map(parts).collect();
        let kind = dumps::directory_kind(all.iter().map(Vec::as_slice));
        loader.report.dump.kind = kind;
        loader.kindless_files_skipped = kind == Some(DumpKind::InsightsArchive);
        for f in files {
            loader.implied = dumps::implied_kind(&parts(&f));
            let bytes = timed_read(&f).map_err(|e| whole_read_error(&f, e))?;
            loader.add_directory_file(&bytes, &f.display().to_string())?;
        }
        loader.implied = None;
        // Files that are not YAML or JSON by name are not read, only named.
        for f in others {
            match dumps::other_file_reason(&parts(&f)) {
                dumps::CONTAINER_LOG => loader.report.dump.container_logs += 1,
                why => loader
                    .report
                    .skipped_files
                    .push((f.display().to_string(), why.to_string())),
            }
        }
    } else {
        let bytes = timed_read(path).map_err(|e| whole_read_error(path, e))?;
        let file = path.display().to_string();
        loader.add_bytes(&bytes, &file).map_err(|e| match e {
            // A README, a log, a config of something else: say what was expected
            // rather than the parser's complaint about it.
            SnapshotError::Syntax { message, at, .. }
                if !loader::mentions_kind(&bytes) || Format::from_name(&file).is_none() =>
            {
                let line = at.line.map(|l| format!(" at line {l}")).unwrap_or_default();
                SnapshotError::NotASnapshot {
                    file: file.clone(),
                    detail: format!("not YAML or JSON{line}: {message}"),
                }
            }
            SnapshotError::NotAnObject { .. } | SnapshotError::MissingKind { .. }
                if !loader::mentions_kind(&bytes) =>
            {
                SnapshotError::NotASnapshot {
                    file: file.clone(),
                    detail: "it names no `kind` anywhere".into(),
                }
            }
            e => e,
        })?;
    }
    let mut stats = LoadStats {
        read,
        decode: start.elapsed().saturating_sub(read),
        bytes: loader.report.bytes,
        objects: loader.decoded,
        ..LoadStats::default()
    };
    if let Some(p) = progress {
        p.objects.store(loader.decoded, Ordering::Relaxed);
    }
    finish(loader, &mut stats, progress)
}

/// The most a snapshot read whole may hold: past the largest realistic one (15,000
/// nodes as a JSON List are 2.3 GB, and a JSON List file is streamed, not read
/// whole), short of reading a device or an endless pipe until memory runs out.
pub const MAX_WHOLE_READ: u64 = 4 << 30;

/// The whole of `path`, refusing more than `limit` bytes; `/dev/zero` and the like
/// (no text starts with a run of NUL bytes) are refused at the first read.
fn read_whole(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut out = Vec::new();
    if let Ok(m) = file.metadata()
        && m.is_file()
    {
        out.reserve(usize::try_from(m.len().min(limit)).unwrap_or(0));
    }
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match file.read(&mut chunk) {
            Ok(0) => return Ok(out),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if out.is_empty() && n >= 4096 && chunk[..n].iter().all(|&b| b == 0) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "it starts with a run of NUL bytes: not a YAML or JSON snapshot",
            ));
        }
        if (out.len() + n) as u64 > limit {
            return Err(std::io::Error::new(std::io::ErrorKind::FileTooLarge, ""));
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

fn whole_read_error(path: &Path, error: std::io::Error) -> SnapshotError {
    if error.kind() == std::io::ErrorKind::FileTooLarge {
        return SnapshotError::TooLarge {
            file: path.display().to_string(),
            limit_gib: MAX_WHOLE_READ >> 30,
        };
    }
    SnapshotError::Io {
        path: path.to_path_buf(),
        error,
    }
}

fn finish(
    loader: Loader,
    stats: &mut LoadStats,
    progress: Option<&LoadProgress>,
) -> Result<Snapshot, SnapshotError> {
    if let Some(p) = progress {
        p.building_model.store(true, Ordering::Relaxed);
    }
    let t = Instant::now();
    let mut snapshot = loader.finish()?;
    release_free_memory();
    stats.model = t.elapsed();
    snapshot.stats = *stats;
    Ok(snapshot)
}

/// Hand the memory the load freed back to the system. Decoding interleaves the
/// model's long-lived allocations with short-lived ones for every object; glibc's
/// allocator keeps the pages those leave free (hundreds of MB for a large cluster)
/// unless told to release them.
fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim takes no pointers and only returns free
        // memory to the system; it is safe to call at any time from any thread.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Snapshot files under `dir` (and, in `others`, the other files), depth first,
/// entries in name order. Symbolic links to directories are not followed, so a
/// link cycle cannot loop; hidden entries (`.git`) are skipped.
fn snapshot_files(
    dir: &Path,
    out: &mut Vec<PathBuf>,
    others: &mut Vec<PathBuf>,
) -> Result<(), SnapshotError> {
    let io = |e| SnapshotError::Io {
        path: dir.to_path_buf(),
        error: e,
    };
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        entries.push(entry);
    }
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let p = entry.path();
        let kind = entry.file_type().map_err(io)?;
        if kind.is_dir() {
            snapshot_files(&p, out, others)?;
        } else if p.is_file() && Format::from_name(&p.to_string_lossy()).is_some() {
            out.push(p);
        } else if p.is_file() {
            others.push(p);
        }
    }
    Ok(())
}

/// Load a snapshot from text; `origin_name` names it in errors and, by its extension
/// (`.json`), may select the format (otherwise it is sniffed).
pub fn load_snapshot_str(text: &str, origin_name: &str) -> Result<Snapshot, SnapshotError> {
    let start = Instant::now();
    let mut loader = Loader::default();
    loader.report.files.push(origin_name.to_string());
    loader.report.bytes += text.len() as u64;
    loader.add_text(text, origin_name)?;
    let mut stats = LoadStats {
        decode: start.elapsed(),
        bytes: loader.report.bytes,
        objects: loader.decoded,
        ..LoadStats::default()
    };
    finish(loader, &mut stats, None)
}

#[cfg(test)]
mod tests {
    use super::SnapshotError;
    use super::json::kubectl_prefix;
    use super::text::{bytes_to_text, line_col};
    use super::yaml::{is_marker, split_yaml};
    use crate::model::{Cluster, Node};

    /// Issue 26 item 5: what is read whole is bounded, and a device of NULs is
    /// refused at the first read (the limit is 4 GiB; here a small one).
    #[test]
    fn whole_reads_stop_at_the_limit_and_refuse_nul_devices() {
        let dir = std::env::temp_dir().join(format!("schedscope-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("big.yaml");
        std::fs::write(&f, "a".repeat(10_000)).unwrap();
        let e = super::read_whole(&f, 1_000).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::FileTooLarge);
        let msg = super::whole_read_error(&f, e).to_string();
        assert!(
            msg.contains("more than 4 GiB read without reaching its end"),
            "{msg}"
        );
        assert_eq!(super::read_whole(&f, 10_000).unwrap().len(), 10_000);
        let e = super::read_whole(std::path::Path::new("/dev/zero"), 1 << 30).unwrap_err();
        assert!(e.to_string().contains("NUL bytes"), "{e}");
        let msg = super::load_snapshot(std::path::Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert!(
            msg.starts_with("cannot read /dev/zero: it starts with a run of NUL"),
            "{msg}"
        );
    }

    #[test]
    fn split_yaml_counts_lines_and_skips_empty_documents() {
        let text = "---\n# comment\n---\na: 1\n---\n\nb: 2\n...\nc: 3\n--- {d: 4}\n";
        let chunks = split_yaml(text);
        let got: Vec<_> = chunks
            .iter()
            .map(|c| (c.start_line, c.content_line))
            .collect();
        assert_eq!(
            got,
            vec![
                (1, None),
                (3, Some(4)),
                (5, Some(7)),
                (9, Some(9)),
                (10, Some(10))
            ]
        );
        assert_eq!(chunks[2].text, "---\n\nb: 2\n...\n");
    }

    /// `Cluster::upsert_node` re-indexes only the moved positions (changed for bulk
    /// loads): lookups must stay right for out-of-order inserts too.
    #[test]
    fn node_index_after_out_of_order_inserts() {
        let mut c = Cluster::new();
        for name in ["n3", "n1", "n4", "n2", "n0", "n1"] {
            c.upsert_node(Node {
                name: name.into(),
                ..Default::default()
            });
        }
        let names: Vec<_> = c.nodes().iter().map(|n| n.name().to_string()).collect();
        assert_eq!(names, ["n0", "n1", "n2", "n3", "n4"]);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(c.node_position(n), Some(i), "{n}");
            assert_eq!(c.node(n).map(|x| x.name()), Some(n.as_str()));
        }
    }

    /// A large snapshot's load hands the cluster the node indexes it built ahead
    /// (PodTopologySpread's domains); a small one leaves them to the first cycle.
    #[test]
    fn a_large_load_builds_the_node_indexes_ahead() {
        let list = |nodes: usize| {
            let items: Vec<String> = (0..nodes)
                .map(|i| {
                    format!(
                        r#"{{"kind":"Node","apiVersion":"v1","metadata":{{"name":"n{i:04}","labels":{{"kubernetes.io/hostname":"n{i:04}","topology.kubernetes.io/zone":"z{}"}}}},"status":{{"allocatable":{{"cpu":"1","pods":"10"}}}}}}"#,
                        i % 3
                    )
                })
                .collect();
            format!(
                r#"{{"kind":"List","apiVersion":"v1","items":[{}]}}"#,
                items.join(",")
            )
        };
        let cached = |c: &Cluster| format!("{c:?}").contains("PodTopologySpread/domains/");
        let large = super::load_snapshot_str(&list(1_000), "large.json").unwrap();
        assert!(cached(&large.cluster));
        let small = super::load_snapshot_str(&list(3), "small.json").unwrap();
        assert!(!cached(&small.cluster));
    }

    #[test]
    fn marker_needs_whitespace_after() {
        assert!(is_marker("---", "---"));
        assert!(is_marker("--- |", "---"));
        assert!(!is_marker("----", "---"));
        assert!(!is_marker("---x", "---"));
        assert!(!is_marker(" ---", "---"));
    }

    #[test]
    fn kubectl_prefix_fast_path() {
        let s = "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {}}";
        assert_eq!(kubectl_prefix(s), Some(("v1", "Pod")));
        assert_eq!(
            kubectl_prefix("{\"kind\": \"Pod\", \"apiVersion\": \"v1\"}"),
            None
        );
        assert_eq!(
            kubectl_prefix("{\"apiVersion\": \"v\\u0031\", \"kind\": \"Pod\"}"),
            None
        );
        assert_eq!(
            kubectl_prefix("{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}"),
            Some(("v1", "Pod"))
        );
    }

    #[test]
    fn line_col_of_offsets() {
        let t = "ab\ncdé\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 8), (3, 1));
        assert_eq!(line_col(t, 100), (3, 2));
    }

    #[test]
    fn utf16_with_bom_is_decoded() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "kind: Pod".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        assert_eq!(bytes_to_text(&bytes, "f").unwrap(), "kind: Pod");
        assert!(matches!(
            bytes_to_text(&[b'a', 0xC3, 0x28], "f"),
            Err(SnapshotError::NotText { offset: 1, .. })
        ));
    }
}

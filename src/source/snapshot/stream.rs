//! The streaming path for the large-file case: a JSON `kind: List` (what `kubectl get
//! ... -o json` prints) read through a buffered reader, its items cut out one at a
//! time by a structural scan and decoded on worker threads while the file is still
//! being read. The whole text is never held, only a few batches of items.
//!
//! This path only ever succeeds: anything unusual (no List, an item without its own
//! `kind`, a byte that is not UTF-8, a syntax error, an invalid object) makes it give
//! up, and the caller loads the file with the precise path, which produces the same
//! model and the exact error message (file, document, item, line, field).

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::de::IgnoredAny;

use super::decode::{Decoded, Loc, Start};
use super::json::json_item;
use super::loader::Loader;
use super::parallel::{MAX_THREADS, WORKER_STACK};
use crate::source::SnapshotError;

/// How far a load is, for a progress display: updated by the loader as it goes, read
/// from any thread.
#[derive(Debug, Default)]
pub struct LoadProgress {
    /// Bytes of the input read so far.
    pub bytes_read: AtomicU64,
    /// Total bytes to read (the file sizes), known once the load starts.
    pub bytes_total: AtomicU64,
    /// Objects decoded so far.
    pub objects: AtomicU64,
    /// Set once the model is being built from the decoded objects.
    pub building_model: AtomicBool,
}

/// Items per batch handed to a worker, and the batch's size limit in bytes.
const BATCH_ITEMS: usize = 256;
const BATCH_BYTES: usize = 4 << 20;
const READ_BUF: usize = 1 << 20;

/// What the streaming path produced: the loader with every item applied, and the time
/// spent waiting on reads (the rest of the wall time is decoding).
pub(super) struct Streamed {
    pub(super) loader: Loader,
    pub(super) read: Duration,
}

/// A run of consecutive List items: their text back to back, where each ends, and
/// the index of the first.
struct Batch {
    text: Vec<u8>,
    ends: Vec<usize>,
    first: usize,
    /// The batch's place in the input.
    seq: usize,
}

type BatchOut = Option<Vec<Decoded>>;

/// The input, read in blocks.
struct Scanner<'p> {
    file: File,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    read: Duration,
    /// Bytes read so far.
    total: u64,
    progress: Option<&'p LoadProgress>,
}

/// Why the scan stopped without a model: an IO error is reported as is, anything else
/// sends the file to the precise path.
enum Stop {
    Io(std::io::Error),
    Fallback,
}

impl From<std::io::Error> for Stop {
    fn from(e: std::io::Error) -> Self {
        Stop::Io(e)
    }
}

impl Scanner<'_> {
    /// Fill the buffer when it is used up; false at the end of the file.
    fn fill(&mut self) -> Result<bool, Stop> {
        if self.pos < self.len {
            return Ok(true);
        }
        let t = Instant::now();
        let n = loop {
            match self.file.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Stop::Io(e)),
            }
        };
        self.read += t.elapsed();
        self.total += n as u64;
        if let Some(p) = self.progress {
            p.bytes_read.fetch_add(n as u64, Ordering::Relaxed);
        }
        self.pos = 0;
        self.len = n;
        Ok(n > 0)
    }

    fn peek(&mut self) -> Result<Option<u8>, Stop> {
        Ok(if self.fill()? {
            Some(self.buf[self.pos])
        } else {
            None
        })
    }

    fn skip_ws(&mut self) -> Result<Option<u8>, Stop> {
        loop {
            match self.peek()? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.pos += 1,
                other => return Ok(other),
            }
        }
    }

    fn expect(&mut self, b: u8) -> Result<(), Stop> {
        if self.skip_ws()? != Some(b) {
            return Err(Stop::Fallback);
        }
        self.pos += 1;
        Ok(())
    }

    /// A key without escapes (anything else is left to the precise path).
    fn key(&mut self) -> Result<Vec<u8>, Stop> {
        self.expect(b'"')?;
        let mut key = Vec::new();
        loop {
            match self.peek()? {
                None | Some(b'\\') => return Err(Stop::Fallback),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(key);
                }
                Some(b) => {
                    key.push(b);
                    self.pos += 1;
                }
            }
        }
    }

    /// Append one JSON value's text to `out`. Objects and arrays are delimited by a
    /// bracket count outside strings; their syntax is checked when they are decoded.
    fn value(&mut self, out: &mut Vec<u8>) -> Result<(), Stop> {
        match self.skip_ws()? {
            Some(b'{' | b'[') => self.compound(out),
            Some(b'"') => {
                out.push(b'"');
                self.pos += 1;
                self.rest_of_string(out)
            }
            Some(_) => {
                // A number, true, false or null: up to the next delimiter.
                while let Some(b) = self.peek()? {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        return Ok(());
                    }
                    out.push(b);
                    self.pos += 1;
                }
                Ok(())
            }
            None => Err(Stop::Fallback),
        }
    }

    fn rest_of_string(&mut self, out: &mut Vec<u8>) -> Result<(), Stop> {
        let mut escaped = false;
        loop {
            if !self.fill()? {
                return Err(Stop::Fallback);
            }
            let chunk = &self.buf[self.pos..self.len];
            for (i, &b) in chunk.iter().enumerate() {
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    out.extend_from_slice(&chunk[..=i]);
                    self.pos += i + 1;
                    return Ok(());
                }
            }
            out.extend_from_slice(chunk);
            self.pos = self.len;
        }
    }

    fn compound(&mut self, out: &mut Vec<u8>) -> Result<(), Stop> {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        loop {
            if !self.fill()? {
                return Err(Stop::Fallback);
            }
            let chunk = &self.buf[self.pos..self.len];
            let mut end = None;
            for (i, &b) in chunk.iter().enumerate() {
                if in_string {
                    if escaped {
                        escaped = false;
                    } else if b == b'\\' {
                        escaped = true;
                    } else if b == b'"' {
                        in_string = false;
                    }
                } else {
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(i + 1);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
            }
            let n = end.unwrap_or(chunk.len());
            out.extend_from_slice(&chunk[..n]);
            self.pos += n;
            if end.is_some() {
                return Ok(());
            }
        }
    }
}

/// Load `path` as one JSON List through the streaming path. `Ok(None)`: the file is
/// not that case (or has something wrong in it); load it the precise way.
pub(super) fn stream_json_list(
    path: &Path,
    file_name: &str,
    progress: Option<&LoadProgress>,
) -> Result<Option<Streamed>, SnapshotError> {
    let io = |e| SnapshotError::Io {
        path: path.to_path_buf(),
        error: e,
    };
    let file = File::open(path).map_err(io)?;
    let mut sc = Scanner {
        file,
        buf: vec![0; READ_BUF],
        pos: 0,
        len: 0,
        read: Duration::ZERO,
        total: 0,
        progress,
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .clamp(1, MAX_THREADS);
    // Few batches in flight: memory stays bounded by them, not by the file.
    let (work_tx, work_rx) = sync_channel::<Batch>(threads * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, BatchOut)>();
    let failed = AtomicBool::new(false);

    let scanned = std::thread::scope(|scope| {
        for _ in 0..threads {
            let rx = Arc::clone(&work_rx);
            let tx = done_tx.clone();
            let failed = &failed;
            let builder = std::thread::Builder::new().stack_size(WORKER_STACK);
            let spawned = builder.spawn_scoped(scope, move || {
                worker(&rx, &tx, failed, file_name, progress);
            });
            if spawned.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
        }
        drop(done_tx);
        let r = scan_list(&mut sc, work_tx, &failed);
        if r.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        r
    });
    let top = match scanned {
        Ok(top) => top,
        Err(Stop::Io(e)) => return Err(io(e)),
        Err(Stop::Fallback) => return Ok(None),
    };
    if failed.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut outs: Vec<Option<Vec<Decoded>>> = Vec::new();
    for (i, out) in done_rx.iter() {
        let Some(out) = out else { return Ok(None) };
        if outs.len() <= i {
            outs.resize_with(i + 1, || None);
        }
        outs[i] = Some(out);
    }
    if outs.len() != top.batches || outs.iter().any(Option::is_none) {
        return Ok(None);
    }
    let mut loader = Loader::default();
    loader.report.files.push(file_name.to_string());
    loader.report.bytes += top.bytes;
    loader.report.documents += 1;
    for d in outs.into_iter().flatten().flatten() {
        loader.apply(d);
    }
    Ok(Some(Streamed {
        loader,
        read: sc.read,
    }))
}

/// What the scan of the top-level object found.
struct Top {
    batches: usize,
    bytes: u64,
}

/// Scan `{ ..., "items": [ ... ], ... }`, sending items to the workers in batches;
/// the object must be a List with nothing after it.
fn scan_list(
    sc: &mut Scanner<'_>,
    work: std::sync::mpsc::SyncSender<Batch>,
    failed: &AtomicBool,
) -> Result<Top, Stop> {
    sc.expect(b'{')?;
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let (mut api_version, mut kind) = (None, None);
    let mut batches = 0;
    let mut items = false;
    if sc.skip_ws()? == Some(b'}') {
        return Err(Stop::Fallback);
    }
    loop {
        let key = sc.key()?;
        if seen.contains(&key) {
            return Err(Stop::Fallback);
        }
        seen.push(key.clone());
        sc.expect(b':')?;
        if key == b"items" {
            batches = scan_items(sc, &work, failed)?;
            items = true;
        } else {
            let mut v = Vec::new();
            sc.value(&mut v)?;
            // Every value must be valid JSON, as the precise path's parse checks.
            if serde_json::from_slice::<IgnoredAny>(&v).is_err() {
                return Err(Stop::Fallback);
            }
            match key.as_slice() {
                b"apiVersion" => api_version = Some(v),
                b"kind" => kind = Some(v),
                _ => {}
            }
        }
        match sc.skip_ws()? {
            Some(b',') => sc.pos += 1,
            Some(b'}') => {
                sc.pos += 1;
                break;
            }
            _ => return Err(Stop::Fallback),
        }
    }
    if sc.skip_ws()?.is_some() {
        // More documents after the List: the precise path reads streams of objects.
        return Err(Stop::Fallback);
    }
    drop(work);
    let string = |v: &Option<Vec<u8>>| match v {
        None => Ok(None),
        Some(v) => serde_json::from_slice::<Option<String>>(v).map_err(|_| Stop::Fallback),
    };
    string(&api_version)?;
    let is_list = string(&kind)?.is_some_and(|k| k.ends_with("List"));
    if !(items && is_list) {
        return Err(Stop::Fallback);
    }
    Ok(Top {
        batches,
        bytes: sc.total,
    })
}

/// Scan the items array, sending batches; the number of batches sent.
fn scan_items(
    sc: &mut Scanner<'_>,
    work: &std::sync::mpsc::SyncSender<Batch>,
    failed: &AtomicBool,
) -> Result<usize, Stop> {
    sc.expect(b'[')?;
    let new_batch = |first, seq| Batch {
        text: Vec::with_capacity(BATCH_BYTES / 4),
        ends: Vec::with_capacity(BATCH_ITEMS),
        first,
        seq,
    };
    let mut batch = new_batch(0, 0);
    let mut sent = 0;
    let mut index = 0;
    if sc.skip_ws()? == Some(b']') {
        sc.pos += 1;
        return Ok(0);
    }
    loop {
        if sc.skip_ws()? != Some(b'{') {
            return Err(Stop::Fallback);
        }
        sc.value(&mut batch.text)?;
        batch.ends.push(batch.text.len());
        index += 1;
        if batch.ends.len() >= BATCH_ITEMS || batch.text.len() >= BATCH_BYTES {
            if failed.load(Ordering::Relaxed) {
                return Err(Stop::Fallback);
            }
            let full = std::mem::replace(&mut batch, new_batch(index, sent + 1));
            work.send(full).map_err(|_| Stop::Fallback)?;
            sent += 1;
        }
        match sc.skip_ws()? {
            Some(b',') => sc.pos += 1,
            Some(b']') => {
                sc.pos += 1;
                break;
            }
            _ => return Err(Stop::Fallback),
        }
    }
    if !batch.ends.is_empty() {
        work.send(batch).map_err(|_| Stop::Fallback)?;
        sent += 1;
    }
    Ok(sent)
}

fn worker(
    rx: &Mutex<Receiver<Batch>>,
    tx: &std::sync::mpsc::Sender<(usize, BatchOut)>,
    failed: &AtomicBool,
    file_name: &str,
    progress: Option<&LoadProgress>,
) {
    loop {
        let batch = match rx.lock() {
            Ok(rx) => match rx.recv() {
                Ok(b) => b,
                Err(_) => return,
            },
            Err(_) => return,
        };
        let seq = batch.seq;
        let out = if failed.load(Ordering::Relaxed) {
            None
        } else {
            decode_batch(&batch, file_name, progress)
        };
        if out.is_none() {
            failed.store(true, Ordering::Relaxed);
        }
        if tx.send((seq, out)).is_err() {
            return;
        }
    }
}

/// Decode a batch's items; `None` when any of them is not the plain case.
fn decode_batch(batch: &Batch, file_name: &str, progress: Option<&LoadProgress>) -> BatchOut {
    let text = std::str::from_utf8(&batch.text).ok()?;
    let loc = Loc {
        file: file_name,
        text,
        document: 1,
        item: None,
        array: false,
        start: Start::Offset(0),
    };
    let mut out = Vec::with_capacity(batch.ends.len());
    let mut start = 0;
    for (k, &end) in batch.ends.iter().enumerate() {
        let s = &text[start..end];
        start = end;
        // Without its own kind, an item takes the List's, which may come after the
        // items: the precise path handles that.
        let (_, kind) = super::json::peek_json(s).ok()?;
        kind.filter(|k| !k.is_empty())?;
        let d = json_item(s, batch.first + k, None, None, &loc, 0).ok()?;
        out.push(d);
    }
    if let Some(p) = progress {
        p.objects
            .fetch_add(batch.ends.len() as u64, Ordering::Relaxed);
    }
    Some(out)
}

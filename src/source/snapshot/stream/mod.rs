//! The streaming path for the large-file case: a JSON `kind: List` (what `kubectl get
//! ... -o json` prints) read in blocks, its items found in place by a structural scan
//! and decoded on worker threads while the file is still being read, the decoded
//! objects applied to the model in input order as they come back. The whole text is
//! never held, only a few batches of items.
//!
//! A batch is a read buffer: the file is read straight into it, the complete items in
//! it are found where they lie, and when it is full it goes to a worker as it is; only
//! the unfinished item at its end is copied into the next buffer. Workers hand the
//! buffers back for reuse.
//!
//! This path only ever succeeds: anything unusual (no List, an item without its own
//! `kind`, a byte that is not UTF-8, a syntax error, an invalid object) makes it give
//! up, and the caller loads the file with the precise path, which produces the same
//! model and the exact error message (file, document, item, line, field).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, TrySendError, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memchr::memchr2;
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

/// Bounds of a batch's size in bytes (it is also the size of a read). Within them a
/// file is cut into `BATCHES_PER_THREAD` batches per worker at least, so that a
/// small file keeps every worker busy too. All batches in flight (a few per worker)
/// are resident at once, on top of the model being built, so they are kept small.
const MAX_BATCH_BYTES: usize = 1 << 20;
const MIN_BATCH_BYTES: usize = 64 << 10;
const BATCHES_PER_THREAD: u64 = 8;

fn batch_bytes(file_len: u64, threads: usize) -> usize {
    let per_batch = file_len / (threads as u64 * BATCHES_PER_THREAD);
    usize::try_from(per_batch)
        .unwrap_or(MAX_BATCH_BYTES)
        .clamp(MIN_BATCH_BYTES, MAX_BATCH_BYTES)
}

/// What the streaming path produced: the loader with every item applied, and the time
/// spent waiting on reads (the rest of the wall time is decoding).
pub(super) struct Streamed {
    pub(super) loader: Loader,
    pub(super) read: Duration,
}

/// A read buffer with the List items found complete in it, as byte ranges, and the
/// index of the first of them.
struct Batch {
    buf: Vec<u8>,
    spans: Vec<(usize, usize)>,
    first: usize,
    /// The batch's place in the input.
    seq: usize,
}

type BatchOut = Option<Vec<Decoded>>;

/// Why the scan stopped without a model: an IO error is reported as is, anything else
/// sends the file to the precise path.
enum Stop {
    Io(std::io::Error),
    Fallback,
}

/// What a byte means to the structural scan outside strings.
const PLAIN: u8 = 0;
const QUOTE: u8 = 1;
const OPEN: u8 = 2;
const CLOSE: u8 = 3;
static CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    class[b'"' as usize] = QUOTE;
    class[b'{' as usize] = OPEN;
    class[b'[' as usize] = OPEN;
    class[b'}' as usize] = CLOSE;
    class[b']' as usize] = CLOSE;
    class
};

/// The input, read into batch buffers.
struct Scanner<'p, R> {
    src: R,
    /// `buf[..len]` holds what was read into this buffer, `buf[pos..len]` what is not
    /// scanned yet.
    buf: Vec<u8>,
    len: usize,
    pos: usize,
    /// Start of the earliest text still needed (the item, key or value being
    /// scanned): room for a read is made by dropping what comes before it.
    mark: usize,
    /// Size of a new buffer.
    batch_bytes: usize,
    /// The complete List items in `buf`, and the index of the first.
    spans: Vec<(usize, usize)>,
    first: usize,
    /// Buffers of complete items, ready to be sent in this order.
    full: Vec<Batch>,
    /// Buffers the workers are done with.
    spare: Option<Receiver<Vec<u8>>>,
    eof: bool,
    read: Duration,
    /// Bytes read so far.
    total: u64,
    progress: Option<&'p LoadProgress>,
}

impl<'p, R: Read> Scanner<'p, R> {
    fn new(src: R, batch_bytes: usize, progress: Option<&'p LoadProgress>) -> Self {
        Scanner {
            src,
            buf: vec![0; batch_bytes.max(1)],
            len: 0,
            pos: 0,
            mark: 0,
            batch_bytes: batch_bytes.max(1),
            spans: Vec::new(),
            first: 0,
            full: Vec::new(),
            spare: None,
            eof: false,
            read: Duration::ZERO,
            total: 0,
            progress,
        }
    }

    /// Read more after `buf[..len]`, making room first when the buffer is full; false
    /// at the end of the input.
    fn more(&mut self) -> Result<bool, Stop> {
        if self.eof {
            return Ok(false);
        }
        if self.len == self.buf.len() {
            self.rebuffer(self.mark);
        }
        let t = Instant::now();
        let n = loop {
            match self.src.read(&mut self.buf[self.len..]) {
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
        self.len += n;
        self.eof = n == 0;
        Ok(n > 0)
    }

    /// Go on in a buffer that starts with `buf[keep..len]` and has room for a read of
    /// at least that much again. The complete items found so far go out with the old
    /// buffer, to be sent; without any, the old buffer is reused.
    fn rebuffer(&mut self, keep: usize) {
        let kept = self.len - keep;
        let size = self.batch_bytes.max(kept.saturating_mul(2));
        if self.spans.is_empty() {
            self.buf.copy_within(keep..self.len, 0);
            if self.buf.len() < size {
                self.buf.resize(size, 0);
            }
        } else {
            let mut next = self.fresh_buffer(size);
            next[..kept].copy_from_slice(&self.buf[keep..self.len]);
            let buf = std::mem::replace(&mut self.buf, next);
            let spans = std::mem::take(&mut self.spans);
            let first = self.first;
            self.first += spans.len();
            self.full.push(Batch {
                buf,
                spans,
                first,
                seq: 0,
            });
        }
        self.len = kept;
        self.pos -= keep;
        self.mark = self.mark.saturating_sub(keep);
    }

    /// A buffer of at least `size` bytes: one a worker handed back if it fits (one
    /// grown far larger for a huge item is let go), else a new one.
    fn fresh_buffer(&mut self, size: usize) -> Vec<u8> {
        let limit = size.max(self.batch_bytes * 2);
        let spare = self.spare.as_ref().and_then(|r| r.try_recv().ok());
        match spare {
            Some(b) if b.len() >= size && b.len() <= limit => b,
            _ => vec![0; size],
        }
    }

    fn peek(&mut self) -> Result<Option<u8>, Stop> {
        if self.pos >= self.len && !self.more()? {
            return Ok(None);
        }
        Ok(Some(self.buf[self.pos]))
    }

    /// Skip whitespace; the next byte, with `mark` on it (nothing before it is needed
    /// any more).
    fn skip_ws(&mut self) -> Result<Option<u8>, Stop> {
        loop {
            self.mark = self.pos;
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
        // `mark` stays on the opening quote.
        self.expect(b'"')?;
        loop {
            let rest = &self.buf[self.pos..self.len];
            match memchr2(b'"', b'\\', rest) {
                Some(i) if rest[i] == b'"' => {
                    let key = self.buf[self.mark + 1..self.pos + i].to_vec();
                    self.pos += i + 1;
                    return Ok(key);
                }
                Some(_) => return Err(Stop::Fallback),
                None => {
                    self.pos = self.len;
                    if !self.more()? {
                        return Err(Stop::Fallback);
                    }
                }
            }
        }
    }

    /// One JSON value's text. Objects and arrays are delimited by a bracket count
    /// outside strings; their syntax is checked when they are decoded.
    fn value(&mut self) -> Result<Vec<u8>, Stop> {
        // `mark` stays on the value's first byte.
        match self.skip_ws()? {
            Some(b'{' | b'[') => self.compound()?,
            Some(b'"') => {
                self.pos += 1;
                self.rest_of_string()?;
            }
            Some(_) => {
                // A number, true, false or null: up to the next delimiter.
                while let Some(b) = self.peek()? {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.pos += 1;
                }
            }
            None => return Err(Stop::Fallback),
        }
        Ok(self.buf[self.mark..self.pos].to_vec())
    }

    /// Past the closing quote of a string whose opening quote is behind `pos`.
    fn rest_of_string(&mut self) -> Result<(), Stop> {
        loop {
            if self.pos >= self.len && !self.more()? {
                return Err(Stop::Fallback);
            }
            let rest = &self.buf[self.pos..self.len];
            match memchr2(b'"', b'\\', rest) {
                None => self.pos = self.len,
                Some(i) if rest[i] == b'"' => {
                    self.pos += i + 1;
                    return Ok(());
                }
                Some(i) => {
                    // Whatever follows a backslash is part of the string (`\"`, `\\`).
                    self.pos += i + 1;
                    if self.pos >= self.len && !self.more()? {
                        return Err(Stop::Fallback);
                    }
                    self.pos += 1;
                }
            }
        }
    }

    /// Past the object or array that starts at `pos`.
    fn compound(&mut self) -> Result<(), Stop> {
        let mut depth = 0usize;
        loop {
            if self.pos >= self.len && !self.more()? {
                return Err(Stop::Fallback);
            }
            let start = self.pos;
            let mut string_at = None;
            for (i, &b) in self.buf[start..self.len].iter().enumerate() {
                match CLASS[b as usize] {
                    PLAIN => {}
                    QUOTE => {
                        string_at = Some(start + i);
                        break;
                    }
                    OPEN => depth += 1,
                    _ => {
                        // The first byte opens, so a close always has its opener.
                        depth -= 1;
                        if depth == 0 {
                            self.pos = start + i + 1;
                            return Ok(());
                        }
                    }
                }
            }
            match string_at {
                Some(q) => {
                    self.pos = q + 1;
                    self.rest_of_string()?;
                }
                None => self.pos = self.len,
            }
        }
    }

    /// Send the complete items read so far with their buffer, keeping what follows.
    fn hand_over_items(&mut self) {
        if !self.spans.is_empty() {
            self.rebuffer(self.pos);
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
    let file_len = file.metadata().map_err(io)?.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .clamp(1, MAX_THREADS);
    match stream_from(
        file,
        file_name,
        batch_bytes(file_len, threads),
        threads,
        progress,
    ) {
        Ok(streamed) => Ok(Some(streamed)),
        Err(Stop::Io(e)) => Err(io(e)),
        Err(Stop::Fallback) => Ok(None),
    }
}

/// The streaming load of one JSON List from `src`, with `threads` decoding workers and
/// batches of `batch_bytes`.
fn stream_from<R: Read>(
    src: R,
    file_name: &str,
    batch_bytes: usize,
    threads: usize,
    progress: Option<&LoadProgress>,
) -> Result<Streamed, Stop> {
    let mut sc = Scanner::new(src, batch_bytes, progress);
    let (spare_tx, spare_rx) = channel::<Vec<u8>>();
    sc.spare = Some(spare_rx);
    // Few batches in flight: memory stays bounded by them, not by the file.
    let (work_tx, work_rx) = sync_channel::<Batch>(threads * 2);
    let work_rx = Arc::new(Mutex::new(work_rx));
    let (done_tx, done_rx) = channel::<(usize, BatchOut)>();
    let failed = AtomicBool::new(false);

    let mut loader = Loader::default();
    loader.report.files.push(file_name.to_string());
    loader.report.documents += 1;
    let loaded = std::thread::scope(|scope| {
        for _ in 0..threads {
            let rx = Arc::clone(&work_rx);
            let tx = done_tx.clone();
            let spare = spare_tx.clone();
            let failed = &failed;
            let builder = std::thread::Builder::new().stack_size(WORKER_STACK);
            let spawned = builder.spawn_scoped(scope, move || {
                worker(&rx, &tx, &spare, failed, file_name, progress);
            });
            if spawned.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
        }
        drop(done_tx);
        let mut feed = Feed {
            work: Some(work_tx),
            done: done_rx,
            decoded: BTreeMap::new(),
            sent: 0,
            applied: 0,
            loader,
            failed: &failed,
        };
        let scanned = scan_list(&mut sc, &mut |batch| feed.send(batch));
        if scanned.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        // Closes the work channel whatever happened, so the workers end.
        let loader = feed.finish();
        scanned.and(loader)
    });
    let mut loader = loaded?;
    loader.report.bytes += sc.total;
    Ok(Streamed {
        loader,
        read: sc.read,
    })
}

/// The scanner's side of the workers: sends batches and applies what comes back in
/// input order while the scan goes on.
struct Feed<'a> {
    /// `None` once closed.
    work: Option<SyncSender<Batch>>,
    done: Receiver<(usize, BatchOut)>,
    /// Decoded batches that came back before an earlier one, by place.
    decoded: BTreeMap<usize, Vec<Decoded>>,
    sent: usize,
    applied: usize,
    loader: Loader,
    failed: &'a AtomicBool,
}

impl Feed<'_> {
    /// Send a batch; while the workers are all busy, apply what they return.
    fn send(&mut self, mut batch: Batch) -> Result<(), Stop> {
        batch.seq = self.sent;
        loop {
            if self.failed.load(Ordering::Relaxed) {
                return Err(Stop::Fallback);
            }
            let work = self.work.as_ref().ok_or(Stop::Fallback)?;
            match work.try_send(batch) {
                Ok(()) => break,
                Err(TrySendError::Full(b)) => {
                    batch = b;
                    // A worker is decoding (the queue is full), so an answer comes.
                    let out = self.done.recv().map_err(|_| Stop::Fallback)?;
                    self.take(out)?;
                }
                Err(TrySendError::Disconnected(_)) => return Err(Stop::Fallback),
            }
        }
        self.sent += 1;
        while let Ok(out) = self.done.try_recv() {
            self.take(out)?;
        }
        Ok(())
    }

    fn take(&mut self, (seq, out): (usize, BatchOut)) -> Result<(), Stop> {
        let out = out.ok_or(Stop::Fallback)?;
        self.decoded.insert(seq, out);
        while let Some(out) = self.decoded.remove(&self.applied) {
            for d in out {
                self.loader.apply(d);
            }
            self.applied += 1;
        }
        Ok(())
    }

    /// Close the work channel, apply the rest; the loader once every batch sent is in.
    fn finish(mut self) -> Result<Loader, Stop> {
        drop(self.work.take());
        while let Ok(out) = self.done.recv() {
            self.take(out)?;
        }
        if self.failed.load(Ordering::Relaxed) || self.applied != self.sent {
            return Err(Stop::Fallback);
        }
        Ok(self.loader)
    }
}

/// Scan `{ ..., "items": [ ... ], ... }`, handing the items to `send` in batches; the
/// object must be a List with nothing after it.
fn scan_list<R: Read>(
    sc: &mut Scanner<'_, R>,
    send: &mut dyn FnMut(Batch) -> Result<(), Stop>,
) -> Result<(), Stop> {
    sc.expect(b'{')?;
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let (mut api_version, mut kind) = (None, None);
    let mut items = false;
    if sc.skip_ws()? == Some(b'}') {
        return Err(Stop::Fallback);
    }
    loop {
        let key = sc.key()?;
        if seen.contains(&key) || std::str::from_utf8(&key).is_err() {
            return Err(Stop::Fallback);
        }
        seen.push(key.clone());
        sc.expect(b':')?;
        if key == b"items" {
            scan_items(sc, send)?;
            items = true;
        } else {
            let v = sc.value()?;
            // Every value must be valid JSON and UTF-8, as the precise path checks.
            if std::str::from_utf8(&v).is_err() || serde_json::from_slice::<IgnoredAny>(&v).is_err()
            {
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
    let string = |v: &Option<Vec<u8>>| match v {
        None => Ok(None),
        Some(v) => serde_json::from_slice::<Option<String>>(v).map_err(|_| Stop::Fallback),
    };
    string(&api_version)?;
    let is_list = string(&kind)?.is_some_and(|k| k.ends_with("List"));
    if !(items && is_list) {
        return Err(Stop::Fallback);
    }
    Ok(())
}

/// Scan the items array, handing full buffers of items to `send` as they fill up.
fn scan_items<R: Read>(
    sc: &mut Scanner<'_, R>,
    send: &mut dyn FnMut(Batch) -> Result<(), Stop>,
) -> Result<(), Stop> {
    sc.expect(b'[')?;
    if sc.skip_ws()? == Some(b']') {
        sc.pos += 1;
        return Ok(());
    }
    loop {
        // `mark` stays on the item's first byte.
        if sc.skip_ws()? != Some(b'{') {
            return Err(Stop::Fallback);
        }
        sc.compound()?;
        sc.spans.push((sc.mark, sc.pos));
        for batch in sc.full.drain(..) {
            send(batch)?;
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
    sc.hand_over_items();
    for batch in sc.full.drain(..) {
        send(batch)?;
    }
    Ok(())
}

fn worker(
    rx: &Mutex<Receiver<Batch>>,
    tx: &Sender<(usize, BatchOut)>,
    spare: &Sender<Vec<u8>>,
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
        // The scanner may be done and gone: then the buffer is simply freed.
        let _ = spare.send(batch.buf);
        if tx.send((seq, out)).is_err() {
            return;
        }
    }
}

/// Decode a batch's items; `None` when any of them is not the plain case.
fn decode_batch(batch: &Batch, file_name: &str, progress: Option<&LoadProgress>) -> BatchOut {
    let (&(lo, _), &(_, hi)) = (batch.spans.first()?, batch.spans.last()?);
    // Between items there is only ASCII (commas, whitespace).
    let text = std::str::from_utf8(batch.buf.get(lo..hi)?).ok()?;
    let loc = Loc {
        file: file_name,
        text,
        document: 1,
        item: None,
        array: false,
        start: Start::Offset(0),
    };
    let mut out = Vec::with_capacity(batch.spans.len());
    for (k, &(start, end)) in batch.spans.iter().enumerate() {
        let s = text.get(start - lo..end - lo)?;
        // Without its own kind, an item takes the List's, which may come after the
        // items: the precise path handles that.
        let (_, kind) = super::json::peek_json(s).ok()?;
        kind.filter(|k| !k.is_empty())?;
        let d = json_item(s, batch.first + k, None, None, &loc, 0).ok()?;
        out.push(d);
    }
    if let Some(p) = progress {
        p.objects
            .fetch_add(batch.spans.len() as u64, Ordering::Relaxed);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::snapshot::json::JsonTop;
    use crate::source::snapshot::{Snapshot, load_snapshot_str};

    /// A reader that hands out at most `step` bytes per read, so that reads (and with
    /// them buffer edges) fall at every offset of the text.
    struct Trickle<'a> {
        rest: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(out.len()).min(self.rest.len());
            out[..n].copy_from_slice(&self.rest[..n]);
            self.rest = &self.rest[n..];
            Ok(n)
        }
    }

    const STEPS: [usize; 5] = [1, 2, 3, 7, usize::MAX];

    /// Items whose strings hold what a bracket count or a quote search gets wrong:
    /// escaped quotes, backslashes right before a closing quote (`\\"`), brackets,
    /// unicode escapes and multi-byte characters.
    fn tricky_items() -> Vec<String> {
        vec![
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"quotes","annotations":{"q":"say \"hi\" {[","b":"back\\slash","e":"ends with \\","ee":"\\\"","eee":"\\\\\"]}","br":"]}],{","u":"\u00e9\u65e5 é 日本 🚀 \ud83d\ude80","n":"tab\there\nline"}}}"#.to_string(),
            r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","labels":{"k\"ey":"v\\","zone":"z{1}"}},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"images":[{"names":["img:\"1\"","[x]"],"sizeBytes":1000}]}}"#.to_string(),
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"quotes","annotations":{"a":"}}}]]]\\\\","b":"{\"json\": [1, 2, {\"x\": \"\\\\\"}]}"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"img:\"1\"","args":["\\","\"","[","{","]}"],"resources":{"requests":{"cpu":"100m"}}}],"priority":7,"tolerations":[],"affinity":{}}}"#.to_string(),
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2","namespace":"quotes","labels":{"é":"日本"}},"spec":{"containers":[{"name":"c","image":"i","env":[{"name":"X","value":"{\"a\":[\"]\"]}"}]}],"priority":-3,"enableServiceLinks":true,"hostNetwork":false,"runtimeClassName":null}}"#.to_string(),
            r#"{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high \\\" [{"},"value":1000,"globalDefault":false,"description":"\\\\\\\""}"#.to_string(),
        ]
    }

    fn list(items: &[String], head: &str, tail: &str, sep: &str) -> String {
        format!("{{{head}\"items\":[{}]{tail}}}", items.join(sep))
    }

    /// The same List in the layouts kubectl and others print: compact, pretty, with
    /// the List's own keys after the items, and with odd whitespace everywhere.
    fn layouts(items: &[String]) -> Vec<(&'static str, String)> {
        let compact = list(items, r#""apiVersion":"v1","kind":"List","#, "", ",");
        let value: serde_json::Value = serde_json::from_str(&compact).unwrap();
        vec![
            ("compact", compact),
            ("pretty", serde_json::to_string_pretty(&value).unwrap()),
            (
                "kind last",
                list(
                    items,
                    r#""apiVersion":"v1","#,
                    r#","kind":"List","metadata":{"resourceVersion":"\"{["}"#,
                    ",",
                ),
            ),
            (
                "spaced",
                format!(
                    " \r\n\t{{ \"kind\" : \"List\" ,\n \"items\" :\t[ \n{} \n] , \"x\" : [ 1 , {{ }} , \"]\" ] }} \n",
                    items.join(" ,\r\n ")
                ),
            ),
        ]
    }

    /// The items' texts a scan finds, in order; `None` when it gives up.
    fn scanned_items(text: &[u8], buffer: usize, step: usize) -> Option<Vec<String>> {
        let src = Trickle { rest: text, step };
        let mut sc = Scanner::new(src, buffer, None);
        let mut found = Vec::new();
        let mut collect = |b: Batch| {
            assert_eq!(b.first, found.len(), "batches come in input order");
            assert!(!b.spans.is_empty(), "no empty batch is sent");
            for &(s, e) in &b.spans {
                found.push(String::from_utf8_lossy(&b.buf[s..e]).into_owned());
            }
            Ok(())
        };
        scan_list(&mut sc, &mut collect).ok()?;
        assert_eq!(sc.total, text.len() as u64, "the whole input is read");
        Some(found)
    }

    /// The structural scan cuts out exactly the items serde_json finds, whatever the
    /// buffer size and wherever the reads end.
    #[test]
    fn scan_finds_the_items_serde_finds_at_every_buffer_edge() {
        for (what, text) in layouts(&tricky_items()) {
            let top: JsonTop = serde_json::from_str(&text).unwrap();
            let want: Vec<String> = top.items.unwrap().iter().map(|r| r.get().into()).collect();
            for buffer in 1..=text.len() + 1 {
                for step in STEPS {
                    let got = scanned_items(text.as_bytes(), buffer, step);
                    assert_eq!(
                        got.as_ref(),
                        Some(&want),
                        "{what}, buffer {buffer}, step {step}"
                    );
                }
            }
        }
    }

    /// Text the scan must give up on (the precise path then reports it), at every
    /// buffer edge: it never runs past the end or panics.
    #[test]
    fn scan_gives_up_on_broken_structure() {
        let item = &tricky_items()[0];
        let cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "unterminated string",
                br#"{"kind":"List","items":[{"a":"b\"}]}"#.to_vec(),
            ),
            (
                "backslash at the end",
                br#"{"kind":"List","items":[{"a":"b\"#.to_vec(),
            ),
            (
                "unclosed item",
                format!(r#"{{"kind":"List","items":[{}"#, &item[..item.len() - 1]).into_bytes(),
            ),
            (
                "extra close",
                format!(r#"{{"kind":"List","items":[{item}}}]}}"#).into_bytes(),
            ),
            (
                "not an object",
                br#"{"kind":"List","items":[{"a":1}, "x"]}"#.to_vec(),
            ),
            (
                "escaped key",
                br#"{"kind":"List","it\u0065ms":[]}"#.to_vec(),
            ),
            (
                "key repeated",
                br#"{"kind":"List","items":[],"items":[]}"#.to_vec(),
            ),
            (
                "two documents",
                br#"{"kind":"List","items":[]} {"kind":"List","items":[]}"#.to_vec(),
            ),
            ("not a list", br#"{"kind":"Pod","items":[]}"#.to_vec()),
            ("no items", br#"{"kind":"List"}"#.to_vec()),
            (
                "bad top value",
                br#"{"kind":"List","x":tru,"items":[]}"#.to_vec(),
            ),
            (
                "top value not UTF-8",
                b"{\"kind\":\"List\",\"x\":\"\xff\",\"items\":[]}".to_vec(),
            ),
            ("empty", Vec::new()),
        ];
        for (what, text) in cases {
            for buffer in 1..=text.len() + 1 {
                for step in STEPS {
                    assert_eq!(
                        scanned_items(&text, buffer, step),
                        None,
                        "{what}, buffer {buffer}, step {step}"
                    );
                }
            }
        }
    }

    /// What the model holds, in a form that compares (the report, every node and pod,
    /// the maps the tricky items fill).
    fn model(s: &Snapshot) -> String {
        format!(
            "{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{}",
            s.report,
            s.cluster.nodes(),
            s.cluster.pods().collect::<Vec<_>>(),
            s.cluster.namespaces,
            s.cluster.priority_classes,
            s.stats.objects,
        )
    }

    fn streamed(text: &[u8], buffer: usize, step: usize, threads: usize) -> Option<Snapshot> {
        let src = Trickle { rest: text, step };
        match stream_from(src, "c.json", buffer, threads, None) {
            Ok(s) => {
                let objects = s.loader.decoded;
                let mut snap = s.loader.finish().ok()?;
                snap.stats.objects = objects;
                Some(snap)
            }
            Err(Stop::Fallback) => None,
            Err(Stop::Io(e)) => panic!("no IO error from memory: {e}"),
        }
    }

    /// The streaming path builds the very model the precise path builds from the
    /// same text, wherever the buffer edges fall.
    #[test]
    fn streamed_model_equals_precise_model_at_every_buffer_edge() {
        let mut items = tricky_items();
        // A later duplicate replaces the earlier one, in input order.
        items.push(items[2].replace(r#""priority":7"#, r#""priority":8"#));
        for (what, text) in layouts(&items) {
            let want = model(&load_snapshot_str(&text, "c.json").unwrap());
            for buffer in [
                1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610, 987, 4096,
            ] {
                for step in [1, 3, 7, usize::MAX] {
                    for threads in [1, 2] {
                        let got = streamed(text.as_bytes(), buffer, step, threads);
                        let got = got.unwrap_or_else(|| {
                            panic!("{what}, buffer {buffer}, step {step}: fell back")
                        });
                        assert_eq!(
                            model(&got),
                            want,
                            "{what}, buffer {buffer}, step {step}, threads {threads}"
                        );
                    }
                }
            }
        }
    }

    /// Many small batches, more than the workers' queue holds: results are applied
    /// in input order while the scan goes on, and the model is the precise one.
    #[test]
    fn many_batches_apply_in_input_order() {
        let pod = |i: usize| {
            format!(
                r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p{}","namespace":"ns","annotations":{{"i":"{i} \"}}\\"}}}},"spec":{{"containers":[{{"name":"c","image":"i"}}],"priority":{i}}}}}"#,
                i % 40
            )
        };
        let items: Vec<String> = (0..400).map(pod).collect();
        let text = list(&items, r#""apiVersion":"v1","kind":"List","#, "", ",\n");
        let want = model(&load_snapshot_str(&text, "c.json").unwrap());
        for (buffer, threads) in [(300, 1), (700, 2), (5000, 2)] {
            let got = streamed(text.as_bytes(), buffer, usize::MAX, threads).unwrap();
            assert_eq!(model(&got), want, "buffer {buffer}, threads {threads}");
        }
    }

    /// Items the workers cannot take in the plain way send the file to the precise
    /// path, whatever the buffer: the model is never built from part of them.
    #[test]
    fn undecodable_items_fall_back() {
        let items = tricky_items();
        let mut kindless = items.clone();
        kindless[1] = kindless[1].replace(r#""kind":"Node","#, "");
        let mut bad_escape = items.clone();
        bad_escape[2] = bad_escape[2].replace(r#""a":""#, r#""a":"\q"#);
        let mut bad_field = items.clone();
        bad_field[3] = bad_field[3].replace(r#""priority":-3"#, r#""priority":"high""#);
        let mut not_utf8 = list(&items, r#""kind":"List","#, "", ",").into_bytes();
        let at = not_utf8.len() - 200;
        not_utf8[at] = 0xff;
        let cases: Vec<(&str, Vec<u8>)> = vec![
            (
                "kindless",
                list(&kindless, r#""kind":"List","#, "", ",").into_bytes(),
            ),
            (
                "bad escape",
                list(&bad_escape, r#""kind":"List","#, "", ",").into_bytes(),
            ),
            (
                "bad field",
                list(&bad_field, r#""kind":"List","#, "", ",").into_bytes(),
            ),
            ("not UTF-8", not_utf8),
        ];
        for (what, text) in cases {
            for buffer in [1, 7, 64, 333, 1 << 16] {
                for threads in [1, 2] {
                    assert!(
                        streamed(&text, buffer, 5, threads).is_none(),
                        "{what}, buffer {buffer}, threads {threads}"
                    );
                }
            }
        }
    }

    #[test]
    fn batch_size_follows_the_file_within_bounds() {
        assert_eq!(batch_bytes(0, 2), MIN_BATCH_BYTES);
        assert_eq!(batch_bytes(10 << 20, 2), 640 << 10);
        assert_eq!(batch_bytes(1 << 40, 2), MAX_BATCH_BYTES);
    }
}

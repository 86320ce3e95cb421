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
use memchr::memmem::Finder;
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

/// How List items end in this file, for [`Scanner::item_by_lines`].
enum Lines {
    /// Not known yet.
    Unknown,
    /// By a line of this many spaces and `}`, and its search.
    Indent(usize, Box<Finder<'static>>),
    /// Not by lines: an item's closing line was not where it should be.
    GivenUp,
}

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
    /// Items cut at their closing line.
    cut_by_lines: usize,
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
            cut_by_lines: 0,
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

    /// Past the List item that starts at `pos` with `{` alone on its line, found by
    /// its closing line: the same indentation followed by `}`. A JSON string cannot
    /// hold a raw newline, so such a line is never inside one; the first such line
    /// is the item's end in any printer that indents by depth (kubectl, jq). When it
    /// is not (the text cut out is then not one object), the item's decode fails
    /// and the file goes to the precise path. False, with `pos` unmoved, when the
    /// item is not laid out so, or no such line comes within an object's largest
    /// size (then `lines` is given up for the rest of the file): the structural scan
    /// takes it.
    fn item_by_lines(&mut self, lines: &mut Lines) -> Result<bool, Stop> {
        if matches!(lines, Lines::GivenUp) {
            return Ok(false);
        }
        // The byte after `{` (a read may move the item to the start of a new buffer).
        while self.len < self.pos + 2 {
            if !self.more()? {
                return Ok(false);
            }
        }
        let start = self.pos;
        if !matches!(self.buf[start + 1], b'\n' | b'\r') {
            return Ok(false);
        }
        // What precedes the item in this buffer is the file's text before it.
        let indent = self.buf[..start]
            .iter()
            .rev()
            .take_while(|&&b| b == b' ')
            .count();
        if start < indent + 1 || self.buf[start - indent - 1] != b'\n' {
            return Ok(false);
        }
        if !matches!(lines, Lines::Indent(k, _) if *k == indent) {
            let mut needle = vec![b' '; indent + 2];
            needle[0] = b'\n';
            needle[indent + 1] = b'}';
            *lines = Lines::Indent(indent, Box::new(Finder::new(&needle).into_owned()));
        }
        let Lines::Indent(_, finder) = &*lines else {
            return Ok(false);
        };
        let needle_len = indent + 2;
        // Searched so far, from the item's start (`mark`, which a rebuffer keeps).
        let mut searched = 0;
        loop {
            let from = self.mark + searched;
            if let Some(i) = finder.find(&self.buf[from..self.len]) {
                self.pos = from + i + needle_len;
                self.cut_by_lines += 1;
                return Ok(true);
            }
            searched = (self.len - self.mark).saturating_sub(needle_len - 1);
            self.pos = self.len;
            if self.len - self.mark > super::json::MAX_OBJECT_BYTES || !self.more()? {
                *lines = Lines::GivenUp;
                self.pos = self.mark;
                return Ok(false);
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
    let mut lines = Lines::Unknown;
    loop {
        // `mark` stays on the item's first byte.
        if sc.skip_ws()? != Some(b'{') {
            return Err(Stop::Fallback);
        }
        if !sc.item_by_lines(&mut lines)? {
            sc.compound()?;
        }
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
mod tests;

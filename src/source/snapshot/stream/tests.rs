//! The streaming path against the precise one, at every buffer edge.

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

/// Items printed one key per line are cut at their closing line. The cut is right
/// for kubectl's layout (4-space indent, CRLF too); where a printer puts a
/// nested close at the item's own indentation, or never closes an item on a
/// line of its own, the model is still the precise one or the file goes to the
/// precise path: never a model built from a wrong cut.
#[test]
fn items_cut_at_their_closing_line_give_the_precise_model() {
    let items = tricky_items();
    let value: serde_json::Value = serde_json::from_str(&list(
        &items,
        r#""apiVersion":"v1","kind":"List","#,
        "",
        ",",
    ))
    .unwrap();
    let mut kubectl = Vec::new();
    let indent = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut kubectl, indent);
    serde::Serialize::serialize(&value, &mut ser).unwrap();
    let kubectl = String::from_utf8(kubectl).unwrap();
    assert!(kubectl.contains("\n        {\n") && kubectl.contains("\n        },\n"));
    let crlf = kubectl.replace('\n', "\r\n");
    // The first item's annotations close at the item's own indentation.
    let misleading = kubectl.replacen("\n                },", "\n        },", 1);
    // The last item's `}` ends its last line: no closing line comes.
    let last = kubectl.rfind("\n        }").unwrap();
    let unclosed_line = format!("{}}}{}", &kubectl[..last], &kubectl[last + 10..]);
    assert!(misleading != kubectl && unclosed_line != kubectl);
    // (layout, items cut by lines in one large buffer, whether the stream holds)
    for (what, text, cut, streams) in [
        ("kubectl", &kubectl, 5, true),
        ("crlf", &crlf, 5, true),
        ("misleading", &misleading, 1, false),
        ("unclosed line", &unclosed_line, 4, true),
    ] {
        let mut sc = Scanner::new(text.as_bytes(), 1 << 16, None);
        let scanned = scan_list(&mut sc, &mut |_| Ok(()));
        assert_eq!(scanned.is_ok(), streams, "{what}");
        assert_eq!(sc.cut_by_lines, cut, "{what}");
        let want = model(&load_snapshot_str(text, "c.json").unwrap());
        // Small buffers may drop an item's indentation before it is seen: the
        // structural scan takes those, with the same result.
        for buffer in [1, 64, 333, 1 << 16] {
            let got = streamed(text.as_bytes(), buffer, 7, 2);
            if buffer == 1 << 16 {
                assert_eq!(got.is_some(), streams, "{what}");
            }
            if let Some(got) = got {
                assert_eq!(model(&got), want, "{what}, buffer {buffer}");
            }
        }
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
    // The scan counts only an item's braces: a bracket out of place leaves the
    // cut-out item invalid, and its decode gives up.
    let mut crossed = items.clone();
    crossed[2] = crossed[2].replace(r#""tolerations":[]"#, r#""tolerations":[}"#);
    let mut unclosed_array = items.clone();
    unclosed_array[4] = unclosed_array[4].replace(r#""value":1000"#, r#""value":[1000"#);
    assert!(crossed != items && unclosed_array != items);
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
        (
            "crossed brackets",
            list(&crossed, r#""kind":"List","#, "", ",").into_bytes(),
        ),
        (
            "unclosed array",
            list(&unclosed_array, r#""kind":"List","#, "", ",").into_bytes(),
        ),
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

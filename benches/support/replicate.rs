//! The next size up: a kubectl-shaped List with its nodes and bound pods replicated
//! under new names, so that the realistic 5,000-node shape of `gen_scale.py` becomes
//! 15,000 nodes without the generator (which is slow past 5,000 nodes). Built once and
//! cached under `target/`.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use serde_json::value::RawValue;

/// `source` with every Node and every bound Pod written `factor` times (copy `k > 0`
/// named `NAME-rK`, its pods following it), everything else once. Cached under
/// `target/scale-cache/` by source name, size and factor; built atomically.
pub fn replicated(source: &Path, factor: usize) -> PathBuf {
    let len = std::fs::metadata(source).expect("the scale file").len();
    let stem = source
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("scale");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/scale-cache");
    let out = dir.join(format!("{stem}-{len}-x{factor}.json"));
    if out.exists() {
        return out;
    }
    std::fs::create_dir_all(&dir).expect("target/scale-cache");
    let started = std::time::Instant::now();
    let text = std::fs::read_to_string(source).expect("the scale file reads");
    #[derive(serde::Deserialize)]
    struct List<'a> {
        #[serde(borrow)]
        items: Vec<&'a RawValue>,
    }
    let list: List = serde_json::from_str(&text).expect("the scale file is a JSON List");
    let partial = out.with_extension("partial");
    let mut w = std::io::BufWriter::new(std::fs::File::create(&partial).expect("cache file"));
    w.write_all(br#"{"apiVersion":"v1","items":["#).unwrap();
    let mut first = true;
    let mut put = |w: &mut std::io::BufWriter<std::fs::File>, item: &str| {
        if !first {
            w.write_all(b",").unwrap();
        }
        first = false;
        w.write_all(item.as_bytes()).unwrap();
    };
    for item in &list.items {
        put(&mut w, item.get());
    }
    for k in 1..factor {
        for item in &list.items {
            let raw = item.get();
            // Only nodes and pods are copied: a cheap look before parsing.
            if !raw.contains(r#""kind":"Node""#) && !raw.contains(r#""kind":"Pod""#) {
                continue;
            }
            let mut v: Value = serde_json::from_str(raw).expect("an item");
            if rename(&mut v, k) {
                put(&mut w, &serde_json::to_string(&v).unwrap());
            }
        }
    }
    w.write_all(br#"],"kind":"List","metadata":{"resourceVersion":""}}"#)
        .unwrap();
    w.into_inner().unwrap().sync_all().unwrap();
    std::fs::rename(&partial, &out).expect("cache file in place");
    println!(
        "built {} ({factor}x {}) in {:.0} s",
        out.display(),
        source.display(),
        started.elapsed().as_secs_f64()
    );
    out
}

/// Copy `k` of a Node or a bound Pod; `false` for anything else (pending pods stay
/// single, so the bench's subjects are unique).
fn rename(v: &mut Value, k: usize) -> bool {
    let suffix = format!("-r{k}");
    let kind = v["kind"].as_str().unwrap_or_default().to_string();
    let append = |s: &mut Value| {
        if let Some(text) = s.as_str() {
            *s = Value::String(format!("{text}{suffix}"));
        }
    };
    match kind.as_str() {
        "Node" => {
            append(&mut v["metadata"]["name"]);
            append(&mut v["metadata"]["uid"]);
            if let Some(labels) = v["metadata"]["labels"].as_object_mut()
                && let Some(host) = labels.get_mut("kubernetes.io/hostname")
            {
                append(host);
            }
            true
        }
        "Pod" if v["spec"]["nodeName"].is_string() => {
            append(&mut v["metadata"]["name"]);
            append(&mut v["metadata"]["uid"]);
            append(&mut v["spec"]["nodeName"]);
            true
        }
        _ => false,
    }
}

//! `snapshot save --redact`: the allowlist keeps every verdict (each fidelity
//! scenario explains the same on its redacted snapshot) and drops every planted
//! secret; writes are atomic and never follow a planted symlink.

use std::path::{Path, PathBuf};
use std::process::Command;

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::engine::trace::Trace;
use schedscope::explain::explain;
use schedscope::model::Cluster;
use schedscope::render::json::to_json;
use schedscope::report::claims;
use schedscope::source::save;
use schedscope::source::{load_snapshot, load_snapshot_str};
use serde_json::{Value, json};

#[path = "support/fidelity.rs"]
mod support_fidelity;
use support_fidelity::scenario_dirs;

/// The objects of a snapshot file after `--redact`, as the saved YAML.
fn redacted_yaml(path: &Path) -> String {
    let mut objects = save::read_objects(path).expect("read");
    objects.retain_mut(|v| save::clean(v, true));
    save::render_objects(&objects, false).expect("render")
}

/// `explain -o json` for every pending pod (and the scenario's own pod).
fn answers(cluster: &Cluster, config: &SchedulerConfig, extra: &str) -> Value {
    let opts = CycleOptions {
        all_filters: true,
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        ..Default::default()
    };
    let mut keys: Vec<String> = cluster
        .pending_pods()
        .map(|p| format!("{}/{}", p.namespace, p.name))
        .collect();
    keys.push(extra.to_string());
    keys.sort();
    keys.dedup();
    let mut out = serde_json::Map::new();
    for k in keys {
        let v = match explain(cluster, config, &k, &opts) {
            Ok(trace) => with_claims(to_json(&trace), &trace, cluster),
            Err(e) => json!({"error": e.to_string()}),
        };
        out.insert(k, v);
    }
    Value::Object(out)
}

/// The `claims` key `explain -o json` adds for a pod with ResourceClaims: their
/// diagnosis, which the report computes from the cluster (the trace has none).
fn with_claims(mut v: Value, trace: &Trace, cluster: &Cluster) -> Value {
    let claims = cluster
        .pod(&trace.pod)
        .map(|pod| claims::of_trace(trace, cluster, pod))
        .unwrap_or_default();
    if !claims.is_empty() {
        v["claims"] = json!(claims);
    }
    v
}

#[test]
fn redacted_fidelity_snapshots_explain_the_same() {
    let dirs = scenario_dirs();
    assert!(dirs.len() > 50, "scenarios found: {}", dirs.len());
    let mut pods = 0;
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let snapshot = dir.join("snapshot.yaml");
        let config = match dir.join("config.yaml") {
            p if p.exists() => schedscope::source::read_scheduler_config(&p).unwrap(),
            _ => SchedulerConfig::defaults(),
        };
        let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap_or_default();
        let original = load_snapshot(&snapshot).unwrap();
        let text = redacted_yaml(&snapshot);
        let redacted = load_snapshot_str(&text, "redacted.yaml")
            .unwrap_or_else(|e| panic!("{name}: redacted snapshot does not load: {e}\n{text}"));
        let want = answers(&original.cluster, &config, pod.trim());
        let got = answers(&redacted.cluster, &config, pod.trim());
        pods += want.as_object().unwrap().len();
        assert_eq!(want, got, "{name}: explain differs after --redact");
    }
    assert!(pods > 60, "pods explained: {pods}");
}

const MARK: &str = "SECRETMARK";

/// Objects of every kind the loader reads, with a marker in the free-text and
/// user-named string fields (names, references, values, messages, options,
/// parameters, annotations), each marker numbered so a survivor is traceable.
/// Enumerations, quantities, timestamps and IPs are left valid: the scheduler
/// reads many of them and a marker there would not be a Kubernetes object.
fn planted() -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redact-planted.yaml");
    let text = std::fs::read_to_string(path).expect("fixture");
    let mut n = 0;
    let text = text
        .split(MARK)
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part.to_string()
            } else {
                n += 1;
                format!("{MARK}{n:03}{part}")
            }
        })
        .collect::<String>();
    load_snapshot_str(&text, "planted.yaml").expect("the planted objects load");
    let mut out = Vec::new();
    for doc in serde_saphyr::from_str_multiple::<Value, Vec<Value>>(&text).unwrap() {
        out.push(doc);
    }
    out
}

/// Every (path, marker) pair in a value.
fn markers(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.contains(MARK) => out.push(format!("{path} = {s}")),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                markers(x, &format!("{path}[{i}]"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                if k.contains(MARK) {
                    out.push(format!("{path}.{k} (key)"));
                }
                markers(x, &format!("{path}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// Where a marker may survive `--redact`: what the scheduler reads and matches on,
/// which is names and references, label and selector values, taint and toleration
/// values, image names, volume identities (CSI handles, in-tree disk IDs), driver,
/// class and scheduler names.
fn allowed_under_redact(path: &str) -> bool {
    // Subtrees the scheduler reads whole (selectors, labels, taints, affinity, ...).
    const SUBTREES: &[&str] = &[
        ".metadata.labels.",
        ".metadata.ownerReferences[",
        ".nodeSelector.",
        ".affinity.",
        ".tolerations[",
        ".topologySpreadConstraints[",
        ".selector.",
        ".taints[",
        ".images[",
        ".claimRef.",
        ".nodeAffinity.",
        ".allowedTopologies[",
        ".scheduling.",
        // DRA: what the allocator reads (selectors, device attributes, allocations).
        ".cel.expression",
        ".attributes.",
        ".reservedFor[",
        ".devices.results[",
    ];
    // Single fields: names, references and volume identities.
    const LEAVES: &[&str] = &[
        ".metadata.name",
        ".metadata.namespace",
        ".metadata.uid",
        ".name",
        ".image",
        ".csi.volumeHandle",
        ".csi.driver",
        ".claimName",
        ".volumeName",
        ".nodeName",
        ".schedulerName",
        ".priorityClassName",
        ".storageClassName",
        ".provisioner",
        ".attacher",
        ".nominatedNodeName",
        ".serviceName",
        ".handler",
        ".conditionType",
        ".resourceClaimName",
        ".topologyKeys",
        ".rbd.monitors",
        ".rbd.image",
        ".rbd.pool",
        ".iscsi.iqn",
        ".iscsi.targetPortal",
        ".deviceClassName",
        ".constraints[0].requests",
        ".metadata.annotations.volume.kubernetes.io/selected-node",
        ".metadata.annotations.pv.kubernetes.io/provisioned-by",
    ];
    let path = path.trim_end_matches(|c: char| c == ']' || c.is_ascii_digit());
    let path = path.strip_suffix('[').unwrap_or(path);
    // A container status's image is what ran, not what the pod asks for: dropped.
    if path.contains("ontainerStatuses[")
        && (path.ends_with(".image") || path.ends_with(".imageID"))
    {
        return false;
    }
    SUBTREES.iter().any(|a| path.contains(a)) || LEAVES.iter().any(|a| path.ends_with(a))
}

#[test]
fn planted_secrets_do_not_survive_redaction() {
    let objects = planted();
    let mut planted_count = Vec::new();
    for o in &objects {
        markers(o, "", &mut planted_count);
    }
    assert!(planted_count.len() > 150, "planted {}", planted_count.len());

    let mut leaks = Vec::new();
    let mut kept = 0;
    for mut o in objects {
        let what = format!(
            "{} {}",
            o["kind"].as_str().unwrap_or(""),
            o["metadata"]["name"].as_str().unwrap_or("")
        );
        if !save::clean(&mut o, true) {
            continue;
        }
        let mut found = Vec::new();
        markers(&o, "", &mut found);
        kept += found.len();
        // The scheduler's own word, PodScheduled=False, which the inspector shows.
        let scheduler_said = ".status.conditions[0].message";
        if what.starts_with("Pod ") {
            assert_eq!(o["status"]["conditions"][0]["type"], "PodScheduled");
        }
        leaks.extend(
            found
                .into_iter()
                .filter(|p| {
                    let path = p.split(" = ").next().unwrap();
                    !(allowed_under_redact(path)
                        || (what.starts_with("Pod ") && path == scheduler_said))
                })
                .map(|p| format!("{what}: {p}")),
        );
    }
    assert!(leaks.is_empty(), "leaked:\n{}", leaks.join("\n"));
    assert!(kept > 0, "names survive --redact");
}

/// The fields the issue found leaking, one by one (a regression list).
#[test]
fn known_leaks_are_dropped() {
    let mut objects = planted();
    objects.retain_mut(|v| save::clean(v, true));
    let text = serde_json::to_string(&objects).unwrap();
    // Every message but the scheduler's own PodScheduled=False one goes.
    let messages = text.matches("\"message\"").count();
    assert_eq!(messages, 1, "{text}");
    for field in [
        "gitRepo",
        "volumeAttributes",
        "flexVolume",
        "mountOptions",
        "parameters",
        "attachmentMetadata",
        "description",
        "\"reason\":\"SECRETMARK",
        "env",
        "command",
        "last-applied",
    ] {
        assert!(!text.contains(field), "{field} survives: {text}");
    }
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_schedscope"))
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("schedscope-redact-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn demo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redact-planted.yaml")
}

#[test]
fn save_from_file_works_offline_and_loads_back() {
    let dir = temp_dir("from");
    let out = dir.join("r.yaml");
    let o = bin()
        .args(["snapshot", "save", "--from"])
        .arg(demo())
        .arg("-o")
        .arg(&out)
        .arg("--redact")
        // No cluster: a kubeconfig that does not exist must not matter.
        .env("KUBECONFIG", dir.join("missing"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("redacted"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains("gitRepo"), "{text}");
    load_snapshot(&out).expect("loads back");

    // `-o -`: the snapshot on stdout, the summary on stderr.
    let o = bin()
        .args(["snapshot", "save", "--redact", "-o", "-", "--from"])
        .arg(demo())
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    load_snapshot_str(&text, "stdout.yaml").expect("stdout is a snapshot");
    assert!(String::from_utf8_lossy(&o.stderr).contains("wrote stdout"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn save_from_a_bad_file_names_it_and_exits_2() {
    let dir = temp_dir("bad");
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: 3\n",
    )
    .unwrap();
    let o = bin()
        .args(["snapshot", "save", "-o"])
        .arg(dir.join("out.yaml"))
        .arg("--from")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.yaml") && err.contains("Pod default/p"),
        "{err}"
    );
    assert!(!dir.join("out.yaml").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[test]
fn save_never_writes_through_a_planted_symlink() {
    use std::os::unix::fs::symlink;
    let dir = temp_dir("link");
    let victim = dir.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let out = dir.join("snap.yaml");
    // The old fixed temporary name, and the target itself, both point at the victim.
    symlink(&victim, dir.join("snap.partial")).unwrap();
    symlink(&victim, &out).unwrap();
    let o = bin()
        .args(["snapshot", "save", "--from"])
        .arg(demo())
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    let meta = std::fs::symlink_metadata(&out).unwrap();
    assert!(meta.is_file(), "the link is replaced by the snapshot");
    load_snapshot(&out).expect("loads");
    // No temporary file is left behind.
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["snap.partial", "snap.yaml", "victim"]);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------------------------
// --redact-names

use schedscope::source::redact::{NameHasher, hash_names};

/// Put every hashed name in `v` back, in strings and in map keys.
fn unhash(v: &Value, seen: &std::collections::BTreeMap<String, String>) -> Value {
    let back = |s: &str| -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find('x') {
            let token = rest.get(i..i + 21);
            match token.and_then(|t| seen.get(t)) {
                Some(orig) => {
                    out.push_str(&rest[..i]);
                    out.push_str(orig);
                    rest = &rest[i + 21..];
                }
                None => {
                    out.push_str(&rest[..=i]);
                    rest = &rest[i + 1..];
                }
            }
        }
        out.push_str(rest);
        out
    };
    match v {
        Value::String(s) => Value::String(back(s)),
        Value::Array(a) => Value::Array(a.iter().map(|x| unhash(x, seen)).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, x)| (back(k), unhash(x, seen))).collect())
        }
        other => other.clone(),
    }
}

/// Per pod, the top-level fields of `explain -o json` that differ. Exactly: the
/// pseudonyms sort as the names do, so even a tie between equally good nodes (broken
/// by name order), the nodes a Filter error stopped at, and every list in node order
/// come out the same once mapped back.
fn differences(want: &Value, got: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (pod, w) in want.as_object().unwrap() {
        let g = &got[pod];
        for (k, wv) in w.as_object().into_iter().flatten() {
            if g[k] != *wv {
                out.push(format!("{pod} {k}:\n  want {wv}\n  got  {}", g[k]));
            }
        }
    }
    out
}

#[test]
fn name_hashed_fidelity_snapshots_explain_the_same() {
    let mut pods = 0;
    let mut failed = Vec::new();
    for dir in scenario_dirs() {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let snapshot = dir.join("snapshot.yaml");
        let config = match dir.join("config.yaml") {
            p if p.exists() => schedscope::source::read_scheduler_config(&p).unwrap(),
            _ => SchedulerConfig::defaults(),
        };
        let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap_or_default();
        let original = load_snapshot(&snapshot).unwrap();

        let mut objects = save::read_objects(&snapshot).unwrap();
        objects.retain_mut(|v| save::clean(v, true));
        let mut hasher = NameHasher::new(b"test key");
        hash_names(&mut objects, &mut hasher);
        let text = save::render_objects(&objects, false).unwrap();
        let hashed = load_snapshot_str(&text, "hashed.yaml")
            .unwrap_or_else(|e| panic!("{name}: hashed snapshot does not load: {e}\n{text}"));

        let (ns, pod_name) = pod
            .trim()
            .split_once('/')
            .unwrap_or(("default", pod.trim()));
        let hashed_pod = format!("{}/{}", hasher.hash(ns), hasher.hash(pod_name));
        let want = answers(&original.cluster, &config, pod.trim());
        let got = unhash(
            &answers(&hashed.cluster, &config, &hashed_pod),
            &hasher.seen,
        );
        pods += want.as_object().unwrap().len();
        let diffs = differences(&want, &got);
        if !diffs.is_empty() {
            failed.push(format!("{name}:\n{}", diffs.join("\n")));
        }
    }
    assert!(pods > 60, "pods explained: {pods}");
    // A scheduler configuration can name label values too (NodeAffinity's
    // addedAffinity); --redact-names rewrites snapshots, not configurations, so
    // that scenario's config no longer matches the hashed labels. It is the only
    // scenario that differs, and it must differ (or this exception is stale).
    let (expected, unexpected): (Vec<_>, Vec<_>) = failed
        .iter()
        .partition(|f| f.starts_with("h59-config-node-affinity-added:"));
    assert!(
        unexpected.is_empty(),
        "explain differs after --redact-names:\n{}",
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(expected.len(), 1, "the addedAffinity exception is stale");
}

#[test]
fn the_same_key_hashes_the_same_way_and_names_stay_dns_labels() {
    let mut a = NameHasher::new(b"k1");
    let mut b = NameHasher::new(b"k1");
    let mut c = NameHasher::new(b"k2");
    let h = a.hash("web-0");
    assert_eq!(h, b.hash("web-0"));
    assert_ne!(h, c.hash("web-0"));
    assert_ne!(h, a.hash("web-1"));
    assert_eq!(h.len(), 21);
    assert!(h.starts_with('x'));
    assert!(
        h.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    );
}

/// Under --redact-names no planted marker survives, but in what is software rather
/// than the cluster's own names: the scheduler's name (profiles are chosen by it),
/// CSI driver and provisioner names (CSI translation and volume limits read them),
/// and topology keys (Kubernetes' own).
#[test]
fn planted_names_do_not_survive_hashing() {
    let mut objects = planted();
    objects.retain_mut(|v| save::clean(v, true));
    hash_names(&mut objects, &mut NameHasher::new(b"k"));
    let mut leaks = Vec::new();
    for o in &objects {
        let what = o["kind"].as_str().unwrap_or("").to_string();
        let mut found = Vec::new();
        markers(o, "", &mut found);
        for f in found {
            let path = f.split(" = ").next().unwrap();
            let software = [
                ".schedulerName",
                ".csi.driver",
                ".provisioner",
                ".attacher",
                ".drivers[0].name",
                "pv.kubernetes.io/provisioned-by",
            ]
            .iter()
            .any(|s| path.ends_with(s))
                || (what == "CSIDriver" && path == ".metadata.name");
            // Topology keys are Kubernetes' own (`topology.kubernetes.io/zone`);
            // their values are hashed like every other label value.
            let topology = path.ends_with(".topologyKey") || path.contains(".topologyKeys");
            // DRA CEL selectors compare device attributes with string literals
            // (`device.attributes["d"].model == "a100"`); rewriting CEL is not
            // safe, so both the expressions and the attribute values they compare
            // stay, and so do driver names (CEL reads `device.driver`).
            let cel = path.ends_with(".cel.expression")
                || (what == "ResourceSlice" && path.contains(".attributes."));
            if !(software || topology || cel) {
                leaks.push(format!("{what}: {f}"));
            }
        }
    }
    assert!(leaks.is_empty(), "leaked:\n{}", leaks.join("\n"));
}

#[test]
fn save_redact_names_from_file_with_a_key_is_stable() {
    let run = || {
        let o = bin()
            .args([
                "snapshot",
                "save",
                "--redact-names",
                "--redact-key",
                "k",
                "-o",
                "-",
                "--from",
            ])
            .arg(demo())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let first = run();
    assert_eq!(first, run());
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(&first).unwrap();
    for d in &docs {
        let name = d["metadata"]["name"].as_str().unwrap();
        let keeps = d["kind"] == "CSIDriver";
        assert_eq!(name.starts_with('x'), !keeps, "{d}");
    }
    load_snapshot_str(&first, "hashed.yaml").expect("loads");
}

/// The generated fixture: one object of every kind read, a marker in every string
/// field its OpenAPI schema has (scripts/gen-redact-planted.py).
fn generated() -> (String, Vec<Value>) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/redact-planted-generated.yaml");
    let text = std::fs::read_to_string(path).expect("generated fixture");
    load_snapshot_str(&text, "generated.yaml").expect("the generated objects load");
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(&text).unwrap();
    (text, docs)
}

/// A survivor's path with list indexes and planted map keys made generic, so it
/// reads as a field of the schema (`.spec.containers[].resources.requests.{}`).
fn field_of(found: &str) -> String {
    let path = found
        .split(" = ")
        .next()
        .unwrap()
        .trim_end_matches(" (key)");
    let mut out = String::new();
    let mut rest = path;
    while let Some(i) = rest.find(['[', '.']) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if let Some(r) = rest.strip_prefix('[') {
            out.push_str("[]");
            rest = &r[r.find(']').map_or(r.len(), |j| j + 1)..];
        } else {
            let r = &rest[1..];
            let end = r.find(['[', '.']).unwrap_or(r.len());
            let seg = &r[..end];
            out.push('.');
            out.push_str(if seg.contains(MARK) { "{}" } else { seg });
            rest = &r[end..];
        }
    }
    out.push_str(rest);
    if found.ends_with(" (key)") {
        out.push_str(" (key)");
    }
    out
}

#[test]
fn the_generated_fixture_covers_every_kind_and_string_field() {
    let (text, docs) = generated();
    let header = |name: &str| -> usize {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("# markers{name}: ")))
            .unwrap_or_else(|| panic!("header line for {name:?}"))
            .parse()
            .unwrap()
    };
    let mut total = 0;
    let mut kinds = Vec::new();
    for d in &docs {
        let kind = d["kind"].as_str().unwrap().to_string();
        let mut found = Vec::new();
        markers(d, "", &mut found);
        assert_eq!(found.len(), header(&format!(" {kind}")), "{kind}");
        total += found.len();
        kinds.push(kind);
    }
    assert_eq!(total, header(""));
    assert!(total > 2900, "{total} markers");
    kinds.sort();
    let mut read: Vec<&str> = schedscope::source::kinds::KINDS
        .iter()
        .map(|k| k.name)
        .collect();
    read.sort();
    assert_eq!(kinds, read, "one object of every kind redaction knows");
}

/// Under `--redact` a marker survives only where the scheduler reads it. That is
/// more than the label values, taint values, images and CSI handles the issue
/// names: the scheduler also matches names and references, label and selector
/// keys, resource names, and device attributes. Each category says who reads it.
fn allowed_under_redact_generated(field: &str) -> bool {
    const READ: &[&str] = &[
        // NodeResourcesFit, NodeResourcesBalancedAllocation: resource names.
        ".resources.requests.{} (key)",
        ".resources.limits.{} (key)",
        ".allocatedResources.{} (key)",
        ".status.allocatable.{} (key)",
        ".status.capacity.{} (key)",
        ".spec.capacity.{} (key)",
        ".capacity.{} (key)",
        ".overhead.{} (key)",
        ".podFixed.{} (key)",
        ".minResources.{} (key)",
        // Label and selector keys (NodeAffinity, InterPodAffinity, PodTopologySpread,
        // VolumeBinding, DefaultPreemption's PDBs).
        ".labels.{} (key)",
        ".matchLabels.{} (key)",
        ".nodeSelector.{} (key)",
        ".selector.{} (key)",
        // Classes and claim templates a pod names; the claim a volume attachment serves.
        ".runtimeClassName",
        ".resourceClaimTemplateName",
        ".source.persistentVolumeName",
        // Conditions: PodScheduled and node readiness.
        ".conditions[].type",
        ".conditions[].status",
        // NodePorts: the host IP a port binds.
        ".ports[].hostIP",
        // Sidecars: an init container's restartPolicy.
        ".initContainers[].restartPolicy",
        // Volume plugins: filesystem, volume class and driver policy.
        ".fsType",
        ".volumeAttributesClassName",
        ".spec.fsGroupPolicy",
        ".spec.volumeLifecycleModes[]",
        ".dataSource.apiGroup",
        ".dataSource.name",
        ".dataSourceRef.apiGroup",
        ".dataSourceRef.name",
        ".dataSourceRef.namespace",
        ".azureFile.secretName",
        ".azureFile.secretNamespace",
        ".azureFile.shareName",
        ".azureDisk.diskName",
        ".azureDisk.diskURI",
        ".awsElasticBlockStore.volumeID",
        ".gcePersistentDisk.pdName",
        ".cinder.volumeID",
        ".vsphereVolume.volumePath",
        ".portworxVolume.volumeID",
        ".local.path",
        ".volumes[].name",
        ".disruptedPods.{} (key)",
        // DynamicResources: drivers, pools, devices, counters, claims' requests.
        ".spec.driver",
        ".spec.pool.name",
        ".spec.extendedResourceName",
        ".bindingConditions[]",
        ".bindingFailureConditions[]",
        ".consumesCounters[].counterSet",
        ".counters.{} (key)",
        ".sharedCounters[].name",
        ".capacity.requests.{} (key)",
        ".consumedCapacity.{} (key)",
        ".distinctAttribute",
        ".matchAttribute",
        ".constraints[].requests[]",
        ".results[].driver",
        ".results[].shareID",
        ".reservedFor[].apiGroup",
        ".reservedFor[].resource",
        ".devices.requests[].name",
        ".resources.claims[].request",
        ".spec.metadata.labels.{} (key)",
    ];
    // VolumeBinding: a CSIStorageCapacity's topology, a node selector.
    READ.iter().any(|a| field.ends_with(a))
        || field.starts_with(".nodeTopology.")
        || allowed_under_redact(&field.replace("[]", "[0]"))
}

#[test]
fn generated_markers_survive_redact_only_where_the_scheduler_reads() {
    let (_, docs) = generated();
    let mut planted = 0;
    let mut kept = 0;
    let mut leaks = std::collections::BTreeSet::new();
    for mut o in docs {
        let kind = o["kind"].as_str().unwrap().to_string();
        let mut before = Vec::new();
        markers(&o, "", &mut before);
        planted += before.len();
        assert!(save::clean(&mut o, true), "{kind} is kept");
        let mut found = Vec::new();
        markers(&o, "", &mut found);
        kept += found.len();
        for f in found {
            let field = field_of(&f);
            if !allowed_under_redact_generated(&field) {
                leaks.insert(format!("{kind} {field}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "kept by --redact but not read by the scheduler:\n{}",
        leaks.into_iter().collect::<Vec<_>>().join("\n")
    );
    // Figures for the closing note: `cargo nextest run --test redact -- --nocapture`.
    println!("--redact: {planted} markers planted, {kept} kept in fields the scheduler reads");
    assert!(kept < planted / 2, "{kept} of {planted}");
}

/// Under `--redact-names` what remains is not the cluster's own naming: fixed
/// vocabularies the schema leaves as free strings (operators, condition types,
/// filesystem types, policies), software names (the scheduler's name, CSI and DRA
/// drivers, API groups), and what DRA's CEL selectors read (a selector compares
/// attribute values with string literals in its expression; rewriting CEL would
/// change what it selects). Integer label values stay too (node affinity Gt/Lt), but
/// a marker is never an integer.
fn allowed_under_redact_names(field: &str) -> bool {
    const VOCABULARY: &[&str] = &[
        ".operator",
        // A node field selector's key: only `metadata.name` exists.
        ".matchFields[].key",
        ".conditions[].type",
        ".conditions[].status",
        ".initContainers[].restartPolicy",
        ".fsType",
        ".spec.fsGroupPolicy",
        ".spec.volumeLifecycleModes[]",
    ];
    const SOFTWARE: &[&str] = &[
        ".spec.schedulerName",
        ".csi.driver",
        ".provisioner",
        ".spec.attacher",
        ".drivers[].name",
        ".apiGroup",
        ".reservedFor[].resource",
        ".spec.driver",
        ".results[].driver",
        ".spec.extendedResourceName",
        ".bindingConditions[]",
        ".bindingFailureConditions[]",
    ];
    const CEL_READS: &[&str] = &[
        ".cel.expression",
        ".attributes.{} (key)",
        ".attributes.{}.string",
        ".devices[].capacity.{} (key)",
        ".capacity.requests.{} (key)",
        ".consumedCapacity.{} (key)",
        ".counters.{} (key)",
        ".consumesCounters[].counterSet",
        ".sharedCounters[].name",
        ".distinctAttribute",
        ".matchAttribute",
    ];
    let csi_driver_name = field == ".metadata.name (CSIDriver)";
    csi_driver_name
        || VOCABULARY
            .iter()
            .chain(SOFTWARE)
            .chain(CEL_READS)
            .any(|a| field.ends_with(a))
}

#[test]
fn generated_markers_do_not_survive_hashing_but_in_vocabulary_software_and_cel() {
    let (_, mut docs) = generated();
    docs.retain_mut(|v| save::clean(v, true));
    hash_names(&mut docs, &mut NameHasher::new(b"k"));
    let mut leaks = std::collections::BTreeSet::new();
    let mut by_category = std::collections::BTreeMap::<&str, usize>::new();
    for o in &docs {
        let kind = o["kind"].as_str().unwrap();
        let mut found = Vec::new();
        markers(o, "", &mut found);
        for f in found {
            let mut field = field_of(&f);
            if kind == "CSIDriver" && field == ".metadata.name" {
                field.push_str(" (CSIDriver)");
            }
            if allowed_under_redact_names(&field) {
                let category = if field.contains("cel")
                    || field.contains("attribute")
                    || field.contains("apacity")
                    || field.contains("ounter")
                {
                    "DRA CEL reads"
                } else if [".operator", ".type", ".status", "Policy", "fsType", "Modes"]
                    .iter()
                    .any(|s| field.contains(s))
                {
                    "vocabulary"
                } else {
                    "software"
                };
                *by_category.entry(category).or_default() += 1;
            } else {
                leaks.insert(format!("{kind} {field}"));
            }
        }
    }
    assert!(
        leaks.is_empty(),
        "survive --redact-names:\n{}",
        leaks.into_iter().collect::<Vec<_>>().join("\n")
    );
    println!("--redact-names survivors by category: {by_category:?}");
}

/// The pseudonyms sort as the names they replace, whatever their hashes: node
/// names, namespaces and label values keep their order, so every tie broken by name
/// order breaks the same way.
#[test]
fn pseudonyms_keep_the_order_of_names() {
    let names = ["a", "a-0", "b", "node-10", "node-2", "node-a", "z", "zz"];
    let mut objects: Vec<Value> = names
        .iter()
        .rev()
        .map(|n| {
            json!({"apiVersion": "v1", "kind": "Node",
                   "metadata": {"name": n, "labels": {"topology.kubernetes.io/zone": n}}})
        })
        .collect();
    let mut hasher = NameHasher::new(b"order");
    hash_names(&mut objects, &mut hasher);
    let hashed: Vec<&str> = objects
        .iter()
        .rev()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect();
    assert!(hashed.windows(2).all(|w| w[0] < w[1]), "{hashed:?}");
    for (o, n) in objects.iter().rev().zip(names) {
        assert_eq!(hasher.seen[o["metadata"]["name"].as_str().unwrap()], n);
        assert_eq!(
            o["metadata"]["labels"]["topology.kubernetes.io/zone"],
            o["metadata"]["name"]
        );
    }
}

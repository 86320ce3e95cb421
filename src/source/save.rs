//! `schedscope snapshot save`: every object the engine reads, listed from a live
//! cluster (paged), written as multi-document YAML or, for a `.json` file, a `v1`
//! List, which `--snapshot` loads back. `managedFields` are dropped; `--redact`
//! also drops free text that may hold secrets while keeping every field the
//! scheduler reads.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use k8s_openapi::api::scheduling::v1 as scheduling;
use k8s_openapi::api::storage::v1 as storage;
use kube::api::{Api, DynamicObject, ListParams};
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::live::{LiveError, LiveOptions};

const PAGE: u32 = 500;

/// What a save wrote, per kind.
#[derive(Debug, Default)]
pub struct SaveReport {
    pub objects: BTreeMap<String, usize>,
}

impl std::fmt::Display for SaveReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .objects
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        write!(f, "{}", parts.join(", "))
    }
}

async fn list_all<K>(api: Api<K>, what: &str) -> Result<Vec<K>, LiveError>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let mut out = Vec::new();
    let mut lp = ListParams::default().limit(PAGE);
    loop {
        let page = api.list(&lp).await.map_err(|source| LiveError::Api {
            what: format!("listing {what}"),
            source,
        })?;
        out.extend(page.items);
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(c) => lp = lp.continue_token(&c),
            None => return Ok(out),
        }
    }
}

fn to_values<K: Serialize>(
    items: Vec<K>,
    kind: &str,
    redact: bool,
    out: &mut Vec<Value>,
    report: &mut SaveReport,
) {
    let n = items.len();
    for item in items {
        if let Ok(mut v) = serde_json::to_value(&item) {
            clean(&mut v, redact);
            out.push(v);
        }
    }
    if n > 0 {
        *report.objects.entry(kind.to_string()).or_default() += n;
    }
}

/// List every kind the engine reads. Pods (only) follow `--namespace`.
pub async fn fetch_objects(
    client: &Client,
    opts: &LiveOptions,
    redact: bool,
) -> Result<(Vec<Value>, SaveReport), LiveError> {
    let mut out = Vec::new();
    let mut report = SaveReport::default();
    let c = || client.clone();
    macro_rules! all {
        ($ty:ty, $kind:literal) => {
            to_values(
                list_all(Api::<$ty>::all(c()), $kind).await?,
                $kind,
                redact,
                &mut out,
                &mut report,
            )
        };
    }
    // Cluster-scoped first: the loader resolves pods against priority classes.
    all!(scheduling::PriorityClass, "PriorityClass");
    all!(core::Namespace, "Namespace");
    all!(core::Node, "Node");
    all!(storage::StorageClass, "StorageClass");
    all!(storage::CSINode, "CSINode");
    all!(storage::CSIDriver, "CSIDriver");
    all!(storage::VolumeAttachment, "VolumeAttachment");
    all!(core::PersistentVolume, "PersistentVolume");
    all!(core::PersistentVolumeClaim, "PersistentVolumeClaim");
    all!(policy::PodDisruptionBudget, "PodDisruptionBudget");
    all!(core::Service, "Service");
    all!(apps::ReplicaSet, "ReplicaSet");
    all!(apps::StatefulSet, "StatefulSet");
    all!(core::ReplicationController, "ReplicationController");
    let pods: Api<core::Pod> = match &opts.namespace {
        Some(ns) => Api::namespaced(c(), ns),
        None => Api::all(c()),
    };
    to_values(
        list_all(pods, "Pod").await?,
        "Pod",
        redact,
        &mut out,
        &mut report,
    );
    let pg = super::live::pod_group_resource();
    let api: Api<DynamicObject> = Api::all_with(c(), &pg);
    if api
        .list_metadata(&ListParams::default().limit(1))
        .await
        .is_ok()
    {
        let groups = list_all(api, "PodGroup").await?;
        let n = groups.len();
        for g in groups {
            if let Ok(mut v) = serde_json::to_value(&g) {
                if let Some(o) = v.as_object_mut() {
                    o.insert("apiVersion".into(), "scheduling.x-k8s.io/v1alpha1".into());
                    o.insert("kind".into(), "PodGroup".into());
                }
                clean(&mut v, redact);
                out.push(v);
            }
        }
        if n > 0 {
            report.objects.insert("PodGroup".into(), n);
        }
    }
    Ok((out, report))
}

/// Write objects as a `v1` List (`.json`) or multi-document YAML.
pub fn write_objects(objects: &[Value], path: &Path) -> anyhow::Result<()> {
    use anyhow::Context;
    let json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let text = if json {
        let list = serde_json::json!({
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {},
            "items": objects,
        });
        let mut s = serde_json::to_string_pretty(&list)?;
        s.push('\n');
        s
    } else {
        let mut s = String::new();
        for o in objects {
            s.push_str("---\n");
            s.push_str(&serde_saphyr::to_string(o).context("cannot render YAML")?);
        }
        s
    };
    // Write then rename, so a failed save never leaves half a snapshot.
    let tmp = path.with_extension("partial");
    std::fs::write(&tmp, text).with_context(|| format!("cannot write {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Annotation keys the scheduler or the volume plugins read; everything else goes
/// under `--redact`.
fn kept_annotation(key: &str) -> bool {
    const KEEP: [&str; 6] = [
        "volume.kubernetes.io/selected-node",
        "volume.kubernetes.io/storage-provisioner",
        "volume.beta.kubernetes.io/storage-provisioner",
        "pv.kubernetes.io/bind-completed",
        "pv.kubernetes.io/provisioned-by",
        "storage.alpha.kubernetes.io/migrated-plugins",
    ];
    KEEP.contains(&key)
}

const REDACTED: &str = "REDACTED";

/// Drop `managedFields` (and, redacting, free text) from one object.
pub fn clean(v: &mut Value, redact: bool) {
    let Some(obj) = v.as_object_mut() else { return };
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
        if redact && let Some(Value::Object(ann)) = meta.get_mut("annotations") {
            ann.retain(|k, _| kept_annotation(k));
            if ann.is_empty() {
                meta.remove("annotations");
            }
        }
    }
    if !redact {
        return;
    }
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    match kind {
        "Pod" => {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                redact_pod_spec(spec);
            }
            if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
                status.remove("message");
                for key in [
                    "containerStatuses",
                    "initContainerStatuses",
                    "ephemeralContainerStatuses",
                ] {
                    status.remove(key);
                }
            }
        }
        "ReplicaSet" | "StatefulSet" | "ReplicationController" => {
            // The pod template is free text for the scheduler's purposes except for
            // labels (owners are matched by selector), so redact it like a pod.
            if let Some(spec) = obj
                .get_mut("spec")
                .and_then(|s| s.get_mut("template"))
                .and_then(|t| t.get_mut("spec"))
                .and_then(Value::as_object_mut)
            {
                redact_pod_spec(spec);
            }
            if let Some(meta) = obj
                .get_mut("spec")
                .and_then(|s| s.get_mut("template"))
                .and_then(|t| t.get_mut("metadata"))
                .and_then(Value::as_object_mut)
            {
                meta.remove("annotations");
            }
        }
        "Node" => {
            if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut)
                && let Some(Value::Array(conds)) = status.get_mut("conditions")
            {
                for c in conds {
                    if let Some(c) = c.as_object_mut() {
                        c.remove("message");
                    }
                }
            }
        }
        _ => {}
    }
}

fn redact_pod_spec(spec: &mut Map<String, Value>) {
    for key in ["containers", "initContainers", "ephemeralContainers"] {
        let Some(Value::Array(cs)) = spec.get_mut(key) else {
            continue;
        };
        for c in cs {
            let Some(c) = c.as_object_mut() else { continue };
            for k in [
                "command",
                "args",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
                "lifecycle",
                "workingDir",
            ] {
                c.remove(k);
            }
            if let Some(Value::Array(env)) = c.get_mut("env") {
                for e in env {
                    if let Some(e) = e.as_object_mut()
                        && e.contains_key("value")
                    {
                        e.insert("value".into(), REDACTED.into());
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redaction_keeps_what_the_scheduler_reads() {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default", "labels": {"app": "web"},
                "managedFields": [{"manager": "kubectl"}],
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{secret}",
                                "team": "x"}},
            "spec": {"containers": [{"name": "c", "image": "nginx",
                "command": ["sh", "-c", "echo $TOKEN"], "args": ["--password=hunter2"],
                "env": [{"name": "TOKEN", "value": "hunter2"},
                        {"name": "FROM", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                "ports": [{"containerPort": 80, "hostPort": 8080}],
                "resources": {"requests": {"cpu": "1"}}}],
                "nodeSelector": {"zone": "a"}},
            "status": {"phase": "Pending", "message": "free text",
                "conditions": [{"type": "PodScheduled", "status": "False", "message": "0/1 nodes"}]}
        });
        let mut plain = pod.clone();
        clean(&mut plain, false);
        assert!(plain["metadata"].get("managedFields").is_none());
        assert_eq!(
            plain["spec"]["containers"][0]["args"][0],
            "--password=hunter2"
        );

        clean(&mut pod, true);
        let text = pod.to_string();
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("last-applied"), "{text}");
        assert!(pod["metadata"].get("annotations").is_none());
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["env"][0]["value"], REDACTED);
        assert_eq!(c["env"][1]["valueFrom"]["secretKeyRef"]["name"], "s");
        assert_eq!(c["ports"][0]["hostPort"], 8080);
        assert_eq!(c["resources"]["requests"]["cpu"], "1");
        assert_eq!(c["image"], "nginx");
        assert_eq!(pod["spec"]["nodeSelector"]["zone"], "a");
        assert_eq!(pod["metadata"]["labels"]["app"], "web");
        assert_eq!(
            pod["status"]["conditions"][0]["message"], "0/1 nodes",
            "the scheduler's own word is kept"
        );
    }

    #[test]
    fn pvc_binding_annotations_survive_redaction() {
        let mut pvc = json!({"kind": "PersistentVolumeClaim", "metadata": {"name": "c",
            "annotations": {"volume.kubernetes.io/selected-node": "n1", "note": "x"}}});
        clean(&mut pvc, true);
        assert_eq!(
            pvc["metadata"]["annotations"],
            json!({"volume.kubernetes.io/selected-node": "n1"})
        );
    }
}

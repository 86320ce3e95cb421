//! A pod that does not exist yet, from a file: a Pod manifest, or the pod template of
//! a Deployment, StatefulSet, Job, ReplicaSet or DaemonSet, made into the pod its
//! controller would create (its namespace, the template's labels and spec), with the
//! Priority admission the API server would apply. For `capacity --pod-file` and
//! what-if replays of pods not in the snapshot.

use std::path::Path;

use k8s_openapi::api::core::v1 as core;
use serde_json::Value;

use super::convert::{Priorities, convert_pod};
use crate::model::{Cluster, Pod};

/// The pod, and the manifest it came from (request edits spread over its containers).
#[derive(Clone, Debug)]
pub struct PodFromFile {
    pub pod: Pod,
    pub manifest: core::Pod,
    /// The kind the file held (`Pod`, `Deployment`, ...).
    pub kind: String,
}

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("reading {path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{origin}: not a YAML or JSON object: {message}")]
    Parse { origin: String, message: String },
    #[error(
        "{origin}: kind {kind:?} has no pod template (expected Pod, Deployment, StatefulSet, Job, ReplicaSet or DaemonSet)"
    )]
    Kind { origin: String, kind: String },
    #[error("{origin}: {message}")]
    Invalid { origin: String, message: String },
}

/// Read [`pod_from_text`] from a file.
pub fn read_pod_file(path: &Path, cluster: &Cluster) -> Result<PodFromFile, TemplateError> {
    let text = std::fs::read_to_string(path).map_err(|error| TemplateError::Io {
        path: path.display().to_string(),
        error,
    })?;
    pod_from_text(&text, &path.display().to_string(), cluster)
}

/// The first document of `text` as the pod it stands for. `cluster` gives the
/// PriorityClasses admission reads.
pub fn pod_from_text(
    text: &str,
    origin: &str,
    cluster: &Cluster,
) -> Result<PodFromFile, TemplateError> {
    let parse = |message: String| TemplateError::Parse {
        origin: origin.into(),
        message,
    };
    let invalid = |message: String| TemplateError::Invalid {
        origin: origin.into(),
        message,
    };
    let doc = text
        .split("\n---")
        .find(|d| {
            d.lines()
                .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        })
        .unwrap_or(text);
    let v: Value = serde_saphyr::from_str(doc).map_err(|e| parse(e.to_string()))?;
    let kind = v["kind"].as_str().unwrap_or_default().to_string();
    let raw = match kind.as_str() {
        "Pod" => v.clone(),
        "Deployment" | "StatefulSet" | "Job" | "ReplicaSet" | "DaemonSet" => {
            from_template(&v).ok_or_else(|| invalid("spec.template is missing".into()))?
        }
        _ => {
            return Err(TemplateError::Kind {
                origin: origin.into(),
                kind,
            });
        }
    };
    let mut manifest: core::Pod =
        serde_json::from_value(raw).map_err(|e| invalid(format!("not a pod: {e}")))?;
    // A pod yet to be created: no node, no status.
    if let Some(spec) = manifest.spec.as_mut() {
        spec.node_name = None;
    }
    manifest.status = None;
    let converted = convert_pod(&manifest)
        .map_err(|e| invalid(e.to_string()))?
        .ok_or_else(|| invalid("a finished pod".into()))?;
    let mut pod = converted.pod;
    Priorities::new(&cluster.priority_classes)
        .admit(
            &mut pod,
            converted.explicit_priority,
            converted.explicit_policy,
        )
        .map_err(|class| invalid(format!("no PriorityClass {class:?}")))?;
    Ok(PodFromFile {
        pod,
        manifest,
        kind,
    })
}

/// The pod a controller makes from `spec.template`: the workload's namespace, the
/// template's metadata, a name from the workload's.
fn from_template(v: &Value) -> Option<Value> {
    let template = v.get("spec")?.get("template")?;
    let name = v["metadata"]["name"].as_str().unwrap_or("pod");
    let ns = v["metadata"]["namespace"].as_str().unwrap_or("default");
    let mut meta = template
        .get("metadata")
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    meta["name"] = Value::String(format!("{name}-new"));
    meta["namespace"] = Value::String(ns.into());
    meta["uid"] = Value::String(format!("template-{ns}-{name}"));
    Some(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": template.get("spec").cloned().unwrap_or_default(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "
    spec:
      priorityClassName: high
      containers:
      - name: app
        image: registry.example/app:1
        resources:
          requests: {cpu: 500m, memory: 1Gi}";

    fn cluster() -> Cluster {
        let mut c = Cluster::new();
        c.priority_classes.insert(
            "high".into(),
            serde_json::from_value(serde_json::json!({"metadata": {"name": "high"},
                "value": 1000}))
            .unwrap(),
        );
        c
    }

    #[test]
    fn pods_and_workload_templates_become_the_pod_to_place() {
        let workload = |kind: &str| {
            format!(
                "apiVersion: apps/v1\nkind: {kind}\nmetadata: {{name: web, namespace: shop}}\nspec:\n  template:\n    metadata:\n      labels: {{app: web}}\n{SPEC}"
            )
        };
        let pod_doc = format!(
            "# a comment\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: one, labels: {{app: web}}}}\n{}\n  nodeName: n1",
            SPEC.lines()
                .map(|l| l.strip_prefix("    ").unwrap_or(l))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let cases = [
            (pod_doc, "default/one", "Pod"),
            (workload("Deployment"), "shop/web-new", "Deployment"),
            (workload("StatefulSet"), "shop/web-new", "StatefulSet"),
            (workload("Job"), "shop/web-new", "Job"),
        ];
        for (text, key, kind) in cases {
            let got = pod_from_text(&text, "f.yaml", &cluster())
                .unwrap_or_else(|e| panic!("{kind}: {e}\n{text}"));
            assert_eq!(got.pod.key(), key, "{kind}");
            assert_eq!(got.kind, kind);
            assert_eq!(got.pod.requests.milli_cpu, 500, "{kind}");
            assert_eq!(got.pod.priority, 1000, "{kind}: Priority admission");
            assert!(!got.pod.is_bound(), "{kind}: a pod yet to be created");
            assert_eq!(
                got.pod.labels.get("app").map(|s| &**s),
                Some("web"),
                "{kind}"
            );
        }
    }

    #[test]
    fn other_kinds_and_bad_files_are_errors_naming_the_file() {
        let cases = [
            ("kind: Service\nmetadata: {name: s}", "has no pod template"),
            (
                "kind: Deployment\nmetadata: {name: d}\nspec: {}",
                "spec.template is missing",
            ),
            (
                "kind: Pod\nmetadata: {name: p}\nspec:\n  priorityClassName: gone\n  containers: [{name: c}]",
                "no PriorityClass \"gone\"",
            ),
            ("[1, 2", "not a YAML or JSON object"),
        ];
        for (text, want) in cases {
            let err = pod_from_text(text, "f.yaml", &cluster())
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("f.yaml: ") && err.contains(want),
                "{text}: {err}"
            );
        }
    }
}

//! The inspector's what-if edits: the list the user built (`--what-if`, `w`, the
//! Needs and Node tabs, a remedy), in order, is the state; the edited cluster is
//! derived from the real model by [`crate::whatif::apply`], again whenever the model
//! changes. Cluster edits change the model every pane shows; a pod edit changes one
//! pod's replay: the pod selected when it was made, or (from the command line) each
//! pod's own, as `explain --what-if` would for it. Nothing here writes anywhere: the
//! edits live in this list only.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::Cluster;
use crate::whatif::{Edit, apply};

/// One active edit and the pod it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveEdit {
    pub edit: Edit,
    /// A pod edit's pod (`namespace/name`); `None` for a cluster edit, or a pod edit
    /// from the command line, which each pod's replay applies to that pod.
    pub pod: Option<String>,
}

impl ActiveEdit {
    /// The edit in its `--what-if` spelling, with its pod when it is bound to one.
    pub fn label(&self) -> String {
        match &self.pod {
            Some(p) => format!("{} ({p})", self.edit),
            None => self.edit.to_string(),
        }
    }

    /// Whether it changes the replay of `pod`.
    fn applies_to(&self, pod: &str) -> bool {
        !self.edit.is_pod_edit() || self.pod.as_deref().is_none_or(|p| p == pod)
    }
}

/// The pod edits one replay applies, and what to say of them all.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodEdits {
    pub edits: Vec<Edit>,
    /// Every edit that changes this pod's replay (cluster edits too), in the
    /// `--what-if` spelling: the before/after comparison's list.
    pub labels: Vec<String>,
    /// The cluster edits' notes (how a node was added, ...).
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct WhatIf {
    edits: Vec<ActiveEdit>,
    /// What the cluster edits said when last applied, in edit order.
    notes: Vec<String>,
    /// The edits (by index) that did not apply to the last model, with why.
    not_applied: Vec<(usize, String)>,
}

impl WhatIf {
    pub fn is_active(&self) -> bool {
        !self.edits.is_empty()
    }

    pub fn edits(&self) -> &[ActiveEdit] {
        &self.edits
    }

    fn cluster_edits(&self) -> Vec<Edit> {
        self.edits
            .iter()
            .filter(|a| !a.edit.is_pod_edit())
            .map(|a| a.edit.clone())
            .collect()
    }

    /// The edits a replay of `pod` applies on top of the edited cluster.
    pub fn for_pod(&self, pod: &str) -> PodEdits {
        let mine: Vec<&ActiveEdit> = self
            .edits
            .iter()
            .enumerate()
            .filter(|(i, a)| self.is_applied(*i) && a.applies_to(pod))
            .map(|(_, a)| a)
            .collect();
        PodEdits {
            edits: mine
                .iter()
                .filter(|a| a.edit.is_pod_edit())
                .map(|a| a.edit.clone())
                .collect(),
            labels: mine.iter().map(|a| a.edit.to_string()).collect(),
            notes: self.notes.clone(),
        }
    }

    /// The cluster every pane shows: the cluster edits applied to `base` (`base`
    /// itself without any). An edit that does not apply to this model (its node is
    /// not there, a pod edit's pod is gone; or a live source's first, empty model)
    /// stays in the list, not applied, until a model it fits or an undo; the
    /// errors of those are returned.
    pub fn derive(&mut self, base: &Arc<Cluster>) -> (Arc<Cluster>, Vec<String>) {
        let mut not_applied = Vec::new();
        let mut notes = Vec::new();
        let mut cluster = base.clone();
        for (i, a) in self.edits.iter().enumerate() {
            if a.edit.is_pod_edit() {
                continue;
            }
            match apply(&cluster, None, std::slice::from_ref(&a.edit)) {
                Ok(e) => {
                    notes.extend(e.notes.into_iter().map(|(_, n)| n));
                    cluster = Arc::new(e.cluster);
                }
                Err(e) => not_applied.push((i, e.to_string())),
            }
        }
        // Bound pod edits: each pod's, in order, on the edited cluster.
        let mut applied: BTreeMap<&str, Vec<Edit>> = BTreeMap::new();
        for (i, a) in self.edits.iter().enumerate() {
            let Some(key) = a.pod.as_deref() else {
                continue;
            };
            let mut mine = applied.get(key).cloned().unwrap_or_default();
            mine.push(a.edit.clone());
            let r = match cluster.pod(key) {
                None => Err(format!(
                    "what-if edit {:?}: pod {key} is not in the model",
                    a.edit.to_string()
                )),
                Some(p) => apply(&cluster, Some(p), &mine)
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
            };
            match r {
                Ok(()) => {
                    applied.insert(key, mine);
                }
                Err(e) => not_applied.push((i, e)),
            }
        }
        not_applied.sort();
        self.notes = notes;
        self.not_applied = not_applied;
        let errors = self.not_applied.iter().map(|(_, e)| e.clone()).collect();
        (cluster, errors)
    }

    /// Whether edit `i` is left out of the model shown (it does not apply to it).
    pub fn is_applied(&self, i: usize) -> bool {
        !self.not_applied.iter().any(|(j, _)| *j == i)
    }

    /// Add `edit` if it applies: a cluster edit to `edited` (then the new edited
    /// cluster is returned), a pod edit to `pod` (the selected pod, with its earlier
    /// edits). The error says why not.
    pub fn push(
        &mut self,
        edit: Edit,
        pod: Option<&str>,
        edited: &Cluster,
    ) -> Result<Option<Arc<Cluster>>, String> {
        if !edit.is_pod_edit() {
            let e = apply(edited, None, std::slice::from_ref(&edit)).map_err(|e| e.to_string())?;
            self.notes.extend(e.notes.into_iter().map(|(_, n)| n));
            self.edits.push(ActiveEdit { edit, pod: None });
            return Ok(Some(Arc::new(e.cluster)));
        }
        let Some(key) = pod else {
            return Err(format!(
                "what-if edit {:?}: select a pod first",
                edit.to_string()
            ));
        };
        let Some(p) = edited.pod(key) else {
            return Err(format!("what-if edit {:?}: no pod {key}", edit.to_string()));
        };
        let mut mine = self.for_pod(key).edits;
        mine.push(edit.clone());
        apply(edited, Some(p), &mine).map_err(|e| e.to_string())?;
        self.edits.push(ActiveEdit {
            edit,
            pod: Some(key.to_string()),
        });
        Ok(None)
    }

    /// Command-line edits: cluster edits and pod edits for whichever pod is explained.
    pub fn floating(edits: Vec<Edit>) -> WhatIf {
        WhatIf {
            edits: edits
                .into_iter()
                .map(|edit| ActiveEdit { edit, pod: None })
                .collect(),
            ..WhatIf::default()
        }
    }

    /// `u`: the last edit, taken off.
    pub fn undo(&mut self) -> Option<ActiveEdit> {
        let n = self.edits.len();
        self.not_applied.retain(|(i, _)| *i + 1 < n);
        self.edits.pop()
    }

    /// `U`: how many edits were taken off.
    pub fn clear(&mut self) -> usize {
        let n = self.edits.len();
        self.edits.clear();
        self.notes.clear();
        self.not_applied.clear();
        n
    }

    /// Whether any active edit changes the cluster (not only a pod).
    pub fn edits_cluster(&self) -> bool {
        !self.cluster_edits().is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{cluster, simple_node, simple_pod};

    fn base() -> Arc<Cluster> {
        let mut cordoned = simple_node("n2", "8", "8Gi");
        cordoned["spec"] = serde_json::json!({"unschedulable": true});
        Arc::new(cluster(
            vec![simple_node("n1", "2", "8Gi"), cordoned],
            vec![simple_pod("big", "4", "1Gi", None)],
        ))
    }

    fn edit(s: &str) -> Edit {
        s.parse().expect("edit")
    }

    #[test]
    fn a_cluster_edit_changes_the_derived_cluster_and_undo_restores_it() {
        let base = base();
        let mut w = WhatIf::default();
        let edited = w
            .push(edit("node.uncordon=n2"), None, &base)
            .expect("applies")
            .expect("a new cluster");
        assert!(!edited.node("n2").expect("n2").node.unschedulable);
        assert!(
            base.node("n2").expect("n2").node.unschedulable,
            "base untouched"
        );
        assert!(w.is_active() && w.edits_cluster());
        let (again, dropped) = w.derive(&base);
        assert!(dropped.is_empty());
        assert!(!again.node("n2").expect("n2").node.unschedulable);
        assert_eq!(w.undo().map(|a| a.edit), Some(edit("node.uncordon=n2")));
        let (back, _) = w.derive(&base);
        assert!(Arc::ptr_eq(&back, &base), "no edits: the real model itself");
    }

    #[test]
    fn a_pod_edit_is_bound_to_its_pod() {
        let base = base();
        let mut w = WhatIf::default();
        w.push(edit("pod.cpu=1"), Some("default/big"), &base)
            .expect("applies");
        w.push(edit("node.cordon=n1"), None, &base)
            .expect("applies");
        let mine = w.for_pod("default/big");
        assert_eq!(mine.edits, vec![edit("pod.cpu=1")]);
        assert_eq!(mine.labels, ["pod.cpu=1", "node.cordon=n1"]);
        let other = w.for_pod("default/other");
        assert!(other.edits.is_empty());
        assert_eq!(other.labels, ["node.cordon=n1"]);
        assert_eq!(w.edits()[0].label(), "pod.cpu=1 (default/big)");
        assert_eq!(w.clear(), 2);
        assert!(!w.is_active());
    }

    #[test]
    fn an_edit_that_does_not_apply_is_refused_with_its_reason() {
        let base = base();
        let mut w = WhatIf::default();
        let e = w
            .push(edit("node.uncordon=n3"), None, &base)
            .expect_err("no such node");
        assert!(e.contains("no node \"n3\""), "{e}");
        let e = w
            .push(edit("node.uncordon=n1"), None, &base)
            .expect_err("not cordoned");
        assert!(e.contains("not cordoned"), "{e}");
        let e = w
            .push(edit("pod.drop-gate=g"), None, &base)
            .expect_err("no pod");
        assert!(e.contains("select a pod first"), "{e}");
        assert!(!w.is_active());
    }

    #[test]
    fn edits_that_do_not_apply_to_a_new_model_wait_unapplied() {
        let base = base();
        let mut w = WhatIf::default();
        w.push(edit("node.uncordon=n2"), None, &base)
            .expect("applies");
        w.push(edit("pod.cpu=1"), Some("default/big"), &base)
            .expect("applies");
        let mut next = (*base).clone();
        next.delete_pod("default/big");
        let mut n2 = next.node("n2").expect("n2").node.as_ref().clone();
        n2.unschedulable = false;
        next.upsert_node(n2);
        let next = Arc::new(next);
        let (shown, errors) = w.derive(&next);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("not cordoned"), "{errors:?}");
        assert!(Arc::ptr_eq(&shown, &next), "nothing applied");
        assert_eq!(w.edits().len(), 2, "kept in the list");
        assert!(!w.is_applied(0) && !w.is_applied(1));
        assert!(w.for_pod("default/big").labels.is_empty());
        // The model they fit again: applied again.
        let (shown, errors) = w.derive(&base);
        assert!(errors.is_empty(), "{errors:?}");
        assert!(!shown.node("n2").expect("n2").node.unschedulable);
        assert_eq!(w.for_pod("default/big").edits, vec![edit("pod.cpu=1")]);
    }
}

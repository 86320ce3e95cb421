//! `--what-if EDIT`: the flag every command that replays shares, with the grammar in
//! its `--help`, and the edits parsed once at the edge (a malformed edit is an error
//! before anything is loaded).

use anyhow::Result;
use clap::Args;

use crate::whatif::{Edit, parse_edits};

/// The grammar as `--help` shows it; a test checks it lists every form the parser
/// takes ([`crate::whatif::GRAMMAR`]).
pub const WHAT_IF_HELP: &str = "\
Replay on an edited copy of the model (repeatable; applied in order). Nothing is \
written to any cluster, ever. Edits of the pod being explained:
  pod.cpu=QTY  pod.memory=QTY  pod.request.RESOURCE=QTY
                                 its effective request (as NodeResourcesFit sums it)
  pod.drop-node-selector=KEY     pod.drop-node-affinity (its required terms)
  pod.drop-pod-affinity=N        pod.drop-pod-anti-affinity=N   (N-th required term, 0-based)
  pod.drop-spread=N              (N-th topology spread constraint)
  pod.tolerate=KEY[=VALUE]:EFFECT
  pod.priority=N                 pod.drop-gate=NAME
Edits of the cluster:
  node.cordon=NODE               node.uncordon=NODE
  node.untaint=NODE:KEY[:EFFECT] node.label=NODE:KEY=VALUE
  node.add=N:like=NODE           (N clones of NODE: labels, taints, allocatable, images,
                                  its DaemonSet pods)
  pod.evict=NS/NAME              (a running pod off its node)";

#[derive(Debug, Args, Clone, Default)]
pub struct WhatIfArgs {
    /// Replay on an edited copy of the model (e.g. node.uncordon=gen-a3, pod.cpu=2);
    /// repeatable; nothing is written to any cluster. See --help for every edit.
    #[arg(long = "what-if", value_name = "EDIT", long_help = WHAT_IF_HELP)]
    pub what_if: Vec<String>,
}

impl WhatIfArgs {
    pub fn edits(&self) -> Result<Vec<Edit>> {
        Ok(parse_edits(&self.what_if)?)
    }

    /// Only cluster edits: for commands with no one pod to edit.
    pub fn cluster_edits(&self, command: &str) -> Result<Vec<Edit>> {
        let edits = self.edits()?;
        if let Some(e) = edits.iter().find(|e| e.is_pod_edit()) {
            anyhow::bail!(
                "what-if edit {:?} edits one pod; `{command}` takes cluster edits \
                 (node.*, pod.evict=NS/NAME); use it with `explain` or `capacity`",
                e.to_string()
            );
        }
        Ok(edits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_form_the_parser_takes() {
        for form in crate::whatif::GRAMMAR {
            assert!(WHAT_IF_HELP.contains(form), "--help misses {form}");
        }
    }

    #[test]
    fn cluster_only_commands_refuse_pod_edits_by_name() {
        let a = WhatIfArgs {
            what_if: vec!["node.cordon=a".into(), "pod.cpu=2".into()],
        };
        let e = a.cluster_edits("pods").unwrap_err().to_string();
        assert!(e.contains("\"pod.cpu=2\"") && e.contains("`pods`"), "{e}");
        let a = WhatIfArgs {
            what_if: vec!["node.cordon=a".into(), "pod.evict=ns/x".into()],
        };
        assert_eq!(a.cluster_edits("pods").unwrap().len(), 2);
        let a = WhatIfArgs {
            what_if: vec!["node.cordon".into()],
        };
        let e = a.edits().unwrap_err().to_string();
        assert!(e.contains("node.cordon") && e.contains("expected"), "{e}");
    }
}

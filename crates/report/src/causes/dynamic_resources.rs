//! DynamicResources: its node reasons ("cannot allocate all claims") name no claim;
//! the cycle already diagnosed, per claim, why each rejected node falls short (the
//! trace's `claims`), so the causes are those lines, each prefixed by its claim.

use schedscope_engine::engine::trace::Trace;

/// `claim gpu (ml/h100-gpu): request gpu: none of the 4 devices ...` for each claim
/// that falls short on `node`. Empty for a node past those diagnosed.
pub fn causes(trace: &Trace, node: &str) -> Vec<String> {
    let mut out = Vec::new();
    for c in &trace.claims {
        for n in c.nodes.iter().filter(|n| n.node == node) {
            for r in &n.reasons {
                out.push(format!("claim {} ({}): {r}", c.name, c.claim));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedscope_engine::engine::trace::{ClaimNodeTrace, ClaimTrace, Outcome};

    #[test]
    fn each_short_claim_of_the_node_is_named() {
        let mut t = Trace::empty(
            "ml/job".into(),
            0,
            Outcome::Unschedulable {
                nominated_node: None,
            },
        );
        let claim = |name: &str, nodes: Vec<(&str, &str)>| ClaimTrace {
            name: name.into(),
            claim: format!("ml/job-{name}"),
            nodes: nodes
                .into_iter()
                .map(|(n, r)| ClaimNodeTrace {
                    node: n.into(),
                    reasons: vec![r.into()],
                })
                .collect(),
            ..Default::default()
        };
        t.claims = vec![
            claim(
                "gpu",
                vec![
                    ("n1", "request gpu: 0 free"),
                    ("n2", "request gpu: none match"),
                ],
            ),
            claim("nic", vec![("n1", "request nic: none match")]),
        ];
        let cases: Vec<(&str, Vec<&str>)> = vec![
            (
                "n1",
                vec![
                    "claim gpu (ml/job-gpu): request gpu: 0 free",
                    "claim nic (ml/job-nic): request nic: none match",
                ],
            ),
            (
                "n2",
                vec!["claim gpu (ml/job-gpu): request gpu: none match"],
            ),
            ("n3", vec![]),
        ];
        for (node, want) in cases {
            assert_eq!(causes(&t, node), want, "{node}");
        }
    }
}

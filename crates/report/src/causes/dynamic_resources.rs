//! DynamicResources: its node reasons ("cannot allocate all claims") name no claim;
//! the pod's claims say, per claim, why each rejected node falls short
//! ([`crate::claims`]), so the causes are those lines, each prefixed by its claim.

use crate::claims::ClaimView;

/// `claim gpu (ml/h100-gpu): request gpu: none of the 4 devices ...` for each claim
/// that falls short on `node`. Empty for a node past those diagnosed.
pub fn causes(claims: &[ClaimView], node: &str) -> Vec<String> {
    let mut out = Vec::new();
    for c in claims {
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
    use crate::claims::ClaimNodeView;

    #[test]
    fn each_short_claim_of_the_node_is_named() {
        let claim = |name: &str, nodes: Vec<(&str, &str)>| ClaimView {
            name: name.into(),
            claim: format!("ml/job-{name}"),
            nodes: nodes
                .into_iter()
                .map(|(n, r)| ClaimNodeView {
                    node: n.into(),
                    reasons: vec![r.into()],
                })
                .collect(),
            ..Default::default()
        };
        let claims = vec![
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
            assert_eq!(causes(&claims, node), want, "{node}");
        }
    }
}

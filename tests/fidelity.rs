//! Fidelity scenarios: kube-scheduler v1.35's own answers (`expected.json`) against
//! ours, field by field, as `tests/fidelity/README.md` defines the comparison.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use schedscope::engine::SchedulerConfig;
use schedscope::engine::cycle::CycleOptions;
use schedscope::explain::explain;
use schedscope::render::json::to_json;
use schedscope::source::load_snapshot;
use serde_json::Value;

#[path = "support/fidelity.rs"]
mod support_fidelity;
use support_fidelity::compare;

fn scenario_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fidelity")
        .join(name)
}

/// Our answer for a scenario directory, as the CLI's `-o json` gives it.
pub fn answer(dir: &Path) -> Value {
    answer_with(dir, &CycleOptions::default())
}

fn scenario_config(dir: &Path) -> SchedulerConfig {
    let cfg_path = dir.join("config.yaml");
    if cfg_path.exists() {
        schedscope::source::read_scheduler_config(&cfg_path).expect("config loads")
    } else {
        SchedulerConfig::defaults()
    }
}

/// [`answer`] with `base`'s parallelism settings.
fn answer_with(dir: &Path, base: &CycleOptions) -> Value {
    let snap = load_snapshot(&dir.join("snapshot.yaml")).expect("snapshot loads");
    let config = scenario_config(dir);
    let pod = std::fs::read_to_string(dir.join("pod.txt")).unwrap();
    let opts = CycleOptions {
        all_filters: true,
        now: "2026-01-01T00:00:00Z".parse().unwrap(),
        parallelism: base.parallelism,
        min_nodes_per_worker: base.min_nodes_per_worker,
        ..Default::default()
    };
    let trace = explain(&snap.cluster, &config, pod.trim(), &opts).expect("explain");
    to_json(&trace)
}

fn check(name: &str) {
    let dir = scenario_dir(name);
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let actual = answer(&dir);
    let diffs = compare(&expected, &actual);
    assert!(
        diffs.is_empty(),
        "{name} differs from kube-scheduler:\n{}\nnot modelled: {}",
        diffs.join("\n"),
        actual["not_modelled"]
    );
}

macro_rules! scenarios {
    ($($test:ident => $dir:literal,)*) => {
        $(
            #[test]
            fn $test() {
                check($dir);
            }
        )*

        /// Every scenario directory has a test above, so none is silently skipped.
        #[test]
        fn every_scenario_directory_is_tested() {
            let listed: BTreeSet<&str> = [$($dir),*].into_iter().collect();
            let dirs: BTreeSet<String> = std::fs::read_dir(scenario_dir(""))
                .unwrap()
                .filter_map(|e| e.ok())
                .filter(|e| e.path().join("expected.json").exists())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let dirs: BTreeSet<&str> = dirs.iter().map(String::as_str).collect();
            assert_eq!(listed, dirs);
        }
    };
}

scenarios! {
    d01 => "d01-single-gpu-fits",
    d02 => "d02-no-matching-devices",
    d03 => "d03-count-two-one-per-node",
    d04 => "d04-allocation-mode-all",
    d05 => "d05-cel-attribute-capacity-selectors",
    d06 => "d06-match-attribute-constraint",
    d07 => "d07-allocated-claim-pinned",
    d08 => "d08-devices-in-use",
    d09 => "d09-shared-claim-reserved",
    d10 => "d10-first-available-fallback",
    d11 => "d11-admin-access",
    d12 => "d12-dra-with-resource-limits",
    d13 => "d13-unknown-deviceclass",
    d14 => "d14-missing-claim",
    d15 => "d15-network-attached-devices",
    d16 => "d16-claim-template",
    d17 => "d17-cel-cost-limit-exceeded-added",
    d18 => "d18-cel-cost-within-limit-added",
    h01 => "h01-basic-least-allocated",
    h02 => "h02-node-unschedulable",
    h03 => "h03-node-unschedulable-tolerated",
    h04 => "h04-taint-noschedule",
    h05 => "h05-taint-noexecute",
    h06 => "h06-taint-prefernoschedule-score",
    h07 => "h07-nodeselector",
    h08 => "h08-nodeaffinity-required-operators",
    h09 => "h09-nodeaffinity-matchfields",
    h10 => "h10-nodeaffinity-matchfields-unknown-node",
    h11 => "h11-nodeaffinity-preferred",
    h12 => "h12-nodeports",
    h13 => "h13-nodeports-wildcard-pending",
    h14 => "h14-resources-mixed-failures",
    h15 => "h15-resources-extended-gpu",
    h16 => "h16-resources-init-sidecar",
    h17 => "h17-resources-pod-overhead",
    h18 => "h18-scoring-most-allocated",
    h19 => "h19-scoring-requested-to-capacity-ratio",
    h20 => "h20-balanced-allocation-3-resources",
    h21 => "h21-best-effort-and-ties",
    h22 => "h22-volume-restrictions-rwop-preempt",
    h23 => "h23-volume-restrictions-disk-conflict",
    h24 => "h24-volumebinding-bound-pv-node-affinity",
    h25 => "h25-volumebinding-wffc-unbound",
    h26 => "h26-missing-pvc",
    h27 => "h27-volumebinding-unbound-immediate",
    h28 => "h28-volumezone",
    h29 => "h29-nodevolumelimits-csi",
    h30 => "h30-pts-hard-zone",
    h31 => "h31-pts-soft-scoring",
    h32 => "h32-pts-min-domains",
    h33 => "h33-pts-default-policies",
    h34 => "h34-pts-node-taints-policy-honor",
    h35 => "h35-pts-node-affinity-policy-ignore",
    h36 => "h36-pts-match-label-keys",
    h37 => "h37-pts-system-default-constraints",
    h38 => "h38-pts-missing-topology-label",
    h39 => "h39-ipa-required-affinity",
    h40 => "h40-ipa-required-anti-affinity",
    h41 => "h41-ipa-existing-pods-anti-affinity",
    h42 => "h42-ipa-preferred-and-symmetry",
    h43 => "h43-ipa-namespace-selector",
    h44 => "h44-ipa-self-affinity-first-pod",
    h45 => "h45-image-locality",
    h46 => "h46-scheduling-gates",
    h47 => "h47-preemption-basic",
    h48 => "h48-preemption-pdb",
    h49 => "h49-preemption-reprieve",
    h50 => "h50-preemption-policy-never",
    h51 => "h51-nominated-pods",
    h52 => "h52-preemption-no-candidates",
    h53 => "h53-config-disable-plugins",
    h54 => "h54-config-weights",
    h55 => "h55-config-add-plugin",
    h56 => "h56-config-multi-profile",
    h57 => "h57-fiterror-lexicographic-reasons",
    h58 => "h58-config-pts-default-constraints-list",
    h59 => "h59-config-node-affinity-added",
    h60 => "h60-nominated-node-of-pending-pod",
    h61 => "h61-list-format-global-default-priority",
    h62 => "h62-hostnetwork-port-defaulting",
    r01 => "r01-a-one-gpu-fits",
    r02 => "r02-b-no-matching-device",
    r03 => "r03-c-two-gpus-match-attribute",
    r04 => "r04-d-allocated-claim-pinned",
    r05 => "r05-d2-pinned-node-full",
    r06 => "r06-d3-unreserved-claim-deallocated",
    r07 => "r07-e-all-devices-in-use",
    r08 => "r08-f-missing-claim",
    r09 => "r09-g-allocated-plus-new-claim",
    r10 => "r10-h-template-claim-not-created",
    r11 => "r11-i-cel-runtime-error",
    r12 => "r12-j-allocation-mode-all",
    r13 => "r13-k-pool-states",
    r14 => "r14-l-two-claims-compete",
    r15 => "r15-m-unknown-device-class",
    r16 => "r16-n-first-available-score",
    r17 => "r17-o-claim-being-deleted",
    r18 => "r18-p-template-claim-not-owned",
    r19 => "r19-p2-template-claim-owned",
    r20 => "r20-q-same-claim-twice",
    r21 => "r21-r-class-cel-runtime-error",
    r22 => "r22-s1-preemption-frees-cpu",
    r23 => "r23-s2-preemption-cannot-free-device",
}

/// Every scenario directory (those with an `expected.json`), in name order.
fn all_scenario_dirs() -> Vec<PathBuf> {
    let dirs = support_fidelity::scenario_dirs();
    assert!(dirs.len() > 50, "scenarios found: {}", dirs.len());
    dirs
}

/// Filter and Score over node chunks in parallel give what the sequential run gives,
/// byte for byte: the explain JSON of every scenario, and a simulation of each
/// scenario's cluster (trace of every attempt included). One node per worker at
/// least, so that these small clusters are split.
#[test]
fn parallel_node_evaluation_matches_sequential_in_every_scenario() {
    use schedscope::engine::scheduler::{SimOptions, simulate};
    use schedscope::render::simulation;
    let dirs = all_scenario_dirs();
    for dir in &dirs {
        let run = |parallelism: usize| {
            let opts = CycleOptions {
                parallelism,
                min_nodes_per_worker: 1,
                ..Default::default()
            };
            let explained = serde_json::to_string(&answer_with(dir, &opts)).unwrap();
            let snap = load_snapshot(&dir.join("snapshot.yaml")).expect("snapshot loads");
            let sim_opts = SimOptions {
                parallelism,
                min_nodes_per_worker: 1,
                ..SimOptions::default()
            };
            let result = simulate(snap.cluster, scenario_config(dir), sim_opts);
            let simulated = serde_json::to_string(&simulation::to_json(&result, true)).unwrap();
            (explained, simulated)
        };
        let sequential = run(1);
        for n in [2, 3, 8] {
            let parallel = run(n);
            assert!(
                parallel.0 == sequential.0,
                "{}: explain differs with parallelism {n}",
                dir.display()
            );
            assert!(
                parallel.1 == sequential.1,
                "{}: simulate differs with parallelism {n}",
                dir.display()
            );
        }
    }
}

/// All-filters mode reads normal mode's verdicts off its own pass instead of
/// filtering twice: everything but `filter_all` must be what normal mode gives, for
/// every pending pod of every scenario (nominated pods, PreFilter skips and
/// rejections, errors included), sequential and on three workers.
#[test]
fn all_filters_mode_gives_normal_modes_answer_in_every_scenario() {
    let dirs = all_scenario_dirs();
    let mut compared = 0;
    for dir in &dirs {
        let snap = load_snapshot(&dir.join("snapshot.yaml")).expect("snapshot loads");
        let config = scenario_config(dir);
        let pods: Vec<String> = snap.cluster.pending_pods().map(|p| p.key()).collect();
        for pod in &pods {
            for parallelism in [1, 3] {
                let run = |all_filters: bool| {
                    let opts = CycleOptions {
                        all_filters,
                        now: "2026-01-01T00:00:00Z".parse().unwrap(),
                        parallelism,
                        min_nodes_per_worker: 1,
                        ..Default::default()
                    };
                    explain(&snap.cluster, &config, pod, &opts)
                };
                let (Ok(normal), Ok(mut all)) = (run(false), run(true)) else {
                    continue;
                };
                // The claims' diagnosis covers every node DynamicResources rejects,
                // which all-filters mode knows of beyond the first rejections.
                let of = |t: &schedscope::engine::trace::Trace| {
                    let p = snap.cluster.pod(pod).expect("listed pod");
                    schedscope::report::claims::of_trace(t, &snap.cluster, p)
                };
                let (mut normal_claims, mut all_claims) = (of(&normal), of(&all));
                assert_eq!(
                    normal_claims.len(),
                    all_claims.len(),
                    "{}: {pod}",
                    dir.display()
                );
                for (n, a) in normal_claims.iter_mut().zip(&mut all_claims) {
                    let extra = std::mem::take(&mut a.nodes);
                    for d in std::mem::take(&mut n.nodes) {
                        assert!(extra.contains(&d), "{}: {pod}: {d:?}", dir.display());
                    }
                }
                assert_eq!(normal_claims, all_claims, "{}: {pod}", dir.display());
                all.filter_all = None;
                if normal != all {
                    let (a, b) = (serde_json::to_value(&normal), serde_json::to_value(&all));
                    let (Ok(Value::Object(a)), Ok(Value::Object(b))) = (a, b) else {
                        panic!("{}: {pod}: traces differ", dir.display());
                    };
                    let differing: Vec<String> = a
                        .iter()
                        .filter(|(k, v)| b.get(*k) != Some(v))
                        .map(|(k, v)| format!("{k}: normal {v}, all-filters {}", b[k]))
                        .collect();
                    panic!("{}: {pod}: {}", dir.display(), differing.join("; "));
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "pods compared: {compared}");
}

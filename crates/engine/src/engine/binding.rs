//! The binding-half extension points, each run once over the profile's plugins
//! (upstream: pkg/scheduler/framework/runtime/framework.go, `RunReservePluginsReserve`,
//! `RunReservePluginsUnreserve`, `RunPermitPlugins`, `RunPreBindPreFlights`,
//! `RunPreBindPlugins`, `RunBindPlugins`, `RunPostBindPlugins`): each returns the
//! phase's trace and the framework's status, with upstream's error wrapping. In what
//! order they run and what a failure means is the callers': the simulator's
//! scheduling and binding cycles ([`super::scheduler`], which also own the cluster
//! model and what assume, forget and bind mean there) and `explain`'s dry run
//! ([`super::cycle`]).

use std::collections::BTreeSet;
use std::time::Duration;

use super::fit_error::fit_error_message;
use super::framework::{Ctx, CycleState, Framework, NodeToStatus};
use super::status::{Code, Status};
use super::waiting::MAX_PERMIT_TIMEOUT;
use crate::engine::trace::{PhaseTrace, PluginResult};
use crate::model::Pod;

fn phase(point: &str) -> PhaseTrace {
    PhaseTrace {
        point: point.into(),
        plugins: Vec::new(),
    }
}

/// `RunReservePluginsReserve`: in order, the first non-success stops. Rejections keep
/// their code (plugin stamped); anything else becomes
/// `running Reserve plugin "<name>": <msg>`.
pub fn reserve(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> (PhaseTrace, Status) {
    let mut tr = phase("Reserve");
    for p in &fw.reserve {
        let Some(r) = p.as_reserve() else { continue };
        let st = r.reserve(cx, state, pod, host);
        tr.plugins.push(PluginResult::new(p.name(), &st));
        if st.is_success() {
            continue;
        }
        let st = stamp("Reserve", p.name(), st);
        return (tr, st);
    }
    (tr, Status::success())
}

/// `RunReservePluginsUnreserve`: every Reserve plugin, in reverse order.
pub fn unreserve(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> PhaseTrace {
    let mut tr = phase("Unreserve");
    for p in fw.reserve.iter().rev() {
        let Some(r) = p.as_reserve() else { continue };
        r.unreserve(cx, state, pod, host);
        tr.plugins
            .push(PluginResult::new(p.name(), &Status::success()));
    }
    tr
}

/// What Permit decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PermitOutcome {
    Allowed,
    /// Plugins that asked to wait, with their timeouts (capped at 15 minutes).
    Wait(Vec<(String, Duration)>),
    /// A rejection (plugin stamped) or an Error (wrapped).
    Failed(Status),
}

/// `RunPermitPlugins`: Success → next; rejected → stop; Wait → remember the capped
/// timeout and go on; anything else → `running Permit plugin "<name>": <msg>`.
pub fn permit(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> (PhaseTrace, PermitOutcome) {
    let mut tr = phase("Permit");
    let mut waits: Vec<(String, Duration)> = Vec::new();
    for p in &fw.permit {
        let Some(pm) = p.as_permit() else { continue };
        let (st, timeout) = pm.permit(cx, state, pod, host);
        let mut res = PluginResult::new(p.name(), &st);
        match st.code {
            Code::Success => tr.plugins.push(res),
            Code::Wait => {
                let capped = timeout.min(MAX_PERMIT_TIMEOUT);
                res.reasons
                    .push(format!("wait up to {}", crate::engine::go_duration(capped)));
                tr.plugins.push(res);
                waits.push((p.name().to_string(), capped));
            }
            _ => {
                tr.plugins.push(res);
                return (tr, PermitOutcome::Failed(stamp("Permit", p.name(), st)));
            }
        }
    }
    if waits.is_empty() {
        (tr, PermitOutcome::Allowed)
    } else {
        (tr, PermitOutcome::Wait(waits))
    }
}

/// The Wait status Permit returns when a plugin asked to wait.
pub fn waiting_status(pod: &Pod) -> Status {
    Status::new(
        Code::Wait,
        [format!(
            "one or more plugins asked to wait and no plugin rejected pod {:?}",
            pod.name
        )],
    )
}

/// `PreBindPreFlight` of every PreBind plugin (upstream: framework/runtime/framework.go, RunPreBindPreFlights): the overall status and the
/// plugins to skip in PreBind.
pub fn pre_bind_pre_flight(
    fw: &Framework,
    cx: &Ctx,
    state: &CycleState,
    pod: &Pod,
    host: &str,
) -> (Status, BTreeSet<String>) {
    let mut skip = BTreeSet::new();
    let mut any_success = false;
    for p in &fw.pre_bind {
        let Some(pb) = p.as_pre_bind() else { continue };
        let st = pb.pre_bind_pre_flight(cx, state, pod, host);
        match st.code {
            Code::Success => any_success = true,
            Code::Skip => {
                skip.insert(p.name().to_string());
            }
            Code::Error => {
                return (
                    Status::error(format!(
                        "running PreBindPreFlight {:?}: {}",
                        p.name(),
                        st.message()
                    ))
                    .with_plugin(p.name()),
                    skip,
                );
            }
            other => {
                return (
                    Status::error(format!(
                        "PreBindPreFlight {} returned {:?}, which is unsupported. It is supposed to return Success, Skip, or Error status",
                        p.name(),
                        other.as_str()
                    ))
                    .with_plugin(p.name()),
                    skip,
                );
            }
        }
    }
    let st = if any_success {
        Status::success()
    } else {
        Status::skip()
    };
    (st, skip)
}

/// `RunPreBindPlugins` without the plugins whose pre-flight said Skip.
pub fn pre_bind(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
    skip: &BTreeSet<String>,
) -> (PhaseTrace, Status) {
    let mut tr = phase("PreBind");
    for p in &fw.pre_bind {
        let Some(pb) = p.as_pre_bind() else { continue };
        if skip.contains(p.name()) {
            tr.plugins
                .push(PluginResult::new(p.name(), &Status::skip()));
            continue;
        }
        let st = pb.pre_bind(cx, state, pod, host);
        tr.plugins.push(PluginResult::new(p.name(), &st));
        if st.is_success() {
            continue;
        }
        let st = stamp("PreBind", p.name(), st);
        return (tr, st);
    }
    (tr, Status::success())
}

/// `RunBindPlugins`: Skip → next; the first non-Skip result is final (DefaultBinder
/// is the usual one). All skipping → Skip, which the caller treats as a failure.
pub fn bind(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> (PhaseTrace, Status) {
    let mut tr = phase("Bind");
    for p in &fw.bind {
        let Some(b) = p.as_bind() else { continue };
        let st = b.bind(cx, state, pod, host);
        tr.plugins.push(PluginResult::new(p.name(), &st));
        if st.is_skip() {
            continue;
        }
        if st.is_success() {
            return (tr, st);
        }
        let st = stamp("Bind", p.name(), st);
        return (tr, st);
    }
    (tr, Status::skip())
}

/// `RunPostBindPlugins`: informational.
pub fn post_bind(
    fw: &Framework,
    cx: &Ctx,
    state: &mut CycleState,
    pod: &Pod,
    host: &str,
) -> PhaseTrace {
    let mut tr = phase("PostBind");
    for p in &fw.post_bind {
        let Some(pb) = p.as_post_bind() else { continue };
        pb.post_bind(cx, state, pod, host);
        tr.plugins
            .push(PluginResult::new(p.name(), &Status::success()));
    }
    tr
}

/// The FitError of a rejection after host selection (Reserve, Permit, WaitOnPermit,
/// PreBind): one node, the host, with that status: `0/1 nodes are available: 1 <msg>.`
pub fn one_node_fit_error(st: &Status) -> String {
    let statuses = NodeToStatus {
        statuses: vec![Some(st.clone())],
        absent: Status::success(),
    };
    fit_error_message(1, &statuses, "", "")
}

/// The scheduling-failure message of a binding-half status: a FitError over the host
/// for rejections, the status message otherwise.
pub fn failure_message(st: &Status) -> String {
    if st.is_rejected() {
        one_node_fit_error(st)
    } else if st.is_skip() {
        "no Bind plugin bound the pod (all returned Skip)".to_string()
    } else {
        st.message()
    }
}

/// A failed binding-half status as the framework returns it: rejections keep their
/// code with the plugin stamped; anything else becomes an Error naming the point.
fn stamp(point: &str, plugin: &str, st: Status) -> Status {
    if st.is_rejected() {
        st.with_plugin(plugin)
    } else {
        Status::error(format!(
            "running {point} plugin {plugin:?}: {}",
            st.message()
        ))
        .with_plugin(plugin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::framework::{BindPlugin, Plugin, PreBindPlugin};
    use crate::model::Cluster;
    use crate::model::testing::{pod, simple_pod};
    use std::sync::Arc;

    struct P {
        name: &'static str,
        permit: Option<(Code, u64)>,
        pre_flight: Code,
        bind: Option<Code>,
    }
    impl Plugin for P {
        fn name(&self) -> &str {
            self.name
        }
        fn as_permit(&self) -> Option<&dyn crate::engine::framework::PermitPlugin> {
            self.permit.map(|_| self as _)
        }
        fn as_pre_bind(&self) -> Option<&dyn PreBindPlugin> {
            Some(self)
        }
        fn as_bind(&self) -> Option<&dyn BindPlugin> {
            self.bind.map(|_| self as _)
        }
    }
    impl crate::engine::framework::PermitPlugin for P {
        fn permit(&self, _: &Ctx, _: &mut CycleState, _: &Pod, _: &str) -> (Status, Duration) {
            let (c, s) = self.permit.unwrap_or((Code::Success, 0));
            (Status::new(c, ["why"]), Duration::from_secs(s))
        }
    }
    impl PreBindPlugin for P {
        fn pre_bind_pre_flight(&self, _: &Ctx, _: &CycleState, _: &Pod, _: &str) -> Status {
            Status::new(self.pre_flight, ["pf"])
        }
        fn pre_bind(&self, _: &Ctx, _: &mut CycleState, _: &Pod, _: &str) -> Status {
            Status::unschedulable("volume gone")
        }
    }
    impl BindPlugin for P {
        fn bind(&self, _: &Ctx, _: &mut CycleState, _: &Pod, _: &str) -> Status {
            Status::new(self.bind.unwrap_or(Code::Skip), ["bind says"])
        }
    }

    fn p(name: &'static str) -> P {
        P {
            name,
            permit: None,
            pre_flight: Code::Skip,
            bind: None,
        }
    }

    fn run<T>(f: impl FnOnce(&Ctx, &mut CycleState, &Pod) -> T) -> T {
        let c = Cluster::new();
        let cx = Ctx {
            cluster: &c,
            now: Default::default(),
        };
        let pd = pod(simple_pod("x", "1", "1Gi", None));
        f(&cx, &mut CycleState::default(), &pd)
    }

    #[test]
    fn permit_collects_capped_waits_and_stops_at_rejection() {
        let mut fw = Framework {
            permit: vec![
                Arc::new(P {
                    permit: Some((Code::Wait, 3600)),
                    ..p("A")
                }),
                Arc::new(P {
                    permit: Some((Code::Wait, 5)),
                    ..p("B")
                }),
            ],
            ..Default::default()
        };
        let (tr, out) = run(|cx, st, pd| permit(&fw, cx, st, pd, "n"));
        assert_eq!(
            out,
            PermitOutcome::Wait(vec![
                ("A".into(), Duration::from_secs(900)),
                ("B".into(), Duration::from_secs(5))
            ])
        );
        assert_eq!(tr.plugins[0].reasons, ["why", "wait up to 15m0s"]);

        fw.permit.push(Arc::new(P {
            permit: Some((Code::Unschedulable, 0)),
            ..p("C")
        }));
        let (_, out) = run(|cx, st, pd| permit(&fw, cx, st, pd, "n"));
        let PermitOutcome::Failed(st) = out else {
            panic!("expected a rejection")
        };
        assert_eq!(st.plugin.as_deref(), Some("C"));
        assert_eq!(one_node_fit_error(&st), "0/1 nodes are available: 1 why.");

        fw.permit = vec![Arc::new(P {
            permit: Some((Code::Error, 0)),
            ..p("D")
        })];
        let (_, out) = run(|cx, st, pd| permit(&fw, cx, st, pd, "n"));
        assert_eq!(
            out,
            PermitOutcome::Failed(
                Status::error("running Permit plugin \"D\": why").with_plugin("D")
            )
        );
    }

    #[test]
    fn waiting_status_message() {
        let pd = pod(simple_pod("x", "1", "1Gi", None));
        assert_eq!(
            waiting_status(&pd).message(),
            "one or more plugins asked to wait and no plugin rejected pod \"x\""
        );
    }

    #[test]
    fn pre_flight_codes() {
        let mut fw = Framework {
            pre_bind: vec![Arc::new(p("S"))],
            ..Default::default()
        };
        let (st, skip) = run(|cx, s, pd| pre_bind_pre_flight(&fw, cx, s, pd, "n"));
        assert!(st.is_skip());
        assert!(skip.contains("S"));
        fw.pre_bind.push(Arc::new(P {
            pre_flight: Code::Success,
            ..p("OK")
        }));
        let (st, _) = run(|cx, s, pd| pre_bind_pre_flight(&fw, cx, s, pd, "n"));
        assert!(st.is_success());
        fw.pre_bind = vec![Arc::new(P {
            pre_flight: Code::Error,
            ..p("E")
        })];
        let (st, _) = run(|cx, s, pd| pre_bind_pre_flight(&fw, cx, s, pd, "n"));
        assert_eq!(st.message(), "running PreBindPreFlight \"E\": pf");
        fw.pre_bind = vec![Arc::new(P {
            pre_flight: Code::Unschedulable,
            ..p("U")
        })];
        let (st, _) = run(|cx, s, pd| pre_bind_pre_flight(&fw, cx, s, pd, "n"));
        assert_eq!(
            st.message(),
            "PreBindPreFlight U returned \"Unschedulable\", which is unsupported. It is supposed to return Success, Skip, or Error status"
        );
    }

    #[test]
    fn pre_bind_skips_and_keeps_rejections() {
        let fw = Framework {
            pre_bind: vec![Arc::new(p("S")), Arc::new(p("R"))],
            ..Default::default()
        };
        let skip: BTreeSet<String> = ["S".to_string()].into();
        let (tr, st) = run(|cx, s, pd| pre_bind(&fw, cx, s, pd, "n", &skip));
        assert_eq!(tr.plugins[0].code, Code::Skip);
        assert_eq!(st.code, Code::Unschedulable);
        assert_eq!(st.plugin.as_deref(), Some("R"));
        assert_eq!(
            failure_message(&st),
            "0/1 nodes are available: 1 volume gone."
        );
    }

    #[test]
    fn first_non_skip_binder_is_final() {
        let mut fw = Framework {
            bind: vec![
                Arc::new(P {
                    bind: Some(Code::Skip),
                    ..p("Skipper")
                }),
                Arc::new(P {
                    bind: Some(Code::Success),
                    ..p("Binder")
                }),
                Arc::new(P {
                    bind: Some(Code::Error),
                    ..p("Never")
                }),
            ],
            ..Default::default()
        };
        let (tr, st) = run(|cx, s, pd| bind(&fw, cx, s, pd, "n"));
        assert!(st.is_success());
        assert_eq!(tr.plugins.len(), 2);
        fw.bind.remove(1);
        let (_, st) = run(|cx, s, pd| bind(&fw, cx, s, pd, "n"));
        assert_eq!(st.message(), "running Bind plugin \"Never\": bind says");
        fw.bind.remove(1);
        let (_, st) = run(|cx, s, pd| bind(&fw, cx, s, pd, "n"));
        assert!(st.is_skip());
    }
}

//! DefaultBinder (Bind). Upstream creates the `pods/binding` subresource; the engine is
//! pure, so binding always succeeds here and the caller applies the result to its
//! cluster model.

use std::sync::Arc;

use crate::engine::framework::{BindPlugin, Ctx, CycleState, Plugin};
use crate::engine::status::Status;
use crate::model::Pod;

pub const NAME: &str = "DefaultBinder";

pub struct DefaultBinder;

pub fn new(
    _args: &serde_json::Value,
    _fts: &crate::version::Features,
) -> Result<Arc<dyn Plugin>, String> {
    Ok(Arc::new(DefaultBinder))
}

impl Plugin for DefaultBinder {
    fn name(&self) -> &str {
        NAME
    }
    fn as_bind(&self) -> Option<&dyn BindPlugin> {
        Some(self)
    }
}

impl BindPlugin for DefaultBinder {
    fn bind(&self, _cx: &Ctx, _state: &mut CycleState, _pod: &Pod, _node: &str) -> Status {
        Status::success()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::testing::{cluster, pod, simple_pod};
    use k8s_openapi::jiff::Timestamp;

    #[test]
    fn binds_and_is_a_binder_only() {
        let c = cluster(vec![], vec![]);
        let cx = Ctx {
            cluster: &c,
            now: Timestamp::UNIX_EPOCH,
        };
        let pl = new(&serde_json::Value::Null, &Default::default()).unwrap();
        assert!(pl.as_filter().is_none() && pl.as_score().is_none());
        let p = pod(simple_pod("p", "1", "1Gi", None));
        let st = pl
            .as_bind()
            .unwrap()
            .bind(&cx, &mut CycleState::default(), &p, "n1");
        assert!(st.is_success());
    }
}

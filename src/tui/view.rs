//! The inspector's view models come from [`crate::report`], shared with every other
//! output; re-exported here under their old paths. What is only the inspector's
//! (which tab explains a pipeline stage) stays here.

pub use crate::report::pods::{PodQuery, pod_rows};
pub use crate::report::{
    FilterRow, Group, GroupKind, Mark, PodRow, PodState, Stage, StageDetail, StagePlugin,
    TraceView, abbreviations, contains_ci, is_key, legend, plural, pod_reason, pod_state,
    short_fit_message,
};

use super::action::Tab;

/// The tab that explains a pipeline stage in detail.
impl From<StageDetail> for Tab {
    fn from(d: StageDetail) -> Tab {
        match d {
            StageDetail::Filters => Tab::Filters,
            StageDetail::Preemption => Tab::Preemption,
            StageDetail::Scores => Tab::Scores,
            StageDetail::Waiting => Tab::Waiting,
        }
    }
}

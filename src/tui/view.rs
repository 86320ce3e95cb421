//! The inspector's own part of the view models, which come from [`crate::report`]
//! (shared with every other output, imported from there): which tab explains a
//! pipeline stage.

use crate::report::StageDetail;

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

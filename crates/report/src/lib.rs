//! The presentation model: what a person reads about a trace, a pod or the queue,
//! derived once and drawn by every output (the `explain` table, JSON, the `simulate`
//! text and the inspector). UI-free: no terminal, no clock (times come in as
//! arguments), no I/O, so the outputs cannot disagree about a grouping, a rank, an
//! abbreviation or a duration.

pub mod answer;
pub mod capacity;
pub mod causes;
pub mod claims;
pub mod format;
pub mod needs;
pub mod pods;
pub mod recorded;
pub mod remedies;
pub mod scheduler_word;
pub mod trace;
pub mod whatif;

pub use answer::{Answer, Headline, RecordedWord, ReleaseNote};
pub use causes::{CauseLine, Causes};
pub use claims::{ClaimNodeView, ClaimView};
pub use format::{
    amount, bytes, countdown, cpu, go_duration, offset, plural, priority, signed, thousands,
};
pub use pods::{
    HeldPod, ListEntry, PodQuery, PodRow, PodState, PodVerdict, PodsList, ReasonGroup, contains_ci,
    group_by_reason, is_key, newest_first, pod_reason, pod_rows, pod_state, short_fit_message,
};
pub use recorded::{Completeness, Recorded, RecordedVerdict};
pub use trace::{
    FilterRow, Group, GroupKind, Mark, Stage, StageDetail, StagePlugin, TraceView, abbreviations,
    legend,
};

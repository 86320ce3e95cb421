//! Everything that can change the app: keys and mouse turned into intents, plus the
//! owned messages the timer, the trace worker and data sources send.

pub use crate::source::{DataUpdate, Notice};

/// The detail tabs, in tab-bar order (keys `1`..`9` then `0`; History only in
/// simulation mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tab {
    Pipeline,
    Filters,
    Scores,
    Node,
    Compare,
    Preemption,
    Waiting,
    Profile,
    /// Simulation mode: the pod's scheduling attempts.
    History,
    /// The selected pod's own needs (key `0`, after the others so theirs stay).
    Needs,
}

impl Tab {
    pub const ALL: [Tab; 10] = [
        Tab::Pipeline,
        Tab::Filters,
        Tab::Scores,
        Tab::Node,
        Tab::Compare,
        Tab::Preemption,
        Tab::Waiting,
        Tab::Profile,
        Tab::History,
        Tab::Needs,
    ];
    /// The tabs without a simulation.
    pub const INSPECT: [Tab; 9] = [
        Tab::Pipeline,
        Tab::Filters,
        Tab::Scores,
        Tab::Node,
        Tab::Compare,
        Tab::Preemption,
        Tab::Waiting,
        Tab::Profile,
        Tab::Needs,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Tab::Pipeline => "Pipeline",
            Tab::Filters => "Filters",
            Tab::Scores => "Scores",
            Tab::Node => "Node",
            Tab::Compare => "Compare",
            Tab::Preemption => "Preemption",
            Tab::Waiting => "Waiting",
            Tab::Profile => "Profile",
            Tab::History => "History",
            Tab::Needs => "Needs",
        }
    }

    pub fn index(self) -> usize {
        Tab::ALL.iter().position(|t| *t == self).unwrap_or(0)
    }

    /// The digit that selects it, as the tab bar shows it: `1`..`9`, then `0`.
    pub fn digit(self) -> usize {
        (self.index() + 1) % 10
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    Pods,
    Detail,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseKind {
    Click,
    ScrollUp,
    ScrollDown,
}

#[derive(Clone, Debug)]
pub enum Action {
    Quit,
    ToggleHelp,
    /// Close the overlay, cancel the prompt, clear a filter, or go back a tab.
    Back,
    FocusNext,
    FocusPrev,
    SelectTab(Tab),
    NextTab,
    PrevTab,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Left,
    Right,
    Enter,
    /// `/`: filter the focused list.
    StartFilter,
    /// `:`: command prompt (`:ns NAME`, `:pod NS/NAME`, `:node NAME`, `:theme NAME`).
    StartCommand,
    InputChar(char),
    InputBackspace,
    InputClear,
    InputSubmit,
    InputCancel,
    /// Show every pod, not only pending ones.
    ToggleAllPods,
    /// Cycle the replay profile: the pod's own, then each profile in turn.
    CycleProfile,
    CycleTheme,
    /// Sort the focused table by the current column (again: reverse).
    Sort,
    /// Filters tab: matrix ↔ summary by reason.
    ToggleView,
    /// Mark the selected node for comparison (second mark opens Compare).
    MarkCompare,
    SwapCompare,
    /// Waiting tab: allow the selected pod at every plugin it waits on.
    Allow,
    /// Waiting tab: reject the selected pod (prompts for a reason).
    Reject,
    /// Simulation: play (time follows the wall clock, one cycle per tick) or pause.
    SimPlayPause,
    /// Simulation: one scheduling cycle (or, with nothing to pop, a jump to the next
    /// deadline).
    SimStep,
    /// Simulation: every cycle possible at the current time.
    SimRunIdle,
    /// Live: open or close the connection view (each watched kind's state).
    ToggleConnection,
    /// Live: list every failed or forbidden kind again now.
    RetryConnection,
    /// What-if: take the last edit off.
    UndoEdit,
    /// What-if: take every edit off.
    ClearEdits,
    /// What-if: the prompt for an edit.
    StartWhatIf,
    /// Open or close the Remedies view.
    ToggleRemedies,
    /// Node tab, what-if: cordon the node, or uncordon it.
    NodeCordon,
    /// Node tab, what-if: remove a taint (the prompt, filled with the first).
    NodeUntaint,
    /// Node tab, what-if: one more node like this one.
    NodeClone,
    Mouse {
        kind: MouseKind,
        column: u16,
        row: u16,
    },
    Resize(u16, u16),
    /// 1 Hz, only while a countdown runs or a simulation plays.
    Tick,
    Data(DataUpdate),
}

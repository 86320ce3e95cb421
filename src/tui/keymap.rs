//! Keys → actions. One table drives both the mapping and the help overlay, so the help
//! always lists every key. Keys are k9s/gitui habits: `/` filter, `:` commands, `?` help,
//! `esc` back, `q`/`ctrl-c` quit, vi motions next to the arrows.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::action::{Action, Focus, Tab};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Global,
    /// The pods list has focus.
    Pods,
    /// The detail pane has focus, on this tab.
    Tab(Tab),
}

impl Scope {
    pub fn title(self) -> String {
        match self {
            Scope::Global => "Everywhere".into(),
            Scope::Pods => "Pods list".into(),
            Scope::Tab(t) => format!("{} tab", t.title()),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key(pub KeyCode, pub KeyModifiers);

const fn k(c: char) -> Key {
    Key(KeyCode::Char(c), KeyModifiers::NONE)
}
const fn ctrl(c: char) -> Key {
    Key(KeyCode::Char(c), KeyModifiers::CONTROL)
}
const fn code(c: KeyCode) -> Key {
    Key(c, KeyModifiers::NONE)
}

pub struct Binding {
    pub scope: Scope,
    pub keys: &'static [Key],
    /// How the help overlay writes the keys.
    pub label: &'static str,
    pub action: Action,
    pub help: &'static str,
}

const fn b(
    scope: Scope,
    keys: &'static [Key],
    label: &'static str,
    action: Action,
    help: &'static str,
) -> Binding {
    Binding {
        scope,
        keys,
        label,
        action,
        help,
    }
}

use Scope::{Global, Pods};

pub static BINDINGS: &[Binding] = &[
    b(
        Global,
        &[k('q'), ctrl('c')],
        "q ctrl-c",
        Action::Quit,
        "quit",
    ),
    b(Global, &[k('?')], "?", Action::ToggleHelp, "this help"),
    b(
        Global,
        &[code(KeyCode::Esc)],
        "esc",
        Action::Back,
        "back: close help, cancel prompt, clear filter, previous tab, pods list",
    ),
    b(
        Global,
        &[code(KeyCode::Tab)],
        "tab",
        Action::FocusNext,
        "switch pane (pods ↔ detail)",
    ),
    b(
        Global,
        &[code(KeyCode::BackTab)],
        "shift-tab",
        Action::FocusPrev,
        "switch pane back",
    ),
    b(
        Global,
        &[k('1')],
        "1",
        Action::SelectTab(Tab::Pipeline),
        "Pipeline: the pod's walk through every extension point",
    ),
    b(
        Global,
        &[k('2')],
        "2",
        Action::SelectTab(Tab::Filters),
        "Filters: nodes × filter plugins, summary by reason",
    ),
    b(
        Global,
        &[k('3')],
        "3",
        Action::SelectTab(Tab::Scores),
        "Scores: per-plugin scores of feasible nodes",
    ),
    b(
        Global,
        &[k('4')],
        "4",
        Action::SelectTab(Tab::Node),
        "Node: resources, taints, labels, pods, verdicts",
    ),
    b(
        Global,
        &[k('5')],
        "5",
        Action::SelectTab(Tab::Compare),
        "Compare: two nodes side by side",
    ),
    b(
        Global,
        &[k('6')],
        "6",
        Action::SelectTab(Tab::Preemption),
        "Preemption: PostFilter, nominated node, victims",
    ),
    b(
        Global,
        &[k('7')],
        "7",
        Action::SelectTab(Tab::Waiting),
        "Waiting: pods held at Permit, with countdowns",
    ),
    b(
        Global,
        &[k('8')],
        "8",
        Action::SelectTab(Tab::Profile),
        "Profile: plugins per extension point, weights, args",
    ),
    b(
        Global,
        &[k('9')],
        "9",
        Action::SelectTab(Tab::History),
        "History (--simulate): the pod's attempts; selecting one shows its trace",
    ),
    b(
        Global,
        &[k('0')],
        "0",
        Action::SelectTab(Tab::Needs),
        "Needs: the pod's own requests, selectors, affinity, tolerations, spread, volumes",
    ),
    b(Global, &[k(']')], "]", Action::NextTab, "next tab"),
    b(Global, &[k('[')], "[", Action::PrevTab, "previous tab"),
    b(
        Global,
        &[k('/')],
        "/",
        Action::StartFilter,
        "filter the focused list (pods, nodes, scores)",
    ),
    b(
        Global,
        &[k(':')],
        ":",
        Action::StartCommand,
        "command: ns NAME (ns alone: all), pod NS/NAME, node NAME, theme NAME, profile NAME, what-if EDIT, all, q",
    ),
    b(
        Global,
        &[k('j'), code(KeyCode::Down)],
        "j ↓",
        Action::Down,
        "down",
    ),
    b(
        Global,
        &[k('k'), code(KeyCode::Up)],
        "k ↑",
        Action::Up,
        "up",
    ),
    b(
        Global,
        &[k('g'), code(KeyCode::Home)],
        "g home",
        Action::Top,
        "first row",
    ),
    b(
        Global,
        &[k('G'), code(KeyCode::End)],
        "G end",
        Action::Bottom,
        "last row",
    ),
    b(
        Global,
        &[code(KeyCode::PageDown), ctrl('d'), ctrl('f')],
        "pgdn ctrl-d",
        Action::PageDown,
        "page down",
    ),
    b(
        Global,
        &[code(KeyCode::PageUp), ctrl('u'), ctrl('b')],
        "pgup ctrl-u",
        Action::PageUp,
        "page up",
    ),
    b(
        Global,
        &[k('h'), code(KeyCode::Left)],
        "h ←",
        Action::Left,
        "previous column (pods list: scroll long names back)",
    ),
    b(
        Global,
        &[k('l'), code(KeyCode::Right)],
        "l →",
        Action::Right,
        "next column (pods list: scroll names that do not fit sideways)",
    ),
    b(
        Global,
        &[code(KeyCode::Enter)],
        "enter",
        Action::Enter,
        "open: pod → Pipeline, stage → its tab, node → Node, reason group → its nodes",
    ),
    b(
        Global,
        &[k('p')],
        "p",
        Action::CycleProfile,
        "replay with the next profile (cycles back to the pod's own)",
    ),
    b(
        Global,
        &[k('T')],
        "T",
        Action::CycleTheme,
        "next built-in theme",
    ),
    b(
        Global,
        &[k(' ')],
        "space",
        Action::SimPlayPause,
        "simulation: play (one cycle per second, time follows the clock) / pause",
    ),
    b(
        Global,
        &[k('n')],
        "n",
        Action::SimStep,
        "simulation: one scheduling cycle (nothing to pop: jump to the next deadline)",
    ),
    b(
        Global,
        &[k('N')],
        "N",
        Action::SimRunIdle,
        "simulation: every cycle possible now (until the queue is idle)",
    ),
    b(
        Global,
        &[k('C')],
        "C",
        Action::ToggleConnection,
        "live: each watched kind's state (synced, retrying, not readable)",
    ),
    b(
        Global,
        &[k('R')],
        "R",
        Action::RetryConnection,
        "live: list every failed or forbidden kind again now (no backoff wait)",
    ),
    b(
        Global,
        &[k('w')],
        "w",
        Action::StartWhatIf,
        "what-if: type an edit (pod.cpu=2, node.uncordon=NODE, node.add=1:like=NODE, ...); the view replays on the edited model, nothing is written",
    ),
    b(
        Global,
        &[k('u')],
        "u",
        Action::UndoEdit,
        "what-if: undo the last edit",
    ),
    b(
        Global,
        &[k('U')],
        "U",
        Action::ClearEdits,
        "what-if: undo every edit (back to the real model)",
    ),
    b(
        Global,
        &[k('S')],
        "S",
        Action::ToggleRemedies,
        "Remedies: the edits that would make the pod schedulable (or land it on the Node tab's node), each verified by a replay; enter applies one",
    ),
    b(
        Pods,
        &[k('A')],
        "A",
        Action::ToggleAllPods,
        "all pods ↔ pending pods only",
    ),
    b(
        Pods,
        &[k('v')],
        "v",
        Action::ToggleView,
        "queue order ↔ grouped by verdict reason (each pending pod's replay, newest first)",
    ),
    b(
        Scope::Tab(Tab::Filters),
        &[k('v')],
        "v",
        Action::ToggleView,
        "matrix ↔ summary grouped by rejection reason",
    ),
    b(
        Scope::Tab(Tab::Filters),
        &[k('s')],
        "s",
        Action::Sort,
        "sort by the current column (again: reverse)",
    ),
    b(
        Scope::Tab(Tab::Filters),
        &[k('c')],
        "c",
        Action::MarkCompare,
        "mark the node for Compare (a second mark opens it)",
    ),
    b(
        Scope::Tab(Tab::Scores),
        &[k('s')],
        "s",
        Action::Sort,
        "sort by the current column (again: reverse)",
    ),
    b(
        Scope::Tab(Tab::Scores),
        &[k('c')],
        "c",
        Action::MarkCompare,
        "mark the node for Compare (a second mark opens it)",
    ),
    b(
        Scope::Tab(Tab::Node),
        &[k('c')],
        "c",
        Action::MarkCompare,
        "mark this node for Compare",
    ),
    b(
        Scope::Tab(Tab::Node),
        &[k('x')],
        "x",
        Action::NodeCordon,
        "what-if: cordon this node (uncordon a cordoned one)",
    ),
    b(
        Scope::Tab(Tab::Node),
        &[k('t')],
        "t",
        Action::NodeUntaint,
        "what-if: remove a taint (the prompt starts with the first)",
    ),
    b(
        Scope::Tab(Tab::Node),
        &[k('+')],
        "+",
        Action::NodeClone,
        "what-if: add a node like this one",
    ),
    b(
        Scope::Tab(Tab::Needs),
        &[code(KeyCode::Enter)],
        "enter",
        Action::Enter,
        "what-if: toggle the selected need off (a request or priority: type the new value)",
    ),
    b(
        Scope::Tab(Tab::Compare),
        &[k('x')],
        "x",
        Action::SwapCompare,
        "swap the two nodes",
    ),
    b(
        Scope::Tab(Tab::Waiting),
        &[k('a')],
        "a",
        Action::Allow,
        "allow the selected pod at every plugin it waits on",
    ),
    b(
        Scope::Tab(Tab::Waiting),
        &[k('r')],
        "r",
        Action::Reject,
        "reject the selected pod (asks for a reason)",
    ),
];

/// Lines of the help overlay that no key table row covers.
pub const MOUSE_HELP: &str =
    "click selects a row or tab (click a selected row again to open it); wheel scrolls";

fn normalise(e: &KeyEvent) -> Key {
    // Shift is already in the character ('A'); BackTab is its own code.
    let mods = e.modifiers & (KeyModifiers::CONTROL | KeyModifiers::ALT);
    Key(e.code, mods)
}

/// The action of a key in normal mode: the focused tab's bindings first, then the
/// pods list's, then global ones.
pub fn map_key(focus: Focus, tab: Tab, e: &KeyEvent) -> Option<Action> {
    let key = normalise(e);
    let scopes: [Option<Scope>; 2] = match focus {
        Focus::Pods => [Some(Scope::Pods), None],
        Focus::Detail => [Some(Scope::Tab(tab)), None],
    };
    for scope in scopes.into_iter().flatten().chain([Scope::Global]) {
        if let Some(bd) = BINDINGS
            .iter()
            .find(|bd| bd.scope == scope && bd.keys.contains(&key))
        {
            return Some(bd.action.clone());
        }
    }
    None
}

/// Keys while typing into a prompt.
pub fn map_input_key(e: &KeyEvent) -> Option<Action> {
    let key = normalise(e);
    match key {
        Key(KeyCode::Char('c'), KeyModifiers::CONTROL) => Some(Action::Quit),
        Key(KeyCode::Char('u'), KeyModifiers::CONTROL) => Some(Action::InputClear),
        Key(KeyCode::Esc, _) => Some(Action::InputCancel),
        Key(KeyCode::Enter, _) => Some(Action::InputSubmit),
        Key(KeyCode::Backspace, _) => Some(Action::InputBackspace),
        Key(KeyCode::Char(c), m) if !m.contains(KeyModifiers::CONTROL) => {
            Some(Action::InputChar(c))
        }
        _ => None,
    }
}

/// Keys while the help overlay is open: it scrolls; `?`/`esc` close it; `q` quits.
pub fn map_help_key(e: &KeyEvent) -> Option<Action> {
    let key = normalise(e);
    match key {
        Key(KeyCode::Char('?') | KeyCode::Esc, _) => Some(Action::ToggleHelp),
        _ => match map_key(Focus::Pods, Tab::Pipeline, e)? {
            a @ (Action::Quit
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom) => Some(a),
            _ => None,
        },
    }
}

/// Keys while the connection view is open: it scrolls; `C`/`esc` close it; `R`
/// retries; `q` quits.
pub fn map_connection_key(e: &KeyEvent) -> Option<Action> {
    let key = normalise(e);
    match key {
        Key(KeyCode::Char('C') | KeyCode::Esc, _) => Some(Action::ToggleConnection),
        _ => match map_key(Focus::Pods, Tab::Pipeline, e)? {
            a @ (Action::Quit
            | Action::ToggleHelp
            | Action::RetryConnection
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom) => Some(a),
            _ => None,
        },
    }
}

/// Keys while the Remedies view is open: it moves and applies; `S`/`esc` close it;
/// `q` quits.
pub fn map_remedies_key(e: &KeyEvent) -> Option<Action> {
    let key = normalise(e);
    match key {
        Key(KeyCode::Char('S') | KeyCode::Esc, _) => Some(Action::ToggleRemedies),
        _ => match map_key(Focus::Pods, Tab::Pipeline, e)? {
            a @ (Action::Quit
            | Action::ToggleHelp
            | Action::Enter
            | Action::UndoEdit
            | Action::Up
            | Action::Down
            | Action::PageUp
            | Action::PageDown
            | Action::Top
            | Action::Bottom) => Some(a),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(c: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(c, m)
    }

    #[test]
    fn scoped_keys_win_over_global_ones() {
        let a = press(KeyCode::Char('a'), KeyModifiers::NONE);
        assert!(matches!(
            map_key(Focus::Detail, Tab::Waiting, &a),
            Some(Action::Allow)
        ));
        assert!(map_key(Focus::Pods, Tab::Waiting, &a).is_none());
        let big_a = press(KeyCode::Char('A'), KeyModifiers::SHIFT);
        assert!(matches!(
            map_key(Focus::Pods, Tab::Filters, &big_a),
            Some(Action::ToggleAllPods)
        ));
        let cc = press(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(matches!(
            map_key(Focus::Detail, Tab::Filters, &cc),
            Some(Action::Quit)
        ));
        let c = press(KeyCode::Char('c'), KeyModifiers::NONE);
        assert!(matches!(
            map_key(Focus::Detail, Tab::Filters, &c),
            Some(Action::MarkCompare)
        ));
    }

    #[test]
    fn no_key_is_bound_twice_in_one_scope() {
        for (i, x) in BINDINGS.iter().enumerate() {
            for y in &BINDINGS[i + 1..] {
                if x.scope == y.scope {
                    for key in x.keys {
                        assert!(!y.keys.contains(key), "{key:?} twice in {:?}", x.scope);
                    }
                }
            }
        }
    }

    #[test]
    fn what_if_keys() {
        let key = |c: char| press(KeyCode::Char(c), KeyModifiers::NONE);
        for focus in [Focus::Pods, Focus::Detail] {
            assert!(matches!(
                map_key(focus, Tab::Pipeline, &key('u')),
                Some(Action::UndoEdit)
            ));
            assert!(matches!(
                map_key(focus, Tab::Scores, &key('U')),
                Some(Action::ClearEdits)
            ));
            assert!(matches!(
                map_key(focus, Tab::Needs, &key('w')),
                Some(Action::StartWhatIf)
            ));
            assert!(matches!(
                map_key(focus, Tab::Filters, &key('S')),
                Some(Action::ToggleRemedies)
            ));
        }
        // The Node tab's own: only there.
        for (c, want) in [
            ('x', Action::NodeCordon),
            ('t', Action::NodeUntaint),
            ('+', Action::NodeClone),
        ] {
            let got = map_key(Focus::Detail, Tab::Node, &key(c));
            assert_eq!(format!("{got:?}"), format!("{:?}", Some(want)));
        }
        assert!(map_key(Focus::Pods, Tab::Node, &key('t')).is_none());
        assert!(matches!(
            map_key(Focus::Detail, Tab::Compare, &key('x')),
            Some(Action::SwapCompare)
        ));
        // The Remedies view: moves, enter applies, S or esc closes, u still undoes.
        let esc = press(KeyCode::Esc, KeyModifiers::NONE);
        assert!(matches!(
            map_remedies_key(&esc),
            Some(Action::ToggleRemedies)
        ));
        assert!(matches!(
            map_remedies_key(&key('S')),
            Some(Action::ToggleRemedies)
        ));
        assert!(matches!(map_remedies_key(&key('j')), Some(Action::Down)));
        assert!(matches!(
            map_remedies_key(&press(KeyCode::Enter, KeyModifiers::NONE)),
            Some(Action::Enter)
        ));
        assert!(matches!(
            map_remedies_key(&key('u')),
            Some(Action::UndoEdit)
        ));
        assert!(
            map_remedies_key(&key('2')).is_none(),
            "no tab switch under it"
        );
    }

    #[test]
    fn prompt_keys() {
        assert!(matches!(
            map_input_key(&press(KeyCode::Char('q'), KeyModifiers::NONE)),
            Some(Action::InputChar('q'))
        ));
        assert!(matches!(
            map_input_key(&press(KeyCode::Esc, KeyModifiers::NONE)),
            Some(Action::InputCancel)
        ));
    }
}

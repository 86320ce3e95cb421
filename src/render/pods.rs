//! `schedscope pods` as text: a [`PodsList`] in columns as wide as their longest entry
//! (display width, so long or wide names keep the table aligned), VERDICT only when
//! verdicts were computed; or grouped by the verdicts' main reason.

use std::fmt::Write;

use super::escape::terminal_safe;
use crate::report::format::{CELL_MAX, clip, pad, width};
use crate::report::pods::group_header;
use crate::report::recorded::DIFFERS_MARK;
use crate::report::{ListEntry, PodVerdict, PodsList};

/// The listing, one row per pod in list order, or (`grouped`, with verdicts) one
/// section per main reason, the most pods first.
pub fn render(list: &PodsList, verdicts: Option<&[PodVerdict]>, grouped: bool) -> String {
    render_marked(list, verdicts, grouped, &[])
}

/// [`render`], each verdict whose `differs[i]` is set marked as differing from the
/// real scheduler's recorded word ([`DIFFERS_MARK`]).
pub fn render_marked(
    list: &PodsList,
    verdicts: Option<&[PodVerdict]>,
    grouped: bool,
    differs: &[bool],
) -> String {
    let table = PodsTable::new(list, verdicts, differs);
    let mut out = String::new();
    match verdicts {
        Some(verdicts) if grouped => {
            table.header(&mut out, "  ");
            for entry in list.grouped(|i, _| verdicts.get(i)) {
                match entry {
                    ListEntry::Group { reason, pods } => {
                        let _ = writeln!(out, "\n{}", cell(&group_header(pods, &reason)));
                    }
                    ListEntry::Pod(i) => table.row(&mut out, "  ", i),
                }
            }
        }
        _ => {
            table.header(&mut out, "");
            for i in 0..list.rows.len() {
                table.row(&mut out, "", i);
            }
        }
    }
    out
}

/// The columns' texts (made safe for a terminal) and widths.
struct PodsTable<'a> {
    list: &'a PodsList,
    verdicts: Option<&'a [PodVerdict]>,
    differs: &'a [bool],
    pod_w: usize,
    sched_w: usize,
    state_w: usize,
}

impl<'a> PodsTable<'a> {
    fn new(list: &'a PodsList, verdicts: Option<&'a [PodVerdict]>, differs: &'a [bool]) -> Self {
        let widest = |f: &dyn Fn(&crate::report::PodRow) -> String, least: usize| {
            list.rows
                .iter()
                .map(|r| width(&cell(&f(r))))
                .max()
                .unwrap_or(0)
                .max(least)
        };
        PodsTable {
            list,
            verdicts,
            differs,
            pod_w: widest(&|r| r.key(), 48),
            sched_w: widest(&|r| r.pod.scheduler_name.clone(), 20),
            state_w: widest(&|r| r.state_label(), 5),
        }
    }

    fn header(&self, out: &mut String, indent: &str) {
        let (pod, sched) = (pad("POD", self.pod_w), pad("SCHEDULER", self.sched_w));
        let _ = match self.verdicts {
            Some(_) => writeln!(
                out,
                "{indent}{pod} {:>11}  {sched} {}  VERDICT",
                "PRIORITY",
                pad("STATE", self.state_w)
            ),
            None => writeln!(out, "{indent}{pod} {:>11}  {sched} STATE", "PRIORITY"),
        };
    }

    fn row(&self, out: &mut String, indent: &str, i: usize) {
        let r = &self.list.rows[i];
        let key = pad(&cell(&r.key()), self.pod_w);
        let sched = pad(&cell(&r.pod.scheduler_name), self.sched_w);
        let state = cell(&r.state_label());
        let priority = r.pod.priority;
        let _ = match self.verdicts.and_then(|v| v.get(i)) {
            Some(v) => writeln!(
                out,
                "{indent}{key} {priority:>11}  {sched} {}  {}{}",
                pad(&state, self.state_w),
                cell(&v.label()),
                if self.differs.get(i).copied().unwrap_or(false) {
                    format!("  ({DIFFERS_MARK})")
                } else {
                    String::new()
                }
            ),
            None => writeln!(out, "{indent}{key} {priority:>11}  {sched} {state}"),
        };
    }
}

/// One column's cell as printed: escaped for the terminal, then capped.
fn cell(s: &str) -> String {
    clip(&terminal_safe(s), CELL_MAX).into_owned()
}

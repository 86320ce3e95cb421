//! The app's what-if actions: edits typed (`w`, `:what-if`), made from the Needs and
//! Node tabs or picked in the Remedies view, undone (`u`, `U`), and the Remedies
//! search asked of the worker. Every change makes a new model version, so every
//! replay shown (trace, tabs, pods-list verdicts) is made again on the edited model.

use super::app::App;
use super::components::{Prompt, PromptKind, RemediesPane};
use super::remedies::{Found, RemediesJob, RemediesKey};
use super::whatif::WhatIf;
use crate::engine::trace::Outcome;
use crate::whatif::Edit;

impl App {
    /// `--what-if` edits, active from the first frame (before any replay is asked).
    pub fn start_with_edits(&mut self, edits: Vec<Edit>) {
        if edits.is_empty() {
            return;
        }
        self.shared.whatif = WhatIf::floating(edits);
        let errors = self.shared.rederive();
        self.rebuild_pods();
        // A live source's first model is empty: its edits apply once it is there.
        if !errors.is_empty() && !self.connecting() {
            let text = format!("not applied to this model: {}", errors.join("; "));
            self.flash(&text, true);
        }
    }

    /// Apply edits in their `--what-if` spelling, all or none; the status line says
    /// what happened. Whether they were applied.
    pub fn apply_edits(&mut self, texts: &[String]) -> bool {
        let before = self.shared.whatif.edits().len();
        let mut error = None;
        for text in texts {
            let edit = match text.parse::<Edit>() {
                Ok(e) => e,
                Err(e) => {
                    error = Some(e.to_string());
                    break;
                }
            };
            let sh = &mut self.shared;
            match sh
                .whatif
                .push(edit, sh.selected_pod.as_deref(), &sh.cluster)
            {
                Ok(Some(cluster)) => sh.cluster = cluster,
                Ok(None) => {}
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = error {
            // All or none: the ones this call added come off again.
            if self.shared.whatif.edits().len() > before {
                while self.shared.whatif.edits().len() > before {
                    self.shared.whatif.undo();
                }
                self.shared.rederive();
                self.rebuild_pods();
            }
            self.flash(&e, true);
            return false;
        }
        self.shared.new_version();
        self.rebuild_pods();
        let text = format!("what-if {} (nothing is written; u undoes)", texts.join(" "));
        self.flash(&text, false);
        true
    }

    /// `u`.
    pub fn undo_edit(&mut self) {
        let Some(a) = self.shared.whatif.undo() else {
            return self.flash("no what-if edit to undo", true);
        };
        self.shared.rederive();
        self.rebuild_pods();
        let left = self.shared.whatif.edits().len();
        let text = match left {
            0 => format!("undid {}: the real model again", a.label()),
            n => format!("undid {} ({n} edit{} left)", a.label(), plural(n)),
        };
        self.flash(&text, false);
    }

    /// `U`.
    pub fn clear_edits(&mut self) {
        let n = self.shared.whatif.clear();
        if n == 0 {
            return self.flash("no what-if edit to undo", true);
        }
        self.shared.rederive();
        self.rebuild_pods();
        let text = format!("undid {n} edit{}: the real model again", plural(n));
        self.flash(&text, false);
    }

    /// The what-if prompt, starting with `text`.
    pub fn prompt_edit(&mut self, text: String) {
        self.shared.prompt = Some(Prompt::new(PromptKind::WhatIf, text));
    }

    /// `S`: open the Remedies view for the explained pod (the search goes to the
    /// worker), or close it.
    pub fn toggle_remedies(&mut self) {
        if self.panes.remedies.take().is_some() {
            return;
        }
        let sh = &self.shared;
        let Some(pod) = sh.selected_pod.clone() else {
            return self.flash("no pod selected", true);
        };
        let Some(cur) = sh.traces.current.clone().filter(|c| c.key.pod == pod) else {
            return self.flash(
                "the pod's replay is not there yet: S again in a moment",
                true,
            );
        };
        // A schedulable pod: remedies that land it on the Node tab's node instead.
        let target = match &cur.trace.outcome {
            Outcome::Scheduled { node } => match self.panes.node.node.clone() {
                Some(n) if &n != node => Some(n),
                _ => {
                    let text = format!(
                        "{pod} is schedulable (on {node}); pick another node in the Node tab (4) to search what lands it there"
                    );
                    return self.flash(&text, false);
                }
            },
            _ => None,
        };
        let key = RemediesKey {
            pod: pod.clone(),
            generation: sh.generation,
            target,
        };
        self.shared.remedies_job = Some(RemediesJob {
            key: key.clone(),
            cluster: sh.cluster.clone(),
            pod_edits: sh.whatif.for_pod(&pod).edits,
            profiles: sh.profiles.clone(),
            now: sh.now(),
        });
        self.panes.remedies = Some(RemediesPane::new(key));
    }

    /// The Remedies search for the worker.
    pub fn take_remedies_job(&mut self) -> Option<RemediesJob> {
        self.shared.remedies_job.take()
    }

    /// A Remedies search's answer: shown if the view still waits for it.
    pub fn remedies_ready(&mut self, found: Found) {
        if let Some(p) = &mut self.panes.remedies
            && p.key == found.key
        {
            p.found = Some(found.remedies);
            self.dirty = true;
        }
    }

    /// Run the pending Remedies search inline (tests).
    pub fn take_remedies_sync(&mut self) {
        if let Some(job) = self.take_remedies_job() {
            self.remedies_ready(job.run());
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

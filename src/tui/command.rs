//! The `:` prompt's commands, parsed; the app carries them out.

use super::action::Tab;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PromptCommand {
    Quit,
    Help,
    /// `ns NAME`; `None` (`ns`, `ns all`): every namespace.
    Namespace(Option<String>),
    /// `pod NAME` (in the namespace shown, else `default`) or `pod NS/NAME`.
    Pod(String),
    Node(String),
    Theme(String),
    /// `profile NAME`; `None`: each pod's own.
    Profile(Option<String>),
    All,
    Pending,
    Tab(Tab),
    /// `what-if EDIT...` (`wi`): what-if edits to apply.
    WhatIf(Vec<String>),
}

/// `None` for an empty command; an error says what the commands are.
pub fn parse(cmd: &str, tabs: &[Tab]) -> Option<Result<PromptCommand, String>> {
    let mut parts = cmd.split_whitespace();
    let verb = parts.next()?;
    let arg = parts.next().map(str::to_string);
    Some(Ok(match (verb, arg) {
        ("q" | "q!" | "quit", _) => PromptCommand::Quit,
        ("help", _) => PromptCommand::Help,
        ("ns" | "namespace", Some(ns)) if ns != "all" && ns != "*" => {
            PromptCommand::Namespace(Some(ns))
        }
        ("ns" | "namespace", _) => PromptCommand::Namespace(None),
        ("pod" | "po", Some(p)) => PromptCommand::Pod(p),
        ("node" | "no", Some(n)) => PromptCommand::Node(n),
        ("theme", Some(t)) => PromptCommand::Theme(t),
        ("profile", p) => PromptCommand::Profile(p),
        ("what-if" | "whatif" | "wi", Some(e)) => {
            let mut edits = vec![e];
            edits.extend(parts.map(str::to_string));
            PromptCommand::WhatIf(edits)
        }
        ("what-if" | "whatif" | "wi", None) => {
            return Some(Err(format!(
                "what-if needs an edit: one of {}",
                crate::whatif::GRAMMAR.join(", ")
            )));
        }
        ("all", _) => PromptCommand::All,
        ("pending", _) => PromptCommand::Pending,
        (v, _) => match tabs.iter().find(|t| t.title().eq_ignore_ascii_case(v)) {
            Some(t) => PromptCommand::Tab(*t),
            None => {
                return Some(Err(format!(
                    "unknown command {cmd:?}; try ns NAME, pod NS/NAME, node NAME, theme NAME, profile NAME, what-if EDIT, all, pending, q"
                )));
            }
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse() {
        let tabs = Tab::INSPECT;
        assert_eq!(parse("  ", &tabs), None);
        assert_eq!(
            parse("ns all", &tabs),
            Some(Ok(PromptCommand::Namespace(None)))
        );
        assert_eq!(
            parse("ns team-a", &tabs),
            Some(Ok(PromptCommand::Namespace(Some("team-a".into()))))
        );
        assert_eq!(
            parse("profile", &tabs),
            Some(Ok(PromptCommand::Profile(None)))
        );
        assert_eq!(
            parse("scores", &tabs),
            Some(Ok(PromptCommand::Tab(Tab::Scores)))
        );
        assert_eq!(parse("history", &tabs).map(|r| r.is_err()), Some(true));
        assert_eq!(
            parse("node", &tabs),
            Some(Ok(PromptCommand::Tab(Tab::Node)))
        );
        assert_eq!(parse("pod", &tabs).map(|r| r.is_err()), Some(true));
        assert_eq!(
            parse("what-if node.cordon=n1 pod.cpu=1", &tabs),
            Some(Ok(PromptCommand::WhatIf(vec![
                "node.cordon=n1".into(),
                "pod.cpu=1".into()
            ])))
        );
        let e = parse("what-if", &tabs)
            .and_then(Result::err)
            .expect("an error");
        assert!(e.contains("node.uncordon=NODE"), "{e}");
    }
}

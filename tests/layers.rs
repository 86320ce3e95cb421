//! The layers point one way: `text` and `model` at the bottom, `config` above them,
//! `engine` above those, `report` (what a person reads, UI-free) above the engine;
//! nothing below reaches up. Checked on the source text, so a
//! new upward `use` (or a `crate::...` path in code) fails here.

use std::path::{Path, PathBuf};

/// Each lower layer and the top-level modules it may name.
const LAYERS: &[(&str, &[&str])] = &[
    ("text", &["text"]),
    ("model", &["model", "text"]),
    ("config", &["config", "text"]),
    ("engine", &["engine", "model", "config", "text"]),
    ("report", &["report", "engine", "model", "config", "text"]),
];

fn rust_files(root: &Path) -> Vec<PathBuf> {
    if root.is_file() {
        return vec![root.to_path_buf()];
    }
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Top-level modules named as `crate::NAME` in code (comments skipped).
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((i + 1, name));
            }
            rest = after;
        }
    }
    out
}

#[test]
fn lower_layers_never_import_higher_ones() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    for (layer, allowed) in LAYERS {
        let root = if src.join(layer).is_dir() {
            src.join(layer)
        } else {
            src.join(format!("{layer}.rs"))
        };
        let files = rust_files(&root);
        assert!(!files.is_empty(), "no source for layer {layer}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for (line, name) in crate_paths(&text) {
                if !allowed.contains(&name.as_str()) {
                    violations.push(format!(
                        "{}:{line}: {layer} names crate::{name}",
                        f.strip_prefix(&src).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn the_check_sees_an_upward_path() {
    let found = crate_paths("use crate::tui::App; // crate::render\nlet x = crate::model::Pod;");
    assert_eq!(
        found,
        vec![(1, "tui".to_string()), (2, "model".to_string())]
    );
}

/// The inspector's panes get a read-only context and return effects; none names the
/// `App` that routes to them, so the TUI files have no import cycle. Test modules may
/// build an `App` to draw one.
#[test]
fn panes_never_name_the_app() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tui/components");
    let mut violations = Vec::new();
    for f in rust_files(&dir) {
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in code.lines().enumerate() {
            let line = line.split("//").next().unwrap_or("");
            if line.contains("app::") || line.contains("tui::App") {
                violations.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

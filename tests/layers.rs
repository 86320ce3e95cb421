//! The layers point one way. Between crates the compiler enforces it: `schedscope-engine`
//! (text, model, config, engine) knows nothing above it, `schedscope-report` only the
//! engine, and the application crate sits on both. What crates cannot express is
//! checked here, on parsed paths (syn), not on text:
//! - the engine and report crates depend on no terminal, network or async crate,
//!   directly or through another crate (read from `cargo tree`);
//! - their code names no file, network, process, environment or clock API of `std`;
//! - inside the application crate, each module names only the modules below it;
//! - the inspector's panes never name the `App` that routes to them.
//!
//! Every path is resolved against the module it appears in (`crate::`, `super::`,
//! `self::`, nested `use` groups, inline modules), so `use crate::{tui::X}` or
//! `super::super::App` are seen like any other path.

mod support {
    pub mod sources;
}

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use support::sources::rust_files;
use syn::visit::Visit;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The module path of a file below a crate's `src/`: `tui/components/pods.rs` is
/// `[tui, components, pods]`, `tui/mod.rs` is `[tui]`, `lib.rs` is `[]`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// One path named in code, made absolute within its crate where it starts with
/// `crate`, `super` or `self` (`absolute: true`), else as written (an outside crate,
/// `std`, or a name in scope).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Named {
    line: usize,
    absolute: bool,
    segments: Vec<String>,
    in_test: bool,
}

struct Collector {
    module: Vec<String>,
    test_depth: usize,
    found: Vec<Named>,
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

impl Collector {
    fn push(&mut self, line: usize, segments: Vec<String>) {
        let Some(first) = segments.first() else {
            return;
        };
        let (absolute, segments) = match first.as_str() {
            "crate" => (true, segments[1..].to_vec()),
            "self" => {
                let mut s = self.module.clone();
                s.extend_from_slice(&segments[1..]);
                (true, s)
            }
            "super" => {
                let mut s = self.module.clone();
                let mut rest = &segments[..];
                while rest.first().is_some_and(|x| x == "super") {
                    s.pop();
                    rest = &rest[1..];
                }
                s.extend_from_slice(rest);
                (true, s)
            }
            _ => (false, segments),
        };
        self.found.push(Named {
            line,
            absolute,
            segments,
            in_test: self.test_depth > 0,
        });
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree, line: usize) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree, line);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut s = prefix.clone();
                if n.ident != "self" {
                    s.push(n.ident.to_string());
                }
                self.push(line, s);
            }
            syn::UseTree::Rename(r) => {
                let mut s = prefix.clone();
                if r.ident != "self" {
                    s.push(r.ident.to_string());
                }
                self.push(line, s);
            }
            syn::UseTree::Glob(_) => self.push(line, prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t, line);
                }
            }
        }
    }
}

impl<'ast> Visit<'ast> for Collector {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let line = u.use_token.span.start().line;
        let mut prefix = Vec::new();
        if u.leading_colon.is_some() {
            // `::name` is an outside crate, as written.
            prefix.push(String::new());
        }
        self.use_tree(&mut prefix, &u.tree, line);
        if u.leading_colon.is_some() {
            for n in self.found.iter_mut().rev().take_while(|n| n.line == line) {
                n.segments.retain(|s| !s.is_empty());
            }
        }
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        let segments = p.segments.iter().map(|s| s.ident.to_string()).collect();
        self.push(line, segments);
        syn::visit::visit_path(self, p);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let test = is_cfg_test(&m.attrs);
        self.module.push(m.ident.to_string());
        self.test_depth += usize::from(test);
        syn::visit::visit_item_mod(self, m);
        self.test_depth -= usize::from(test);
        self.module.pop();
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = is_cfg_test(&f.attrs) || f.attrs.iter().any(|a| a.path().is_ident("test"));
        self.test_depth += usize::from(test);
        syn::visit::visit_item_fn(self, f);
        self.test_depth -= usize::from(test);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Macro bodies are tokens; paths inside `format!`-like calls parse as
        // expressions, which is all that can name a module there.
        if let Ok(args) = m.parse_body_with(
            syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated,
        ) {
            for e in &args {
                self.visit_expr(e);
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// Every path named in the crate whose sources are under `src`, with its file.
fn named_paths(src: &Path) -> Vec<(PathBuf, Named)> {
    let mut out = Vec::new();
    for f in rust_files(src) {
        let text = std::fs::read_to_string(&f).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let mut c = Collector {
            module: module_of(src, &f),
            test_depth: 0,
            found: Vec::new(),
        };
        c.visit_file(&file);
        out.extend(c.found.into_iter().map(|n| (f.clone(), n)));
    }
    out
}

fn collect(text: &str, module: &[&str]) -> Vec<Named> {
    let file = syn::parse_file(text).unwrap();
    let mut c = Collector {
        module: module.iter().map(|s| s.to_string()).collect(),
        test_depth: 0,
        found: Vec::new(),
    };
    c.visit_file(&file);
    c.found
}

/// The application crate's top-level modules and those each may name. What is not
/// listed may not be named; the pure layers (engine, model, config, text, whatif,
/// capacity, version, report)
/// are other crates, re-exported, and any module may use them.
const APP_LAYERS: &[(&str, &[&str])] = &[
    ("allocator", &[]),
    ("clock", &[]),
    ("signals", &[]),
    ("testing", &[]),
    ("theme", &[]),
    ("explain", &[]),
    ("source", &["clock"]),
    ("act", &["clock", "source"]),
    ("render", &[]),
    (
        "tui",
        &[
            "act", "clock", "explain", "render", "signals", "source", "testing", "theme",
        ],
    ),
    (
        "cli",
        &[
            "act", "clock", "explain", "render", "signals", "source", "tui", "testing", "theme",
        ],
    ),
];
const PURE: &[&str] = &[
    "capacity", "config", "engine", "model", "text", "version", "whatif", "report",
];

#[test]
fn app_modules_name_only_what_is_below_them() {
    let src = root().join("src");
    let mut violations = BTreeSet::new();
    for (file, n) in named_paths(&src) {
        let module = module_of(&src, &file);
        let Some(top) = module.first() else { continue };
        let Some((_, allowed)) = APP_LAYERS.iter().find(|(m, _)| m == top) else {
            violations.insert(format!(
                "{}: module {top} has no layer rule",
                file.display()
            ));
            continue;
        };
        if !n.absolute {
            continue;
        }
        let Some(target) = n.segments.first() else {
            continue;
        };
        if target == top || PURE.contains(&target.as_str()) || allowed.contains(&target.as_str()) {
            continue;
        }
        violations.insert(format!(
            "{}:{}: {top} names {}",
            file.strip_prefix(&src).unwrap().display(),
            n.line,
            n.segments.join("::")
        ));
    }
    let v: Vec<_> = violations.into_iter().collect();
    assert!(v.is_empty(), "{}", v.join("\n"));
}

/// The `std` APIs that would make the pure crates impure: files, the network,
/// processes, the environment, the wall clock and sleeping.
const IMPURE_STD: &[&[&str]] = &[
    &["std", "fs"],
    &["std", "net"],
    &["std", "process"],
    &["std", "env"],
    &["std", "io", "stdin"],
    &["std", "io", "stdout"],
    &["std", "io", "stderr"],
    &["std", "time", "Instant"],
    &["std", "time", "SystemTime"],
    &["std", "thread", "sleep"],
    &["std", "os"],
];

#[test]
fn pure_crates_touch_no_file_network_or_clock() {
    let mut violations = Vec::new();
    for krate in ["crates/engine/src", "crates/report/src"] {
        let src = root().join(krate);
        for (file, n) in named_paths(&src) {
            // Tests may read fixtures and time themselves.
            if n.in_test || file.components().any(|c| c.as_os_str() == "tests.rs") {
                continue;
            }
            if IMPURE_STD
                .iter()
                .any(|bad| n.segments.len() >= bad.len() && n.segments[..bad.len()] == **bad)
            {
                violations.push(format!(
                    "{}:{}: {}",
                    file.display(),
                    n.line,
                    n.segments.join("::")
                ));
            }
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

/// Crates that would give the pure layers a terminal, a network, an async runtime or
/// a signal handler.
const IMPURE_CRATES: &[&str] = &[
    "ratatui",
    "crossterm",
    "kube",
    "kube-client",
    "tokio",
    "hyper",
    "mio",
    "signal-hook",
    "clap",
    "tempfile",
];

#[test]
fn pure_crates_depend_on_no_terminal_network_or_runtime() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    for krate in ["schedscope-engine", "schedscope-report"] {
        // `cargo tree` resolves for this machine's platform, from the lock file alone.
        let out = std::process::Command::new(&cargo)
            .args(["tree", "-p", krate, "-e", "normal", "--prefix", "none"])
            .args(["--offline", "--locked", "-f", "{p}"])
            .current_dir(root())
            .output()
            .expect("cargo tree runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names: BTreeSet<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .map(str::to_string)
            .collect();
        assert!(
            names.contains(krate) && names.contains("serde"),
            "{names:?}"
        );
        let bad: Vec<_> = IMPURE_CRATES
            .iter()
            .filter(|c| names.contains(**c))
            .collect();
        assert!(bad.is_empty(), "{krate} depends on {bad:?}");
    }
}

/// The inspector's panes get a read-only context and return effects; none names the
/// `App` that routes to them, by any path, so the TUI files have no import cycle.
/// Test modules may build an `App` to draw one.
#[test]
fn panes_never_name_the_app() {
    let src = root().join("src");
    let panes = src.join("tui/components");
    let mut violations = Vec::new();
    for (file, n) in named_paths(&src) {
        if !file.starts_with(&panes) || n.in_test {
            continue;
        }
        let names_app = if n.absolute {
            n.segments
                .starts_with(&["tui".to_string(), "app".to_string()])
                || n.segments == ["tui", "App"]
        } else {
            n.segments.iter().any(|s| s == "App")
        };
        if names_app {
            violations.push(format!(
                "{}:{}: {}",
                file.display(),
                n.line,
                n.segments.join("::")
            ));
        }
    }
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

// The checks above must see what a text scan missed.

#[test]
fn a_nested_use_group_is_resolved() {
    let found = collect("use crate::{tui::X, render::{self, Y}};", &["source"]);
    let paths: Vec<_> = found.iter().map(|n| n.segments.join("::")).collect();
    assert_eq!(paths, ["tui::X", "render", "render::Y"]);
    assert!(found.iter().all(|n| n.absolute));
}

#[test]
fn super_paths_are_resolved_against_the_module() {
    let found = collect(
        "fn f() { let _ = super::super::App::new(); }",
        &["tui", "components", "pods"],
    );
    assert!(
        found
            .iter()
            .any(|n| n.absolute && n.segments == ["tui", "App", "new"]),
        "{found:?}"
    );
}

#[test]
fn a_comment_marker_inside_a_string_hides_nothing() {
    let found = collect(
        "fn f() { let _s = \"//\"; let _ = crate::tui::App::new(); }",
        &["render"],
    );
    assert!(found.iter().any(|n| n.segments == ["tui", "App", "new"]));
}

#[test]
fn inline_test_modules_are_marked() {
    let found = collect(
        "#[cfg(test)] mod tests { use super::super::tui::App; }",
        &["render", "x"],
    );
    let n = found
        .iter()
        .find(|n| n.segments.ends_with(&["App".to_string()]))
        .unwrap();
    assert!(n.in_test);
    // `tests` sits inside `render::x`; two `super`s lead to `render`.
    assert_eq!(n.segments, ["render", "tui", "App"]);
}

#[test]
fn impure_std_paths_are_seen_in_expressions() {
    let found = collect("fn f() { let _ = std::fs::read(\"x\"); }", &["engine"]);
    assert!(found.iter().any(|n| {
        n.segments
            .starts_with(&["std".to_string(), "fs".to_string()])
    }));
}

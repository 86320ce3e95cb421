//! Sizes a reader can hold in mind: no source file over 1,000 lines and no function
//! over 150 lines, outside the plugins (each mirrors one upstream file) and tests.
//! Measured on parsed items (syn), so braces in strings or comments count for nothing.

mod support {
    pub mod sources;
}

use std::path::{Path, PathBuf};

use support::sources::rust_files;
use syn::spanned::Spanned;
use syn::visit::Visit;

const MAX_FILE_LINES: usize = 1_000;
const MAX_FN_LINES: usize = 150;

/// Test code and the plugins are measured by other rules.
fn exempt(path: &Path) -> bool {
    path.components().any(|c| {
        let c = c.as_os_str();
        c == "plugins" || c == "tests.rs" || c == "tests" || c == "consistency_tests.rs"
    })
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg")
                && a.parse_args::<syn::Meta>()
                    .is_ok_and(|m| m.path().is_ident("test")))
    })
}

struct Long {
    in_test: usize,
    found: Vec<(String, usize, usize)>,
}

impl Long {
    fn check(&mut self, name: String, span: proc_macro2::Span) {
        let lines = span.end().line - span.start().line + 1;
        if self.in_test == 0 && lines > MAX_FN_LINES {
            self.found.push((name, span.start().line, lines));
        }
    }
}

impl<'ast> Visit<'ast> for Long {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let t = usize::from(is_test(&m.attrs));
        self.in_test += t;
        syn::visit::visit_item_mod(self, m);
        self.in_test -= t;
    }
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let t = usize::from(is_test(&f.attrs));
        self.in_test += t;
        self.check(f.sig.ident.to_string(), f.span());
        syn::visit::visit_item_fn(self, f);
        self.in_test -= t;
    }
    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        let t = usize::from(is_test(&f.attrs));
        self.in_test += t;
        self.check(f.sig.ident.to_string(), f.span());
        syn::visit::visit_impl_item_fn(self, f);
        self.in_test -= t;
    }
}

fn sources() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    ["src", "crates/engine/src", "crates/report/src"]
        .iter()
        .flat_map(|d| rust_files(&root.join(d)))
        .filter(|p| !exempt(p))
        .collect()
}

#[test]
fn no_source_file_over_a_thousand_lines() {
    let long: Vec<_> = sources()
        .into_iter()
        .filter_map(|p| {
            let n = std::fs::read_to_string(&p).unwrap().lines().count();
            (n > MAX_FILE_LINES).then(|| format!("{}: {n} lines", p.display()))
        })
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn no_function_over_150_lines() {
    let mut long = Vec::new();
    for p in sources() {
        let text = std::fs::read_to_string(&p).unwrap();
        let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let mut v = Long {
            in_test: 0,
            found: Vec::new(),
        };
        v.visit_file(&file);
        long.extend(
            v.found
                .into_iter()
                .map(|(name, line, n)| format!("{}:{line}: fn {name}: {n} lines", p.display())),
        );
    }
    assert!(long.is_empty(), "{}", long.join("\n"));
}

#[test]
fn the_measure_sees_a_long_function_and_skips_tests() {
    let body = "let x = 1;\n".repeat(MAX_FN_LINES);
    let text =
        format!("fn long() {{\n{body}}}\n#[cfg(test)] mod tests {{ fn also_long() {{\n{body}}} }}");
    let mut v = Long {
        in_test: 0,
        found: Vec::new(),
    };
    v.visit_file(&syn::parse_file(&text).unwrap());
    assert_eq!(v.found.len(), 1);
    assert_eq!(v.found[0].0, "long");
}

//! Mutated fidelity snapshots and scheduler configurations through the CLI's entry
//! points: every output format must end in an answer or an error (exit code 0 or 2),
//! never a panic. Debug builds check integer overflow, so arithmetic on hostile
//! numbers is exercised too. Deterministic: a fixed seed and the repository's files.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::Command;

use schedscope::cli::{ExplainArgs, Format, SimFormat, SimulateArgs, SourceArgs};

/// A tiny xorshift generator, so a failure reproduces from its round number.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

struct Scenario {
    name: String,
    snapshot: String,
    config: Option<String>,
    pod: String,
}

fn scenarios() -> Vec<Scenario> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("snapshot.yaml").is_file())
        .collect();
    dirs.sort();
    dirs.iter()
        .map(|d| Scenario {
            name: d.file_name().unwrap().to_string_lossy().into_owned(),
            snapshot: std::fs::read_to_string(d.join("snapshot.yaml")).unwrap(),
            config: std::fs::read_to_string(d.join("config.yaml")).ok(),
            pod: std::fs::read_to_string(d.join("pod.txt"))
                .unwrap()
                .trim()
                .to_string(),
        })
        .collect()
}

/// Values that have broken loaders and arithmetic: signs, extremes, floats written
/// out, overflow in milli or nano units, empty and control characters, other types.
const VALUES: &[&str] = &[
    "-1",
    "-2",
    "0",
    "1e30",
    "-1e30",
    "\"-1\"",
    "\"1e30\"",
    "9223372036854775807",
    "-9223372036854775808",
    "99999999999999999999",
    "2147483648",
    "-2147483649",
    "\"9999999999999Ei\"",
    "\"-100Gi\"",
    "\"0.000000001m\"",
    "1.5",
    "\"\"",
    "\"\\u0000\\u001b[31m\\r\"",
    "\"\\t\"",
    // Spoofing: a line feed, bidi override and isolate, zero-width space and joiner,
    // a byte-order mark, C1 controls (CSI, NEL).
    "\"a\\nSPOOF\\u202e\\u2066\\u200b\\u200d\\ufeff\\u009b\\u0085\"",
    "[]",
    "{}",
    "null",
    "true",
    "~",
    "\"9999-12-31T23:59:59Z\"",
    "\"0001-01-01T00:00:00Z\"",
    "*nosuchanchor",
];

/// What mutation 9 appends to a name (YAML escapes): a line feed and a would-be
/// line, a bidi override and isolate, zero-width characters, C1 controls.
const SPOOF: &str = r"\nSPOOF\u202e\u2066\u200b\u200d\ufeff\u009b\u0085";

/// Characters no output may print raw (JSON escapes them, human output spells them
/// out): controls but the line feed, bidi controls, zero-width characters.
fn raw_spoofing(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}' | '\u{2060}' | '\u{feff}' | '\u{61c}')
}

/// Output `run` printed that a value spoofed: a raw spoofing character (any output
/// but YAML, whose serializer is not ours), or a line a value added (human output).
fn spoofed(run: &Run, out: &str) -> Option<String> {
    if matches!(run, Run::Explain(Format::Yaml)) {
        return None;
    }
    if let Some(c) = out.chars().find(|&c| raw_spoofing(c)) {
        return Some(format!("raw U+{:04X}", u32::from(c)));
    }
    let human = !matches!(run, Run::Explain(Format::Json));
    if human && out.lines().any(|l| l.starts_with("SPOOF")) {
        return Some("a value added a line".into());
    }
    None
}

const WEIGHTS: &[&str] = &["-1", "0", "101", "2147483647", "-2147483648", "1e30"];

/// One line-level edit of YAML text.
fn mutate_yaml(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        return String::new();
    }
    let at = rng.below(lines.len());
    match rng.below(14) {
        // Replace a value.
        0..=4 => {
            // Prefer a line with a scalar value nearby.
            let with_value = (0..lines.len()).map(|k| (at + k) % lines.len()).find(|&i| {
                lines[i]
                    .split_once(": ")
                    .is_some_and(|(_, v)| !v.trim().is_empty())
            });
            if let Some(i) = with_value {
                let (key, _) = lines[i].split_once(": ").unwrap();
                let key = key.to_string();
                let value = if key.trim_start().trim_start_matches("- ") == "weight" {
                    rng.pick(WEIGHTS)
                } else {
                    rng.pick(VALUES)
                };
                lines[i] = format!("{key}: {value}");
            }
        }
        // Delete a key (and, for a block, leave its children to be re-parented).
        5 => {
            lines.remove(at);
        }
        // Duplicate a line (repeated keys, doubled list items).
        6 => {
            let l = lines[at].clone();
            lines.insert(at, l);
        }
        // Duplicate a document.
        7 => {
            let starts: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == "---").collect();
            if let Some(&s) = starts.get(rng.below(starts.len())) {
                let end = starts
                    .iter()
                    .find(|&&e| e > s)
                    .copied()
                    .unwrap_or(lines.len());
                let doc: Vec<String> = lines[s..end].to_vec();
                lines.extend(doc);
            }
        }
        // Truncate.
        8 => lines.truncate(at),
        // A name (and every reason or message quoting it) with a line feed, bidi
        // and zero-width characters and C1 controls in it.
        9 => {
            if let Some(i) = name_line(&lines, at) {
                let (key, value) = lines[i].split_once(": ").unwrap();
                let value = value.trim().trim_matches('"').replace(['\\', '"'], "");
                lines[i] = format!("{key}: \"{value}{SPOOF}\"");
            }
        }
        // Documents of anchored text under many aliases (each within the old
        // per-document allowance; together past the whole input's).
        10 => {
            let big = "y".repeat(16 << 10);
            for d in 0..1 + rng.below(4) {
                lines.push("---".into());
                lines.push(format!(
                    "kind: ConfigMap\nmetadata: {{name: bomb{d}}}\ndata:\n  a: &a {big}"
                ));
                for k in 0..200 {
                    lines.push(format!("  k{k}: *a"));
                }
            }
        }
        // A very long name (past a formatter's 65,535 width).
        11 => {
            if let Some(i) = name_line(&lines, at) {
                let (key, _) = lines[i].split_once(": ").unwrap();
                lines[i] = format!("{key}: {}", "n".repeat(70_000));
            }
        }
        // A CEL selector whose evaluation would run long or fill memory: the cost
        // bound must stop it (issue 26 item 2).
        12 => {
            let expression = (0..lines.len())
                .map(|k| (at + k) % lines.len())
                .find(|&i| lines[i].trim_start().starts_with("expression: "));
            if let Some(i) = expression {
                let (key, _) = lines[i].split_once(": ").unwrap();
                let key = key.to_string();
                lines[i] = format!("{key}: '{}'", costly_cel(rng));
            }
        }
        // Re-indent a line (structure changes type).
        _ => {
            let l = lines[at].clone();
            lines[at] = if rng.below(2) == 0 {
                format!("  {l}")
            } else {
                l.trim_start().to_string()
            };
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// A selector of each class that ran for seconds or filled memory before CEL had
/// a cost bound (no single quotes: it goes in a single-quoted YAML scalar).
fn costly_cel(rng: &mut Rng) -> String {
    let range = |n: usize| format!("{:?}", (0..n).collect::<Vec<_>>());
    let r = range(100);
    let x = "x".repeat(4000);
    let mut doubling = "s".to_string();
    for _ in 0..22 {
        doubling = format!("[{doubling}].map(s, s + s)[0]");
    }
    match rng.below(5) {
        0 => format!(
            r#""{}".replace("", "{x}").replace("", "{x}") == "y""#,
            "a".repeat(50)
        ),
        1 => format!(r#""{}".split("").join("{x}") != """#, "a".repeat(3000)),
        2 => format!(r#"["abcdefgh"].all(s, size({doubling}) > 0)"#),
        3 => format!(
            r#"{r}.exists(i, {r}.exists(j, "{}".matches("x+c")))"#,
            "ab".repeat(500)
        ),
        _ => format!("size({r}.map(a, {r}.map(b, {r}.map(c, [a, b, c])))) > 0"),
    }
}

/// The first `name:` line at or after `at` (wrapping around).
fn name_line(lines: &[String], at: usize) -> Option<usize> {
    (0..lines.len()).map(|k| (at + k) % lines.len()).find(|&i| {
        lines[i]
            .trim_start()
            .trim_start_matches("- ")
            .starts_with("name: ")
    })
}

fn mutant(rng: &mut Rng, text: &str) -> String {
    let mut t = text.to_string();
    for _ in 0..1 + rng.below(3) {
        t = mutate_yaml(rng, &t);
    }
    // Now and then a raw byte-level cut, mid-token.
    if rng.below(8) == 0 && !t.is_empty() {
        let mut cut = rng.below(t.len());
        while !t.is_char_boundary(cut) {
            cut -= 1;
        }
        t.truncate(cut);
    }
    t
}

/// Scores carry ties and weights; a config mutant edits its weights more often.
fn config_mutant(rng: &mut Rng, text: &str) -> String {
    if rng.below(2) == 0 && text.contains("weight:") {
        let n = text.matches("weight:").count();
        let which = rng.below(n);
        let mut out = String::new();
        for (k, piece) in text.split("weight:").enumerate() {
            if k > 0 {
                out.push_str("weight:");
                if k - 1 == which {
                    let rest = piece.trim_start_matches(|c: char| c == ' ' || c.is_ascii_digit());
                    out.push(' ');
                    let weight: &&str = rng.pick(WEIGHTS);
                    out.push_str(weight);
                    out.push_str(rest);
                    continue;
                }
            }
            out.push_str(piece);
        }
        return out;
    }
    mutant(rng, text)
}

#[derive(Debug)]
enum Run {
    Explain(Format),
    Simulate,
}

const RUNS: [Run; 4] = [
    Run::Explain(Format::Table),
    Run::Explain(Format::Json),
    Run::Explain(Format::Yaml),
    Run::Simulate,
];

/// The in-process equivalent of one command: `Ok(exit code)` or the panic message.
fn run_in_process(
    snapshot: &Path,
    config: Option<&Path>,
    pod: &str,
    run: &Run,
) -> Result<(u8, String), String> {
    let source = SourceArgs {
        snapshot: Some(snapshot.to_path_buf()),
        config: config.map(Path::to_path_buf),
        ..SourceArgs::default()
    };
    let mut out = Vec::new();
    let result = catch_unwind(AssertUnwindSafe(|| match run {
        Run::Explain(format) => schedscope::cli::run_explain(
            &ExplainArgs {
                source: source.clone(),
                pod: pod.to_string(),
                output: *format,
                all_filters: false,
                top: 10,
                timings: false,
                what_if: Default::default(),
                suggest: false,
                target: None,
                suggest_limit: 64,
            },
            &mut out,
        ),
        Run::Simulate => schedscope::cli::run_simulate(
            &SimulateArgs {
                source: source.clone(),
                output: SimFormat::Text,
                traces: false,
                max_attempts: Some(50),
                max_seconds: 600,
                what_if: Default::default(),
            },
            &mut out,
        ),
    }));
    match result {
        Ok(Ok(())) => Ok((0, String::from_utf8_lossy(&out).into_owned())),
        Ok(Err(_)) => Ok((2, String::from_utf8_lossy(&out).into_owned())),
        Err(panic) => Err(panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())),
    }
}

/// Mutants per run; `SCHEDSCOPE_FUZZ_MUTANTS` asks for more (or fewer) locally.
fn mutants() -> usize {
    std::env::var("SCHEDSCOPE_FUZZ_MUTANTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1200)
}
/// Every this-many mutants also run through the real binary.
const BINARY_EVERY: usize = 60;

#[test]
fn mutated_snapshots_and_configs_never_panic() {
    let scenarios = scenarios();
    assert!(
        scenarios.len() >= 60,
        "fidelity scenarios found: {}",
        scenarios.len()
    );
    let dir = std::env::temp_dir().join(format!("schedscope-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let with_config: Vec<&Scenario> = scenarios.iter().filter(|s| s.config.is_some()).collect();
    let mut rng = Rng(0x5EED_CAFE_F00D_D00D);
    let mut exits = [0usize; 3];
    let mut binary_runs = 0;
    let mut spoof_shown = 0;
    let total = mutants();
    for round in 0..total {
        // One round in four mutates a configuration instead of the snapshot.
        let mutate_config = round % 4 == 3;
        let s: &Scenario = if mutate_config {
            with_config[rng.below(with_config.len())]
        } else {
            &scenarios[rng.below(scenarios.len())]
        };
        let (snapshot, config) = if mutate_config {
            let c = config_mutant(&mut rng, s.config.as_deref().unwrap());
            (s.snapshot.clone(), Some(c))
        } else {
            (mutant(&mut rng, &s.snapshot), s.config.clone())
        };
        let snap_path = dir.join("snapshot.yaml");
        std::fs::write(&snap_path, &snapshot).unwrap();
        let cfg_path = config.as_ref().map(|c| {
            let p = dir.join("config.yaml");
            std::fs::write(&p, c).unwrap();
            p
        });
        for run in &RUNS {
            let (code, out) = run_in_process(&snap_path, cfg_path.as_deref(), &s.pod, run)
                .unwrap_or_else(|panic| {
                    let keep = dir.join(format!("panic-{round}.yaml"));
                    std::fs::copy(
                        if mutate_config {
                            cfg_path.as_ref().unwrap()
                        } else {
                            &snap_path
                        },
                        &keep,
                    )
                    .unwrap();
                    panic!(
                        "round {round} ({}, {} mutated, input kept at {}): panicked: {panic}",
                        s.name,
                        if mutate_config { "config" } else { "snapshot" },
                        keep.display()
                    )
                });
            if let Some(what) = spoofed(run, &out) {
                let keep = dir.join(format!("spoofed-{round}.yaml"));
                std::fs::write(&keep, &snapshot).unwrap();
                panic!(
                    "round {round} ({}, {run:?}, input kept at {}): {what}:\n{out}",
                    s.name,
                    keep.display()
                );
            }
            // Escaped by human output and JSON alike.
            spoof_shown += usize::from(out.contains(r"\nSPOOF"));
            exits[usize::from(code)] += 1;
        }
        if round % BINARY_EVERY == 0 {
            binary_runs += 1;
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedscope"));
            cmd.args(["explain", "-s"]).arg(&snap_path).arg(&s.pod);
            if let Some(c) = &cfg_path {
                cmd.arg("--config").arg(c);
            }
            let o = cmd.output().expect("binary runs");
            let code = o.status.code();
            assert!(
                matches!(code, Some(0 | 2)),
                "round {round} ({}): exit {code:?}: {}",
                s.name,
                String::from_utf8_lossy(&o.stderr)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Both outcomes must be common for the run to mean anything.
    assert!(
        exits[0] > total / 4 && exits[2] > total / 4,
        "exit 0: {}, exit 2: {}",
        exits[0],
        exits[2]
    );
    assert!(binary_runs * BINARY_EVERY >= total);
    // The spoofing mutations reach the outputs (or the checks above mean nothing).
    assert!(
        spoof_shown > total / 50,
        "outputs showing a spoofed value: {spoof_shown}"
    );
}

//! Themes: YAML files of semantic style slots (`pass`, `reject`, `selected`, ...) with an
//! optional palette on top, k9s-style. Four ship inside the binary (`themes/*.yaml`);
//! users add their own under `$XDG_CONFIG_HOME/schedscope/themes/NAME.yaml` or pass a path.
//!
//! Colour handling follows the terminal: `NO_COLOR` strips every colour (the views never
//! rely on colour alone: verdicts carry symbols and selection uses reverse video), and
//! truecolour is downgraded to 256 or 16 colours when `COLORTERM` does not announce
//! truecolor.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// The themes shipped in the binary, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.yaml")),
    ("light", include_str!("../themes/light.yaml")),
    ("mono", include_str!("../themes/mono.yaml")),
    ("colorblind", include_str!("../themes/colorblind.yaml")),
];

pub const DEFAULT_THEME: &str = "dark";

macro_rules! slots {
    ($($(#[doc = $doc:literal])* $name:ident),* $(,)?) => {
        /// Resolved styles of every semantic slot.
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub struct Theme {
            /// Theme name, shown in the status bar.
            pub name: String,
            $($(#[doc = $doc])* pub $name: Style,)*
        }

        /// Every slot name a theme file may set under `styles:`.
        pub const SLOT_NAMES: &[&str] = &[$(stringify!($name)),*];

        impl Theme {
            fn blank(name: &str) -> Self {
                Theme { name: name.to_string(), $($name: Style::new(),)* }
            }
            fn slot_mut(&mut self, slot: &str) -> Option<&mut Style> {
                match slot {
                    $(stringify!($name) => Some(&mut self.$name),)*
                    _ => None,
                }
            }
            fn for_each_slot(&mut self, mut f: impl FnMut(&str, &mut Style)) {
                $(f(stringify!($name), &mut self.$name);)*
            }
        }
    };
}

slots! {
    /// Ordinary text (its background is the whole screen's).
    text,
    /// Secondary text: hints, units, "not run".
    dim,
    /// Pane titles.
    title,
    /// Table header rows.
    header,
    border,
    border_focused,
    /// The selected row of the focused pane (should include `reversed`).
    selected,
    /// The selected row of a pane without focus.
    selected_inactive,
    tab,
    tab_active,
    status_bar,
    /// Key names in the help overlay and the status bar.
    key,
    /// The `/` and `:` prompt line.
    prompt,
    /// Filter pass (✓), successful status.
    pass,
    /// Filter reject (✗) by a plugin that is not the first to reject.
    reject,
    /// The first rejecting plugin of a node (the one kube-scheduler reports).
    reject_first,
    /// Skip (∅).
    skip,
    /// Plugin not run (·).
    not_run,
    /// Error status (!).
    error,
    /// Not modelled, ties, and other cautions.
    warning,
    score_bar,
    /// Bar of the best total.
    score_bar_best,
    /// The chosen node (★).
    chosen,
    /// Other nodes tied with the best total (=).
    tie,
    /// Requested part of a resource gauge.
    gauge,
    /// The incoming pod's request on a resource gauge.
    gauge_pod,
    /// A gauge past allocatable.
    gauge_over,
    /// Pods waiting at Permit.
    waiting,
    countdown,
    /// Countdown under ten seconds.
    countdown_urgent,
    gated,
    nominated,
    bound,
    unschedulable,
    pending,
}

#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    #[error("theme file {path}: cannot read it: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("theme file {path}: not a valid theme: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("theme file {path}: {field}: {message}")]
    Field {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error(
        "theme {name:?} not found: not a built-in theme ({builtins}) and no file {searched}; pass a theme name or a path to a .yaml file"
    )]
    NotFound {
        name: String,
        builtins: String,
        searched: String,
    },
    #[error("theme {path}: `extends: {parent}` forms a cycle or is nested too deep")]
    ExtendsCycle { path: PathBuf, parent: String },
}

/// How many colours the terminal shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorDepth {
    TrueColor,
    Ansi256,
    Ansi16,
    /// `NO_COLOR`: modifiers only.
    None,
}

impl ColorDepth {
    /// From the environment: `NO_COLOR` (non-empty) wins; `COLORTERM` = truecolor/24bit
    /// keeps RGB; a `*256color*` TERM gets 256 colours; anything else 16.
    pub fn detect(env: &dyn Fn(&str) -> Option<String>) -> ColorDepth {
        if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return ColorDepth::None;
        }
        let colorterm = env("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm.contains("truecolor") || colorterm.contains("24bit") {
            return ColorDepth::TrueColor;
        }
        let term = env("TERM").unwrap_or_default();
        if term.contains("256color") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTheme {
    name: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    /// Another theme (built-in or user) whose slots this one starts from.
    extends: Option<String>,
    #[serde(default)]
    palette: BTreeMap<String, RawColor>,
    #[serde(default)]
    styles: BTreeMap<String, RawStyle>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawColor {
    Index(i64),
    Name(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStyle {
    fg: Option<RawColor>,
    bg: Option<RawColor>,
    #[serde(default)]
    modifiers: Vec<String>,
}

/// Where theme files are looked up by name: `$XDG_CONFIG_HOME/schedscope/themes`, or
/// `$HOME/.config/schedscope/themes`.
pub fn user_theme_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|s| !s.is_empty())
                .map(|h| Path::new(&h).join(".config"))
        })?;
    Some(base.join("schedscope").join("themes"))
}

fn looks_like_path(spec: &str) -> bool {
    spec.contains('/') || spec.contains('\\') || spec.ends_with(".yaml") || spec.ends_with(".yml")
}

impl Theme {
    /// A built-in theme by name, at full colour.
    pub fn builtin(name: &str) -> Option<Theme> {
        let (_, src) = BUILTIN.iter().find(|(n, _)| *n == name)?;
        // Built-ins are checked by tests; a failure here is a packaging bug.
        Theme::parse(
            src,
            Path::new(&format!("<builtin>/{name}.yaml")),
            &|_| None,
            0,
        )
        .ok()
    }

    /// The theme for `--theme NAME|PATH` (None = default), adapted to the terminal.
    /// Without `--theme`, `NO_COLOR` selects the monochrome theme.
    pub fn resolve(
        spec: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Theme, ThemeError> {
        let depth = ColorDepth::detect(env);
        let spec = match spec {
            Some(s) if !s.is_empty() => s,
            _ if depth == ColorDepth::None => "mono",
            _ => DEFAULT_THEME,
        };
        let user_dir = user_theme_dir(env);
        let theme = load_named(spec, user_dir.as_deref(), 0)?;
        Ok(theme.adapted(depth))
    }

    /// Load a theme file (slots missing from it come from `extends`, default `dark`).
    pub fn load_file(path: &Path) -> Result<Theme, ThemeError> {
        load_path(path, None, 0)
    }

    fn parse(
        src: &str,
        path: &Path,
        parent: &dyn Fn(&str) -> Option<Result<Theme, ThemeError>>,
        depth: usize,
    ) -> Result<Theme, ThemeError> {
        let name = path.display().to_string();
        // The library's rendering starts with its own "error: " (ours already says it)
        // and would name the source `<input>`.
        let parse_error = |e: serde_saphyr::Error| {
            let rendered =
                e.render_with_options(serde_saphyr::render_options! { source_name: Some(&name) });
            ThemeError::Parse {
                path: path.to_path_buf(),
                message: rendered
                    .strip_prefix("error: ")
                    .map(str::to_string)
                    .unwrap_or(rendered),
            }
        };
        crate::text::check_alias_expansion(src, serde_saphyr::Options::default())
            .map_err(parse_error)?;
        let raw: RawTheme = serde_saphyr::from_str(src).map_err(parse_error)?;
        let field_err = |field: String, message: String| ThemeError::Field {
            path: path.to_path_buf(),
            field,
            message,
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "custom".into());
        let name = raw.name.clone().unwrap_or(stem);
        let mut theme = match &raw.extends {
            Some(p) => {
                if depth > 4 {
                    return Err(ThemeError::ExtendsCycle {
                        path: path.to_path_buf(),
                        parent: p.clone(),
                    });
                }
                match parent(p) {
                    Some(Ok(t)) => t,
                    Some(Err(e)) if !matches!(e, ThemeError::NotFound { .. }) => return Err(e),
                    _ => {
                        return Err(field_err(
                            "extends".into(),
                            format!("unknown theme {p:?} (built-ins: {})", builtin_names()),
                        ));
                    }
                }
            }
            None if name == DEFAULT_THEME || path.starts_with("<builtin>") => Theme::blank(&name),
            None => Theme::builtin(DEFAULT_THEME).unwrap_or_else(|| Theme::blank(&name)),
        };
        theme.name = name;

        let mut palette = BTreeMap::new();
        for (k, v) in &raw.palette {
            let c = parse_color(v, None).map_err(|m| field_err(format!("palette.{k}"), m))?;
            palette.insert(k.clone(), c);
        }
        for (slot, rs) in &raw.styles {
            let Some(style) = theme.slot_mut(slot) else {
                return Err(field_err(
                    format!("styles.{slot}"),
                    format!(
                        "unknown style slot; the slots are: {}",
                        SLOT_NAMES.join(", ")
                    ),
                ));
            };
            let mut s = Style::new();
            if let Some(c) = &rs.fg {
                s = s.fg(parse_color(c, Some(&palette))
                    .map_err(|m| field_err(format!("styles.{slot}.fg"), m))?);
            }
            if let Some(c) = &rs.bg {
                s = s.bg(parse_color(c, Some(&palette))
                    .map_err(|m| field_err(format!("styles.{slot}.bg"), m))?);
            }
            for (i, m) in rs.modifiers.iter().enumerate() {
                let md = parse_modifier(m)
                    .map_err(|msg| field_err(format!("styles.{slot}.modifiers[{i}]"), msg))?;
                s = s.add_modifier(md);
            }
            *style = s;
        }
        Ok(theme)
    }

    /// Downgrade colours to what the terminal shows. With no colour at all, slots that
    /// must stay visible get reverse video / bold instead.
    pub fn adapted(mut self, depth: ColorDepth) -> Theme {
        self.for_each_slot(|slot, s| {
            let map = |c: Color| match depth {
                ColorDepth::TrueColor => c,
                ColorDepth::Ansi256 => to_256(c),
                ColorDepth::Ansi16 => to_16(c),
                ColorDepth::None => Color::Reset,
            };
            if let Some(fg) = s.fg {
                s.fg = Some(map(fg));
            }
            if let Some(bg) = s.bg {
                s.bg = Some(map(bg));
            }
            if depth == ColorDepth::None {
                s.fg = None;
                s.bg = None;
                let extra = match slot {
                    "selected" | "tab_active" | "status_bar" => Modifier::REVERSED,
                    "reject_first" | "chosen" | "countdown_urgent" | "title" | "header" => {
                        Modifier::BOLD
                    }
                    "dim" | "not_run" | "skip" => Modifier::DIM,
                    _ => Modifier::empty(),
                };
                *s = s.add_modifier(extra);
            }
        });
        self
    }
}

pub fn builtin_names() -> String {
    BUILTIN
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

fn load_named(spec: &str, user_dir: Option<&Path>, depth: usize) -> Result<Theme, ThemeError> {
    if looks_like_path(spec) {
        return load_path(Path::new(spec), user_dir, depth);
    }
    let mut searched = Vec::new();
    if let Some(dir) = user_dir {
        for ext in ["yaml", "yml"] {
            let p = dir.join(format!("{spec}.{ext}"));
            if p.is_file() {
                return load_path(&p, user_dir, depth);
            }
            searched.push(p.display().to_string());
        }
    }
    if let Some((name, src)) = BUILTIN.iter().find(|(n, _)| *n == spec) {
        let path = PathBuf::from(format!("<builtin>/{name}.yaml"));
        return Theme::parse(
            src,
            &path,
            &|p| Some(load_named(p, user_dir, depth + 1)),
            depth,
        );
    }
    Err(ThemeError::NotFound {
        name: spec.to_string(),
        builtins: builtin_names(),
        searched: if searched.is_empty() {
            "(no user theme directory: set XDG_CONFIG_HOME or HOME)".into()
        } else {
            searched.join(" or ")
        },
    })
}

fn load_path(path: &Path, user_dir: Option<&Path>, depth: usize) -> Result<Theme, ThemeError> {
    let src = std::fs::read_to_string(path).map_err(|source| ThemeError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Theme::parse(
        &src,
        path,
        &|p| Some(load_named(p, user_dir, depth + 1)),
        depth,
    )
}

fn parse_modifier(m: &str) -> Result<Modifier, String> {
    Ok(match m.to_ascii_lowercase().as_str() {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underlined" | "underline" => Modifier::UNDERLINED,
        "reversed" | "reverse" => Modifier::REVERSED,
        "crossed_out" | "strikethrough" => Modifier::CROSSED_OUT,
        "slow_blink" | "blink" => Modifier::SLOW_BLINK,
        other => {
            return Err(format!(
                "unknown modifier {other:?}; use bold, dim, italic, underlined, reversed, crossed_out or blink"
            ));
        }
    })
}

const NAMED: &[(&str, Color)] = &[
    ("reset", Color::Reset),
    ("default", Color::Reset),
    ("black", Color::Black),
    ("red", Color::Red),
    ("green", Color::Green),
    ("yellow", Color::Yellow),
    ("blue", Color::Blue),
    ("magenta", Color::Magenta),
    ("cyan", Color::Cyan),
    ("gray", Color::Gray),
    ("grey", Color::Gray),
    ("dark_gray", Color::DarkGray),
    ("dark_grey", Color::DarkGray),
    ("darkgray", Color::DarkGray),
    ("light_red", Color::LightRed),
    ("light_green", Color::LightGreen),
    ("light_yellow", Color::LightYellow),
    ("light_blue", Color::LightBlue),
    ("light_magenta", Color::LightMagenta),
    ("light_cyan", Color::LightCyan),
    ("white", Color::White),
];

fn parse_color(c: &RawColor, palette: Option<&BTreeMap<String, Color>>) -> Result<Color, String> {
    let s = match c {
        RawColor::Index(i) => {
            return u8::try_from(*i)
                .map(Color::Indexed)
                .map_err(|_| format!("colour index {i} is out of range 0..=255"));
        }
        RawColor::Name(s) => s.trim(),
    };
    if let Some(p) = palette
        && let Some(c) = p.get(s)
    {
        return Ok(*c);
    }
    if let Some(hex) = s.strip_prefix('#') {
        let ok = hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit());
        if !ok {
            return Err(format!("bad hex colour {s:?}; expected #rrggbb"));
        }
        let v = u32::from_str_radix(hex, 16).map_err(|e| e.to_string())?;
        return Ok(Color::Rgb((v >> 16) as u8, (v >> 8) as u8, v as u8));
    }
    if let Ok(i) = s.parse::<u8>() {
        return Ok(Color::Indexed(i));
    }
    let lower = s.to_ascii_lowercase().replace(['-', ' '], "_");
    if let Some((_, c)) = NAMED.iter().find(|(n, _)| *n == lower) {
        return Ok(*c);
    }
    let pal = palette
        .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
        .filter(|s| !s.is_empty())
        .map(|s| format!(", a palette entry ({s})"))
        .unwrap_or_default();
    Err(format!(
        "unknown colour {s:?}; expected a name (red, light_blue, ...){pal}, \"#rrggbb\" or an index 0-255"
    ))
}

/// The 16 ANSI colours as xterm draws them, for nearest-colour matching.
const ANSI16: [(Color, (u8, u8, u8)); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

const CUBE: [u8; 6] = [0, 95, 135, 175, 215, 255];

fn rgb_of_index(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16[i as usize].1,
        16..=231 => {
            let i = i - 16;
            (
                CUBE[(i / 36) as usize],
                CUBE[((i / 6) % 6) as usize],
                CUBE[(i % 6) as usize],
            )
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

fn dist(a: (u8, u8, u8), b: (u8, u8, u8)) -> u32 {
    let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).unsigned_abs();
    // Weighted for perceived brightness (green counts most).
    3 * d(a.0, b.0).pow(2) + 4 * d(a.1, b.1).pow(2) + 2 * d(a.2, b.2).pow(2)
}

fn to_256(c: Color) -> Color {
    let Color::Rgb(r, g, b) = c else { return c };
    let near = |v: u8| {
        CUBE.iter()
            .enumerate()
            .min_by_key(|(_, x)| (i32::from(**x) - i32::from(v)).abs())
            .map_or(0, |(i, _)| i as u8)
    };
    let cube = 16 + 36 * near(r) + 6 * near(g) + near(b);
    let avg = ((u16::from(r) + u16::from(g) + u16::from(b)) / 3) as u8;
    let gray = 232 + (avg.saturating_sub(8) / 10).min(23);
    let best = [cube, gray]
        .into_iter()
        .min_by_key(|i| dist(rgb_of_index(*i), (r, g, b)))
        .unwrap_or(cube);
    Color::Indexed(best)
}

fn to_16(c: Color) -> Color {
    let rgb = match c {
        Color::Rgb(r, g, b) => (r, g, b),
        Color::Indexed(i) if i < 16 => return ANSI16[i as usize].0,
        Color::Indexed(i) => rgb_of_index(i),
        other => return other,
    };
    ANSI16
        .iter()
        .min_by_key(|(_, v)| dist(*v, rgb))
        .map_or(Color::Reset, |(c, _)| *c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn raw_slots(src: &str) -> Vec<String> {
        let raw: RawTheme = serde_saphyr::from_str(src).expect("parses");
        raw.styles.keys().cloned().collect()
    }

    #[test]
    fn every_builtin_loads_and_sets_every_slot() {
        for (name, src) in BUILTIN {
            let t = Theme::builtin(name).unwrap_or_else(|| panic!("{name} loads"));
            assert_eq!(t.name, *name);
            let mut set = raw_slots(src);
            set.sort();
            let mut all: Vec<String> = SLOT_NAMES.iter().map(|s| s.to_string()).collect();
            all.sort();
            assert_eq!(set, all, "{name} must set every slot explicitly");
            assert!(
                t.selected.add_modifier.contains(Modifier::REVERSED) || t.selected.bg.is_some(),
                "{name}: selection must be visible"
            );
            let stripped = t.clone().adapted(ColorDepth::None);
            assert!(
                stripped.selected.add_modifier.contains(Modifier::REVERSED),
                "{name}: without colour, selection uses reverse video"
            );
        }
    }

    #[test]
    fn mono_theme_has_no_colour() {
        let t = Theme::builtin("mono").expect("mono");
        let mut t2 = t.clone();
        t2.for_each_slot(|slot, s| {
            assert!(
                s.fg.is_none() || s.fg == Some(Color::Reset),
                "mono {slot} has fg"
            );
            assert!(
                s.bg.is_none() || s.bg == Some(Color::Reset),
                "mono {slot} has bg"
            );
        });
    }

    #[test]
    fn colour_depth_detection() {
        assert_eq!(ColorDepth::detect(&no_env), ColorDepth::Ansi16);
        assert_eq!(
            ColorDepth::detect(&env_of(&[("COLORTERM", "truecolor")])),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::detect(&env_of(&[("COLORTERM", "24bit")])),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::detect(&env_of(&[("TERM", "xterm-256color")])),
            ColorDepth::Ansi256
        );
        assert_eq!(
            ColorDepth::detect(&env_of(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")])),
            ColorDepth::None
        );
        // An empty NO_COLOR does not count.
        assert_eq!(
            ColorDepth::detect(&env_of(&[("NO_COLOR", ""), ("COLORTERM", "truecolor")])),
            ColorDepth::TrueColor
        );
    }

    #[test]
    fn no_color_picks_mono_and_strips_explicit_themes() {
        let env = env_of(&[("NO_COLOR", "1"), ("COLORTERM", "truecolor")]);
        let t = Theme::resolve(None, &env).expect("resolves");
        assert_eq!(t.name, "mono");
        let t = Theme::resolve(Some("dark"), &env).expect("resolves");
        assert_eq!(t.name, "dark");
        assert_eq!(t.pass.fg, None);
        assert!(t.selected.add_modifier.contains(Modifier::REVERSED));
    }

    #[test]
    fn downgrades_truecolour() {
        let env = env_of(&[("TERM", "xterm-256color")]);
        let t = Theme::resolve(Some("dark"), &env).expect("dark");
        let mut t2 = t.clone();
        t2.for_each_slot(|slot, s| {
            assert!(
                !matches!(s.fg, Some(Color::Rgb(..))),
                "{slot} still rgb at 256 colours"
            );
        });
        assert_eq!(to_256(Color::Rgb(255, 0, 0)), Color::Indexed(196));
        assert_eq!(to_256(Color::Rgb(128, 128, 128)), Color::Indexed(244));
        assert_eq!(to_16(Color::Rgb(250, 10, 10)), Color::LightRed);
        assert_eq!(to_16(Color::Rgb(0, 180, 0)), Color::Green);
        assert_eq!(to_16(Color::Indexed(196)), Color::LightRed);
        assert_eq!(to_16(Color::Indexed(4)), Color::Blue);
        let t16 = Theme::resolve(Some("colorblind"), &no_env).expect("cb");
        let mut t3 = t16.clone();
        t3.for_each_slot(|slot, s| {
            assert!(
                !matches!(s.fg, Some(Color::Rgb(..) | Color::Indexed(_))),
                "{slot} not downgraded to 16 colours"
            );
        });
    }

    fn write_theme(dir: &Path, name: &str, body: &str) -> PathBuf {
        std::fs::create_dir_all(dir).expect("mkdir");
        let p = dir.join(name);
        std::fs::write(&p, body).expect("write");
        p
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("schedscope-theme-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn broken_themes_name_file_and_field() {
        let dir = tmpdir("broken");
        let cases = [
            (
                "badcolour.yaml",
                "styles:\n  pass:\n    fg: gren\n",
                "styles.pass.fg: unknown colour \"gren\"",
            ),
            (
                "badslot.yaml",
                "styles:\n  passs:\n    fg: green\n",
                "styles.passs: unknown style slot",
            ),
            (
                "badhex.yaml",
                "styles:\n  reject:\n    bg: \"#12345\"\n",
                "styles.reject.bg: bad hex colour \"#12345\"",
            ),
            (
                "badindex.yaml",
                "styles:\n  header:\n    fg: 300\n",
                "styles.header.fg: colour index 300 is out of range",
            ),
            (
                "badmod.yaml",
                "styles:\n  header:\n    modifiers: [bold, blinky]\n",
                "styles.header.modifiers[1]: unknown modifier \"blinky\"",
            ),
            (
                "badpalette.yaml",
                "palette:\n  accent: \"#zzzzzz\"\n",
                "palette.accent: bad hex colour",
            ),
            (
                "badextends.yaml",
                "extends: nosuch\n",
                "extends: unknown theme \"nosuch\"",
            ),
            (
                "badkey.yaml",
                "styles:\n  pass:\n    colour: green\n",
                "not a valid theme",
            ),
            ("notyaml.yaml", "styles: [unclosed\n", "not a valid theme"),
        ];
        for (file, body, want) in cases {
            let p = write_theme(&dir, file, body);
            let err = Theme::resolve(Some(p.to_str().expect("utf8")), &no_env)
                .expect_err(file)
                .to_string();
            assert!(
                err.starts_with(&format!("theme file {}", p.display())),
                "{file}: {err}"
            );
            assert!(err.contains(want), "{file}: {err}");
        }
        let missing = dir.join("missing.yaml");
        let err = Theme::resolve(Some(missing.to_str().expect("utf8")), &no_env)
            .expect_err("missing")
            .to_string();
        assert!(err.contains("cannot read it"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A parse error says "error" once and its snippet names the file, not `<input>`.
    #[test]
    fn parse_errors_name_the_file_in_the_snippet() {
        let dir = tmpdir("snippet");
        let p = write_theme(&dir, "unclosed.yaml", "styles: [unclosed\n");
        let err = Theme::resolve(Some(p.to_str().expect("utf8")), &no_env)
            .expect_err("unclosed")
            .to_string();
        assert!(
            err.starts_with(&format!(
                "theme file {}: not a valid theme: line ",
                p.display()
            )),
            "{err}"
        );
        assert!(!err.contains("error:"), "{err}");
        assert!(!err.contains("<input>"), "{err}");
        assert!(err.contains(&format!("--> {}:", p.display())), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn user_theme_directory_and_extends() {
        let dir = tmpdir("user");
        let themes = dir.join("schedscope").join("themes");
        write_theme(
            &themes,
            "mine.yaml",
            "extends: light\npalette:\n  hot: \"#ff0000\"\nstyles:\n  reject:\n    fg: hot\n    modifiers: [bold]\n",
        );
        let base = dir.to_str().expect("utf8").to_string();
        let env = move |k: &str| match k {
            "XDG_CONFIG_HOME" => Some(base.clone()),
            "COLORTERM" => Some("truecolor".into()),
            _ => None,
        };
        let t = Theme::resolve(Some("mine"), &env).expect("user theme");
        assert_eq!(t.name, "mine");
        assert_eq!(t.reject.fg, Some(Color::Rgb(255, 0, 0)));
        let light = Theme::builtin("light").expect("light");
        assert_eq!(t.pass, light.pass, "unset slots come from `extends`");

        let err = Theme::resolve(Some("nosuch"), &env)
            .expect_err("unknown")
            .to_string();
        assert!(err.contains("theme \"nosuch\" not found"), "{err}");
        assert!(err.contains("nosuch.yaml"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

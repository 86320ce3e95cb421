//! The CLI's renderings of the presentation model: an explain answer as the fidelity
//! JSON schema (also as YAML), a human table, Markdown and a self-contained HTML page, the pods listing, the simulation
//! timeline; [`escape`] makes untrusted text safe to print on a terminal.

/// Appends one line of human output to a `String`: the formatted text with every
/// line feed its values hold spelled out (`\n`, [`crate::report::format::one_line`]),
/// so a name, a reason, a message or a CEL expression holding one cannot add lines
/// of its own; the line feeds the format string starts with (a blank line before a
/// section) stay. Every line the renderers write with values in it goes through it.
macro_rules! put_line {
    ($o:expr, $fmt:literal $($args:tt)*) => {{
        let text = format!($fmt $($args)*);
        let lead = $fmt.len() - $fmt.trim_start_matches('\n').len();
        $o.push_str(&text[..lead]);
        $o.push_str(&$crate::report::format::one_line(&text[lead..]));
        $o.push('\n');
    }};
}

mod answer_json;
pub mod capacity;
pub mod escape;
pub mod html;
pub mod json;
pub mod markdown;
pub mod pods;
pub mod simulation;
pub mod table;
pub mod whatif;

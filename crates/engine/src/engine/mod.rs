//! The pure scheduling engine: cluster model in, trace out (upstream: pkg/scheduler,
//! one module per upstream file or concept, each naming it). No terminal, network,
//! clock or files here.

pub mod binding;
pub mod cycle;
pub mod fit_error;
pub mod framework;
pub mod handle;
pub mod plugins;
pub mod prepare;
pub mod profile;
pub mod queue;
pub mod scheduler;
pub mod status;
pub mod trace;
pub mod waiting;

pub use framework::{Ctx, CycleState, Framework};
pub use profile::SchedulerConfig;
pub use status::{Code, Status};

/// Go's `time.Duration.String()` for whole and fractional seconds: `10s`, `1m0s`,
/// `15m0s`, `1.5s`, `500ms`, `0s`.
pub fn go_duration(d: std::time::Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", fraction(nanos, 1_000));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", fraction(nanos, 1_000_000));
    }
    let total_secs = d.as_secs();
    let frac = d.subsec_nanos();
    let h = total_secs / 3600;
    let m = (total_secs % 3600) / 60;
    let s = total_secs % 60;
    let mut secs = s.to_string();
    if frac != 0 {
        let f = format!("{frac:09}");
        secs.push('.');
        secs.push_str(f.trim_end_matches('0'));
    }
    if h > 0 {
        format!("{h}h{m}m{secs}s")
    } else if m > 0 {
        format!("{m}m{secs}s")
    } else {
        format!("{secs}s")
    }
}

/// `n / unit` with the remainder as trailing decimals, zeros trimmed (Go's style).
fn fraction(n: u128, unit: u128) -> String {
    let whole = n / unit;
    let rem = n % unit;
    if rem == 0 {
        return whole.to_string();
    }
    let digits = unit.ilog10() as usize;
    let frac = format!("{rem:0digits$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn go_duration_strings() {
        let cases = [
            (Duration::from_secs(10), "10s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(900), "15m0s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(500), "500ms"),
            (Duration::ZERO, "0s"),
            (Duration::from_secs(3661), "1h1m1s"),
            (Duration::from_micros(1500), "1.5ms"),
            (Duration::from_nanos(1500), "1.5µs"),
            (Duration::from_nanos(7), "7ns"),
        ];
        for (d, want) in cases {
            assert_eq!(super::go_duration(d), want);
        }
    }
}

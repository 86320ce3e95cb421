//! Kubernetes resource quantities, parsed exactly.
//!
//! A quantity is kept as an integer count of nano-units so that sums are exact, as
//! upstream sums `resource.Quantity` values before converting once (`MilliValue()` for
//! cpu, `Value()` for everything else, both rounding up).

use std::fmt;

/// Exact quantity in nano-units (1 = 10^-9 of the base unit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity(pub i128);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown quantity {text:?}: {why}")]
pub struct QuantityError {
    pub text: String,
    pub why: &'static str,
}

const NANO: i128 = 1_000_000_000;

impl Quantity {
    pub fn from_units(v: i64) -> Self {
        Quantity(v as i128 * NANO)
    }
    pub fn from_milli(v: i64) -> Self {
        Quantity(v as i128 * 1_000_000)
    }

    /// `Value()`: whole units, rounded up.
    pub fn value(self) -> i64 {
        clamp_i64(ceil_div(self.0, NANO))
    }

    /// `MilliValue()`: thousandths, rounded up.
    pub fn milli_value(self) -> i64 {
        clamp_i64(ceil_div(self.0, 1_000_000))
    }

    pub fn parse(text: &str) -> Result<Self, QuantityError> {
        let err = |why| QuantityError {
            text: text.to_string(),
            why,
        };
        let s = text.trim();
        if s.is_empty() {
            return Err(err("empty string"));
        }
        let (negative, body) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        // Split number from suffix.
        let num_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (num, suffix) = body.split_at(num_end);
        if num.is_empty() || num == "." {
            return Err(err("no number"));
        }
        let (int_part, frac_part) = match num.split_once('.') {
            Some((i, f)) => (i, f),
            None => (num, ""),
        };
        if frac_part.contains('.') {
            return Err(err("more than one decimal point"));
        }
        // mantissa = digits as integer, scale = 10^-len(frac)
        // Both parts hold ASCII digits only (the split above), so they are summed in
        // place: this runs for every quantity of every pod loaded.
        let mut mantissa: i128 = 0;
        let mut significant = 0;
        for b in int_part.bytes().chain(frac_part.bytes()) {
            if significant == 0 && b == b'0' {
                continue;
            }
            significant += 1;
            if significant > 30 {
                return Err(err("too many digits"));
            }
            mantissa = mantissa * 10 + i128::from(b - b'0');
        }
        let mut dec_exp: i32 = -(frac_part.len() as i32);
        let mut bin_mul: i128 = 1;
        match suffix {
            "" => {}
            "n" => dec_exp -= 9,
            "u" => dec_exp -= 6,
            "m" => dec_exp -= 3,
            "k" => dec_exp += 3,
            "M" => dec_exp += 6,
            "G" => dec_exp += 9,
            "T" => dec_exp += 12,
            "P" => dec_exp += 15,
            "E" => dec_exp += 18,
            "Ki" => bin_mul = 1 << 10,
            "Mi" => bin_mul = 1 << 20,
            "Gi" => bin_mul = 1 << 30,
            "Ti" => bin_mul = 1 << 40,
            "Pi" => bin_mul = 1 << 50,
            "Ei" => bin_mul = 1 << 60,
            s if s.starts_with(['e', 'E']) => {
                let e: i32 = s[1..].parse().map_err(|_| err("bad exponent"))?;
                if !(-40..=40).contains(&e) {
                    return Err(err("exponent out of range"));
                }
                dec_exp += e;
            }
            _ => return Err(err("unknown suffix")),
        }
        // value in nano = mantissa * bin_mul * 10^(dec_exp + 9), rounded up (as upstream
        // rounds sub-nano precision up).
        let exp = dec_exp + 9;
        let base = mantissa
            .checked_mul(bin_mul)
            .ok_or_else(|| err("too large"))?;
        let nanos = if exp >= 0 {
            let p = 10i128
                .checked_pow(exp as u32)
                .ok_or_else(|| err("too large"))?;
            base.checked_mul(p).ok_or_else(|| err("too large"))?
        } else {
            let p = 10i128
                .checked_pow((-exp) as u32)
                .ok_or_else(|| err("too small"))?;
            ceil_div(base, p)
        };
        if nanos > i64::MAX as i128 * NANO {
            return Err(err("too large"));
        }
        Ok(Quantity(if negative { -nanos } else { nanos }))
    }
}

impl std::ops::Add for Quantity {
    type Output = Quantity;
    fn add(self, o: Quantity) -> Quantity {
        Quantity(self.0.saturating_add(o.0))
    }
}

impl std::ops::AddAssign for Quantity {
    fn add_assign(&mut self, o: Quantity) {
        self.0 = self.0.saturating_add(o.0);
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 % NANO == 0 {
            write!(f, "{}", self.0 / NANO)
        } else if self.0 % 1_000_000 == 0 {
            write!(f, "{}m", self.0 / 1_000_000)
        } else {
            write!(f, "{}n", self.0)
        }
    }
}

fn ceil_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a > 0) == (b > 0)) {
        q + 1
    } else {
        q
    }
}

fn clamp_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_common_forms() {
        let cases: &[(&str, i64, i64)] = &[
            ("1", 1000, 1),
            ("500m", 500, 1),
            ("0.5", 500, 1),
            ("1.5", 1500, 2),
            ("100n", 1, 1),
            ("2Gi", 2 * 1024 * 1024 * 1024 * 1000, 2 * 1024 * 1024 * 1024),
            ("1Ki", 1024 * 1000, 1024),
            ("1k", 1_000_000, 1000),
            ("1e3", 1_000_000, 1000),
            ("0", 0, 0),
            ("128974848", 128974848000, 128974848),
            ("129M", 129_000_000_000, 129_000_000),
        ];
        for (text, milli, value) in cases {
            let q = Quantity::parse(text).unwrap();
            assert_eq!(q.milli_value(), *milli, "milli of {text}");
            assert_eq!(q.value(), *value, "value of {text}");
        }
    }

    #[test]
    fn sums_exactly_then_rounds_once() {
        let a = Quantity::parse("0.3").unwrap();
        let b = Quantity::parse("0.3").unwrap();
        assert_eq!(a.value() + b.value(), 2);
        assert_eq!((a + b).value(), 1);
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "abc", "1.2.3", "1Zi", "--1", "1e"] {
            assert!(Quantity::parse(bad).is_err(), "{bad} should fail");
        }
    }
}

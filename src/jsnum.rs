//! JavaScript number semantics, in the one place the file formats need them.
//!
//! The reference harness computes every figure in JavaScript and writes result
//! files with `JSON.stringify`. To re-aggregate its baselines to the same
//! numbers and to write files it would write byte for byte, we need three of
//! its behaviours exactly: `Math.round` (ties go towards +infinity),
//! `Number.prototype.toString` (no `.0` on integral values, plain decimals
//! down to 1e-6), and JSON with tab indentation and a final newline.
//!
//! This module owns only those conversions; what is rounded where belongs to
//! `report::aggregate`.

use serde::Serialize;
use serde_json::Value;

/// `Math.round(n * 10**places) / 10**places`, as the reference harness rounds.
pub fn round(n: f64, places: i32) -> f64 {
    let factor = 10f64.powi(places);
    math_round(n * factor) / factor
}

/// ECMAScript `Math.round`: the nearest integer, ties towards +infinity.
///
/// `(x + 0.5).floor()` is not the same thing: for 0.49999999999999994 the
/// addition rounds up to 1.0. Comparing the fractional part is exact.
pub fn math_round(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let floor = x.floor();
    if x - floor >= 0.5 { floor + 1.0 } else { floor }
}

/// The string JavaScript's `String(x)` gives for a finite number.
///
/// Rust's `{:e}` already yields the shortest digits that round-trip (the same
/// digits ECMAScript requires); only the layout rules differ.
pub fn to_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if x == 0.0 {
        // Covers -0 too: JavaScript prints it as "0".
        return "0".into();
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').expect("{:e} always has an exponent");
    let exponent: i32 = exponent.parse().expect("{:e} exponent is an integer");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    // ECMAScript Number::toString: the value is 0.d1d2...dk * 10^n.
    let n = exponent + 1;
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let e = n - 1;
        out.push('e');
        out.push(if e >= 0 { '+' } else { '-' });
        out.push_str(&e.abs().to_string());
    }
    out
}

/// JavaScript's `x.toFixed(digits)`.
///
/// Both languages round the exact binary value; they differ only on an exact
/// tie (0.125 to two places), where ECMAScript picks the larger magnitude and
/// Rust rounds half to even. Ties are only possible for values with a short
/// binary expansion, so we look at the exact decimal expansion to find them.
pub fn to_fixed(x: f64, digits: usize) -> String {
    let rust = format!("{x:.digits$}");
    if !x.is_finite() {
        return to_string(x);
    }
    if !may_be_tie(x, digits) {
        return rust;
    }
    // Every finite double has a finite decimal expansion of at most 1074
    // fractional digits, so this prints it exactly.
    let exact = format!("{:.1074}", x.abs());
    let (int_part, frac) = exact.split_once('.').expect("precision forces a point");
    let frac = frac.trim_end_matches('0');
    let is_tie = frac.len() == digits + 1 && frac.ends_with('5');
    if !is_tie {
        return rust;
    }
    // Round the magnitude up: truncate, then add one unit in the last place.
    let mut kept: Vec<u8> = int_part.bytes().chain(frac[..digits].bytes()).collect();
    let mut i = kept.len();
    loop {
        if i == 0 {
            kept.insert(0, b'1');
            break;
        }
        i -= 1;
        if kept[i] == b'9' {
            kept[i] = b'0';
        } else {
            kept[i] += 1;
            break;
        }
    }
    let int_len = kept.len() - digits;
    let mut out = String::new();
    if x < 0.0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(&kept[..int_len]).expect("ASCII digits"));
    if digits > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&kept[int_len..]).expect("ASCII digits"));
    }
    out
}

/// Whether `x` may have exactly `digits + 1` fractional decimal digits, the
/// last a 5, without printing its exact expansion (slow: up to 1074 digits,
/// and the site formats numbers by the thousand). A double is m / 2^j, so if
/// it has at most `digits + 1` fractional digits, x * 2^(digits + 1) is an
/// integer (the product is exact: scaling by a power of two). An integer has
/// no fractional digits at all.
fn may_be_tie(x: f64, digits: usize) -> bool {
    if x.fract() == 0.0 {
        return false;
    }
    let scale = i32::try_from(digits + 1).map_or(f64::INFINITY, |e| 2f64.powi(e));
    (x * scale).fract() == 0.0
}

/// The length in bytes of `value` as compact JSON, counted without building the text.
pub fn json_len<T: Serialize + ?Sized>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing into a counter cannot fail; a value that cannot be serialized counts what was written.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The layout of the reference harness's committed baselines: the output of
/// `JSON.stringify` as Prettier (`printWidth` 120, tabs of width 2) formats it.
/// Objects are always expanded; an array of scalars stays on one line when
/// that line fits in 120 columns, and is otherwise one element per line.
/// Numbers print as JavaScript prints them.
const PRINT_WIDTH: usize = 120;
const TAB_WIDTH: usize = 2;

/// Serialize `value` in that layout, with a trailing newline.
pub fn to_json_bytes<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let value = serde_json::to_value(value)?;
    let mut out = String::with_capacity(4096);
    write_value(&mut out, &value, 0, 0, false);
    out.push('\n');
    Ok(out.into_bytes())
}

/// The same layout as a string, for `--json` output.
pub fn to_json_string<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let bytes = to_json_bytes(value)?;
    Ok(String::from_utf8(bytes).expect("serde_json values print as UTF-8"))
}

fn scalar(value: &Value) -> String {
    match value {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(i)) => i.to_string(),
            // JSON.stringify writes non-finite numbers as null.
            _ => n.as_f64().filter(|f| f.is_finite()).map_or_else(|| "null".into(), to_string),
        },
        other => serde_json::to_string(other).expect("scalars serialize"),
    }
}

fn indent(out: &mut String, depth: usize) {
    out.extend(std::iter::repeat_n('\t', depth));
}

/// Write `value` at nesting `depth`; `column` is where it starts on the
/// current line and `comma` whether a `,` will follow it (Prettier counts
/// that comma when deciding whether an array fits).
fn write_value(out: &mut String, value: &Value, depth: usize, column: usize, comma: bool) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            let last = map.len() - 1;
            for (i, (key, v)) in map.iter().enumerate() {
                out.push('\n');
                indent(out, depth + 1);
                let key = serde_json::to_string(key).expect("keys serialize");
                out.push_str(&key);
                out.push_str(": ");
                let column = (depth + 1) * TAB_WIDTH + key.chars().count() + 2;
                write_value(out, v, depth + 1, column, i != last);
                if i != last {
                    out.push(',');
                }
            }
            out.push('\n');
            indent(out, depth);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            let flat = items.iter().all(|v| {
                !matches!(v, Value::Array(a) if !a.is_empty()) && !matches!(v, Value::Object(o) if !o.is_empty())
            });
            if flat {
                let parts: Vec<String> = items.iter().map(scalar_or_empty).collect();
                let width: usize = 2 + parts.iter().map(|p| p.chars().count()).sum::<usize>() + 2 * (parts.len() - 1);
                if column + width + usize::from(comma) <= PRINT_WIDTH {
                    out.push('[');
                    out.push_str(&parts.join(", "));
                    out.push(']');
                    return;
                }
            }
            out.push('[');
            let last = items.len() - 1;
            for (i, v) in items.iter().enumerate() {
                out.push('\n');
                indent(out, depth + 1);
                write_value(out, v, depth + 1, (depth + 1) * TAB_WIDTH, i != last);
                if i != last {
                    out.push(',');
                }
            }
            out.push('\n');
            indent(out, depth);
            out.push(']');
        }
        other => out.push_str(&scalar_or_empty(other)),
    }
}

/// A scalar, or an empty `{}` / `[]`.
fn scalar_or_empty(value: &Value) -> String {
    match value {
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => scalar(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn math_round_ties_go_up() {
        assert_eq!(math_round(2.5), 3.0);
        assert_eq!(math_round(-2.5), -2.0);
        assert_eq!(math_round(0.49999999999999994), 0.0);
        assert_eq!(round(98.14814814814815, 1), 98.1);
        assert_eq!(round(0.0014597, 6), 0.00146);
    }

    #[test]
    fn number_strings_follow_ecmascript() {
        for (x, js) in [
            (100.0, "100"),
            (98.1, "98.1"),
            (0.000937, "0.000937"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (1e21, "1e+21"),
            (123456789012345680000.0, "123456789012345680000"),
            (-0.0, "0"),
            (-12.25, "-12.25"),
            (4076.4, "4076.4"),
        ] {
            assert_eq!(to_string(x), js, "for {x:e}");
        }
    }

    #[test]
    fn to_fixed_breaks_exact_ties_upwards() {
        assert_eq!(to_fixed(0.125, 2), "0.13");
        assert_eq!(to_fixed(2.5, 0), "3");
        assert_eq!(to_fixed(9.95, 1), "9.9"); // 9.95 is really 9.949999...
        assert_eq!(to_fixed(99.95, 1), "100.0"); // 99.95 is really 99.9500000000000028...
        assert_eq!(to_fixed(-0.375, 2), "-0.38");
        assert_eq!(to_fixed(74.1, 1), "74.1");
        assert_eq!(to_fixed(0.421211, 4), "0.4212");
        assert_eq!(to_fixed(100.0, 1), "100.0");
        assert_eq!(to_fixed(1e21, 2), format!("{:.2}", 1e21));
        assert_eq!(to_fixed(5e-324, 3), "0.000");
    }

    #[test]
    fn the_tie_prefilter_agrees_with_the_exact_expansion() {
        // Every value the prefilter skips must also be no tie by the exact test.
        let exact_tie = |x: f64, digits: usize| {
            let exact = format!("{:.1074}", x.abs());
            let frac = exact.split_once('.').unwrap().1.trim_end_matches('0');
            frac.len() == digits + 1 && frac.ends_with('5')
        };
        let mut rng = fastrand::Rng::with_seed(12);
        for _ in 0..20_000 {
            let digits = rng.usize(0..8);
            let x = match rng.u8(0..4) {
                0 => rng.i64(-100_000..100_000) as f64 / 10f64.powi(rng.i32(0..9)),
                1 => rng.i64(-4096..4096) as f64 / 2f64.powi(rng.i32(0..12)),
                2 => (rng.f64() - 0.5) * 10f64.powi(rng.i32(-6..25)),
                _ => f64::from_bits(rng.u64(..)),
            };
            if x.is_finite() && exact_tie(x, digits) {
                assert!(may_be_tie(x, digits), "{x} to {digits} places is a tie the prefilter missed");
            }
        }
        assert!(may_be_tie(0.125, 2) && may_be_tie(2.5, 0) && !may_be_tie(3.0, 1) && !may_be_tie(0.1, 1));
    }

    #[test]
    fn json_uses_tabs_and_integral_numbers() {
        let v = serde_json::json!({"a": 100.0, "b": [0.5, 2], "c": {}, "d": [{"e": []}]});
        let text = to_json_string(&v).unwrap();
        assert_eq!(
            text,
            "{\n\t\"a\": 100,\n\t\"b\": [0.5, 2],\n\t\"c\": {},\n\t\"d\": [\n\t\t{\n\t\t\t\"e\": []\n\t\t}\n\t]\n}\n"
        );
    }

    #[test]
    fn arrays_break_when_the_line_would_pass_120_columns() {
        let long: Vec<String> = (0..12).map(|i| format!("read_file_{i}")).collect();
        let text = to_json_string(&serde_json::json!({ "tool_list": long })).unwrap();
        assert!(text.contains("\"tool_list\": [\n\t\t\"read_file_0\",\n"), "{text}");
        let short = vec!["read_file"; 3];
        let text = to_json_string(&serde_json::json!({ "tool_list": short })).unwrap();
        assert!(text.contains("\"tool_list\": [\"read_file\", \"read_file\", \"read_file\"]"), "{text}");
    }
}

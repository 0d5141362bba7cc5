//! Numbers as JSON text, without allocation.
//!
//! Integers are written from the back two digits at a time (the itoa approach). Floats go
//! through zmij, the formatter serde_json uses, because `core::fmt` differs from it: it never
//! uses an exponent (`1e16` comes out as seventeen digits), writes `1` for `1.0`, and rounds
//! ties the other way when seventeen digits are needed.

use super::sink::Sink;

const PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Room for any `u128` (39 digits) plus a sign.
const INT_BUF: usize = 40;

/// Writes the digits of `n` so they end just before `end`; returns where they start.
#[inline]
fn digits_before(mut n: u64, buf: &mut [u8; INT_BUF], mut end: usize) -> usize {
    while n >= 10_000 {
        let rem = (n % 10_000) as usize;
        n /= 10_000;
        let (hi, lo) = (rem / 100 * 2, rem % 100 * 2);
        end -= 4;
        buf[end..end + 2].copy_from_slice(&PAIRS[hi..hi + 2]);
        buf[end + 2..end + 4].copy_from_slice(&PAIRS[lo..lo + 2]);
    }
    let mut n = n as usize;
    if n >= 100 {
        let lo = n % 100 * 2;
        n /= 100;
        end -= 2;
        buf[end..end + 2].copy_from_slice(&PAIRS[lo..lo + 2]);
    }
    if n >= 10 {
        end -= 2;
        buf[end..end + 2].copy_from_slice(&PAIRS[n * 2..n * 2 + 2]);
    } else {
        end -= 1;
        buf[end] = b'0' + n as u8;
    }
    end
}

/// Writes the digits of `n`, with a `-` in front when `negative`, ending at the buffer's end.
fn format_u128(n: u128, negative: bool, buf: &mut [u8; INT_BUF]) -> usize {
    const CHUNK: u128 = 10_000_000_000_000_000_000; // 10^19, fits a u64
    let mut n = n;
    let mut end = INT_BUF;
    // At most two turns: u128::MAX < 10^39.
    while n > u128::from(u64::MAX) {
        let low = (n % CHUNK) as u64;
        n /= CHUNK;
        let start = digits_before(low, buf, end);
        let padded = end - 19;
        buf[padded..start].fill(b'0');
        end = padded;
    }
    let mut start = digits_before(n as u64, buf, end);
    if negative {
        start -= 1;
        buf[start] = b'-';
    }
    start
}

/// Writes an unsigned integer.
#[inline]
pub(crate) fn write_u64<S: Sink + ?Sized>(sink: &mut S, n: u64) -> Result<(), S::Error> {
    if n < 10 {
        return sink.write_byte(b'0' + n as u8);
    }
    let mut buf = [0u8; INT_BUF];
    let start = digits_before(n, &mut buf, INT_BUF);
    sink.write_bytes(&buf[start..])
}

/// Writes a signed integer.
#[inline]
pub(crate) fn write_i64<S: Sink + ?Sized>(sink: &mut S, n: i64) -> Result<(), S::Error> {
    let mut buf = [0u8; INT_BUF];
    let mut start = digits_before(n.unsigned_abs(), &mut buf, INT_BUF);
    if n < 0 {
        start -= 1;
        buf[start] = b'-';
    }
    sink.write_bytes(&buf[start..])
}

/// Writes an unsigned 128-bit integer.
pub(crate) fn write_u128<S: Sink + ?Sized>(sink: &mut S, n: u128) -> Result<(), S::Error> {
    let mut buf = [0u8; INT_BUF];
    let start = format_u128(n, false, &mut buf);
    sink.write_bytes(&buf[start..])
}

/// Writes a signed 128-bit integer.
pub(crate) fn write_i128<S: Sink + ?Sized>(sink: &mut S, n: i128) -> Result<(), S::Error> {
    let mut buf = [0u8; INT_BUF];
    let start = format_u128(n.unsigned_abs(), n < 0, &mut buf);
    sink.write_bytes(&buf[start..])
}

/// Writes a float like serde_json: the same shortest round-trip digits and layout (both use
/// zmij), and `null` when not finite.
pub(crate) fn write_f64<S: Sink + ?Sized>(sink: &mut S, value: f64) -> Result<(), S::Error> {
    if !value.is_finite() {
        return sink.write_bytes(b"null");
    }
    sink.write_bytes(zmij::Buffer::new().format_finite(value).as_bytes())
}

/// Writes an `f32` like serde_json: its own shortest digits, `null` when not finite.
pub(crate) fn write_f32<S: Sink + ?Sized>(sink: &mut S, value: f32) -> Result<(), S::Error> {
    if !value.is_finite() {
        return sink.write_bytes(b"null");
    }
    sink.write_bytes(zmij::Buffer::new().format_finite(value).as_bytes())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;
    use std::vec::Vec;

    use super::*;
    use crate::wire::encode::SliceSink;

    fn text(write: impl FnOnce(&mut SliceSink<'_>)) -> std::string::String {
        let mut buf = [0u8; 64];
        let mut sink = SliceSink::new(&mut buf);
        write(&mut sink);
        core::str::from_utf8(sink.written()).unwrap().to_string()
    }

    #[test]
    fn integers_match_core_formatting_at_the_edges() {
        let mut values: Vec<u128> = Vec::new();
        for p in 0..39u32 {
            let base = 10u128.pow(p);
            values.extend([base - 1, base, base + 1]);
        }
        values.extend([u128::from(u64::MAX), u128::from(u64::MAX) + 1, u128::MAX]);
        for v in values {
            assert_eq!(text(|s| write_u128(s, v).unwrap()), v.to_string());
            if let Ok(small) = u64::try_from(v) {
                assert_eq!(text(|s| write_u64(s, small).unwrap()), v.to_string());
            }
            if let Ok(signed) = i64::try_from(v) {
                assert_eq!(
                    text(|s| write_i64(s, -signed).unwrap()),
                    (-signed).to_string()
                );
            }
            if let Ok(signed) = i128::try_from(v) {
                assert_eq!(
                    text(|s| write_i128(s, -signed).unwrap()),
                    (-signed).to_string()
                );
            }
        }
        assert_eq!(
            text(|s| write_i64(s, i64::MIN).unwrap()),
            i64::MIN.to_string()
        );
        assert_eq!(
            text(|s| write_i128(s, i128::MIN).unwrap()),
            i128::MIN.to_string()
        );
    }

    #[test]
    fn floats_use_serde_jsons_layout() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (0.1, "0.1"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (0.00001, "0.00001"),
            (1.5e-7, "1.5e-7"),
            // Exactly 27670962301176.5625: a tie at 17 digits, rounded to even.
            (
                f64::from_bits(4_807_920_969_126_049_936),
                "27670962301176.562",
            ),
            (f64::NAN, "null"),
            (f64::INFINITY, "null"),
        ];
        for &(value, expected) in cases {
            assert_eq!(
                text(|s| write_f64(s, value).unwrap()),
                expected,
                "{value:e}"
            );
        }
        assert_eq!(text(|s| write_f32(s, 0.1).unwrap()), "0.1");
        assert_eq!(text(|s| write_f32(s, f32::NEG_INFINITY).unwrap()), "null");
    }
}

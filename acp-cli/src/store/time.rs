//! Wall-clock timestamps as Agentao writes them: ISO 8601 with microseconds and a UTC offset.
//!
//! The store never reads the clock itself: callers pass `now` to every save, so tests are
//! deterministic. [`Timestamp::now`] is the one place the real clock is read, for the agent.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A point in time: microseconds since the Unix epoch, UTC.
///
/// Ordered, so "newest" is a plain comparison even when the files were written with different
/// UTC offsets (Agentao writes local time with its offset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i64);

const MICROS_PER_SECOND: i64 = 1_000_000;
const SECONDS_PER_DAY: i64 = 86_400;

impl Timestamp {
    /// The real wall clock. Only the agent calls this; tests pass fixed timestamps.
    pub(crate) fn now() -> Self {
        match SystemTime::now().duration_since(UNIX_EPOCH) {
            Ok(since) => Self(i64::try_from(since.as_micros()).unwrap_or(i64::MAX)),
            Err(before) => Self(-i64::try_from(before.duration().as_micros()).unwrap_or(i64::MAX)),
        }
    }

    /// From whole seconds since the epoch (handy in tests).
    pub const fn from_unix_seconds(seconds: i64) -> Self {
        Self(seconds * MICROS_PER_SECOND)
    }

    /// The ISO 8601 form Agentao writes: `2026-11-21T07:19:08.123456+00:00`.
    pub fn to_iso(self) -> String {
        let civil = Civil::of(self);
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:06}+00:00",
            civil.year,
            civil.month,
            civil.day,
            civil.hour,
            civil.minute,
            civil.second,
            civil.micros
        )
    }

    /// The compact form Agentao uses for file names: `20261121_071908_123456` (UTC here).
    pub fn file_stamp(self) -> String {
        let civil = Civil::of(self);
        format!(
            "{:04}{:02}{:02}_{:02}{:02}{:02}_{:06}",
            civil.year,
            civil.month,
            civil.day,
            civil.hour,
            civil.minute,
            civil.second,
            civil.micros
        )
    }

    /// Reads `YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|±HH:MM|±HHMM]`, the forms Python's
    /// `isoformat()` produces. No offset means UTC. `None` for anything else.
    pub fn parse_iso(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() < 19 || !text.is_ascii() {
            return None;
        }
        let year = digits(&bytes[0..4])?;
        let month = digits(&bytes[5..7])?;
        let day = digits(&bytes[8..10])?;
        let hour = digits(&bytes[11..13])?;
        let minute = digits(&bytes[14..16])?;
        let second = digits(&bytes[17..19])?;
        let separators_ok = bytes[4] == b'-'
            && bytes[7] == b'-'
            && matches!(bytes[10], b'T' | b't' | b' ')
            && bytes[13] == b':'
            && bytes[16] == b':';
        if !separators_ok
            || !(1..=12).contains(&month)
            || day == 0
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return None;
        }
        let mut rest = &text[19..];
        let mut micros = 0i64;
        if let Some(fraction) = rest.strip_prefix('.') {
            let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if len == 0 || len > 9 {
                return None;
            }
            let first_six = &fraction[..len.min(6)];
            micros = digits(first_six.as_bytes())? * 10i64.pow(6 - first_six.len() as u32);
            rest = &fraction[len..];
        }
        let offset_seconds = match rest {
            "" | "Z" | "z" => 0,
            _ => parse_offset(rest)?,
        };
        let days = days_from_civil(year, month, day);
        let seconds = days * SECONDS_PER_DAY + hour * 3600 + minute * 60 + second - offset_seconds;
        Some(Self(seconds * MICROS_PER_SECOND + micros))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_iso())
    }
}

/// A timestamp split into UTC calendar fields.
struct Civil {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    micros: i64,
}

impl Civil {
    fn of(at: Timestamp) -> Self {
        let seconds = at.0.div_euclid(MICROS_PER_SECOND);
        let micros = at.0.rem_euclid(MICROS_PER_SECOND);
        let days = seconds.div_euclid(SECONDS_PER_DAY);
        let in_day = seconds.rem_euclid(SECONDS_PER_DAY);
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: in_day / 3600,
            minute: in_day % 3600 / 60,
            second: in_day % 60,
            micros,
        }
    }
}

fn digits(bytes: &[u8]) -> Option<i64> {
    if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(bytes.iter().fold(0, |n, b| n * 10 + i64::from(b - b'0')))
}

/// `+HH:MM`, `-HH:MM` or `+HHMM`, as seconds east of UTC.
fn parse_offset(text: &str) -> Option<i64> {
    let sign = match text.as_bytes().first()? {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let body = &text.as_bytes()[1..];
    let (hours, minutes) = match body.len() {
        5 if body[2] == b':' => (digits(&body[0..2])?, digits(&body[3..5])?),
        4 => (digits(&body[0..2])?, digits(&body[2..4])?),
        _ => return None,
    };
    if hours > 23 || minutes > 59 {
        return None;
    }
    Some(sign * (hours * 3600 + minutes * 60))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the era-based method: 400-year eras
/// of 146 097 days, years starting in March so the leap day comes last).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

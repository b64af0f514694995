//! Today's date (UTC) as `YYYY-MM-DD`, for the `last-reviewed` field of a new design
//! doc, without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// Today's date in UTC.
pub fn today_utc() -> String {
    let seconds = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((seconds / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, exact over the whole `i64` day range used here).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], March = 0
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29)); // a leap day of a century leap year
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(20_786), (2026, 11, 29));
        assert_eq!(civil_from_days(20_820), (2027, 1, 2));
    }

    fn days_in_month(y: i64, m: u32) -> u32 {
        let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
        match m {
            2 if leap => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        }
    }

    #[test]
    fn consecutive_days_are_consecutive_dates() {
        let mut previous = civil_from_days(-800_000);
        for day in -799_999..800_000 {
            let date = civil_from_days(day);
            let (y, m, d) = previous;
            let next_in_month = (y, m, d + 1);
            let next_month = if m == 12 {
                (y + 1, 1, 1)
            } else {
                (y, m + 1, 1)
            };
            let expected = if d == days_in_month(y, m) {
                next_month
            } else {
                next_in_month
            };
            assert_eq!(date, expected, "the day after {previous:?}");
            previous = date;
        }
    }
}

//! When the next run is due, in local time of an IANA zone, across DST changes.
//!
//! Occurrences come from croner's search in the zone's local time. A time
//! that does not exist on the day clocks go forward (02:30 in Berlin on
//! 2026-03-29) runs at the first instant after the gap (03:00 local); a time
//! that happens twice on the day clocks go back runs once, at the first.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use croner::Cron;

/// A parsed cron expression in a time zone.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: Cron,
    tz: Tz,
}

/// What the daemon should do now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Run the job for this local date (its time has come and it has not run that date).
    RunNow {
        /// The local date the run is for.
        date: NaiveDate,
    },
    /// Nothing is due before this instant.
    SleepUntil(DateTime<Utc>),
}

/// Why a schedule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The zone is not in the IANA database.
    #[error(
        "`{0}` is not an IANA time zone; expected a name such as \"Europe/Berlin\" or \"UTC\""
    )]
    TimeZone(String),
    /// Not five fields.
    #[error("`{0}` is not a five-field cron expression; expected `minute hour day-of-month month day-of-week`, e.g. \"0 7 * * 1-5\"")]
    Fields(String),
    /// croner refused it.
    #[error(
        "`{expression}` is not a valid cron expression ({reason}); expected e.g. \"0 7 * * 1-5\""
    )]
    Cron {
        /// The expression.
        expression: String,
        /// croner's explanation.
        reason: String,
    },
    /// It names no real day (30 February).
    #[error("`{0}` never occurs (no such day in any year); expected e.g. \"0 7 * * 1-5\"")]
    NeverOccurs(String),
}

/// How far ahead occurrences are searched for one the state allows.
const MAX_OCCURRENCES_SKIPPED: usize = 1000;

impl Schedule {
    /// Parses a five-field cron expression (`minute hour day-of-month month
    /// day-of-week`) and an IANA time-zone name.
    pub fn new(expression: &str, time_zone: &str) -> Result<Self, ScheduleError> {
        let tz: Tz = time_zone
            .parse()
            .map_err(|_| ScheduleError::TimeZone(time_zone.to_string()))?;
        if expression.split_whitespace().count() != 5 {
            return Err(ScheduleError::Fields(expression.to_string()));
        }
        let cron: Cron = expression.parse().map_err(|e| ScheduleError::Cron {
            expression: expression.to_string(),
            reason: format!("{e}"),
        })?;
        let schedule = Self { cron, tz };
        // A valid expression may still name no real day (30 February): a
        // daemon on it would never run, so it is refused here.
        if schedule.next_after(Utc::now()).is_none() {
            return Err(ScheduleError::NeverOccurs(expression.to_string()));
        }
        Ok(schedule)
    }

    /// The time zone.
    pub fn time_zone(&self) -> Tz {
        self.tz
    }

    /// The local date of `instant` in the schedule's zone.
    pub fn local_date(&self, instant: DateTime<Utc>) -> NaiveDate {
        instant.with_timezone(&self.tz).date_naive()
    }

    /// The first occurrence strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = after.with_timezone(&self.tz);
        self.cron
            .find_next_occurrence(&local, false)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    /// The last occurrence at or before `at`.
    pub fn previous_at_or_before(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = at.with_timezone(&self.tz);
        self.cron
            .find_previous_occurrence(&local, true)
            .ok()
            .map(|t| t.with_timezone(&Utc))
    }

    /// Whether an occurrence has come earlier on `now`'s local date (or at `now`).
    pub fn due_today(&self, now: DateTime<Utc>) -> bool {
        self.previous_at_or_before(now)
            .is_some_and(|previous| self.local_date(previous) == self.local_date(now))
    }

    /// Decides what to do at `now` given the local date of the last run.
    ///
    /// If today's occurrence has passed and the job has not run today or
    /// later, it runs now (a daemon that was down at the scheduled time
    /// catches up the same day, never twice). Otherwise it sleeps until the
    /// next occurrence on a local date after the last run's. A last run dated
    /// after today means the clock went back: nothing runs again until the
    /// clock has passed that date.
    pub fn plan(&self, now: DateTime<Utc>, last_run: Option<NaiveDate>) -> Option<Step> {
        let today = self.local_date(now);
        if last_run.is_none_or(|last| last < today) {
            if let Some(previous) = self.previous_at_or_before(now) {
                if self.local_date(previous) == today {
                    return Some(Step::RunNow { date: today });
                }
            }
        }
        let mut after = now;
        if let Some(last) = last_run.filter(|last| *last >= today) {
            // Start the search at the end of the last run's date: a schedule that fires
            // every minute would otherwise step through the rest of today's minutes,
            // more than the search allows before 07:20 UTC.
            let end_of_last = last
                .and_hms_opt(23, 59, 59)
                .and_then(|t| t.and_local_timezone(self.tz).latest())
                .map(|t| t.with_timezone(&Utc));
            after = end_of_last.map_or(now, |t| t.max(now));
        }
        for _ in 0..MAX_OCCURRENCES_SKIPPED {
            let next = self.next_after(after)?;
            if last_run.is_none_or(|last| self.local_date(next) > last) {
                return Some(Step::SleepUntil(next));
            }
            after = next;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn date(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn daily_time_keeps_local_clock_across_spring_forward() {
        let s = Schedule::new("0 7 * * *", "Europe/Berlin").unwrap();
        // 07:00 CET = 06:00 UTC before the change, 07:00 CEST = 05:00 UTC after.
        assert_eq!(
            s.next_after(utc("2026-03-28T06:30:00Z")),
            Some(utc("2026-03-29T05:00:00Z"))
        );
        assert_eq!(
            s.next_after(utc("2026-03-27T07:00:00Z")),
            Some(utc("2026-03-28T06:00:00Z"))
        );
    }

    #[test]
    fn daily_time_keeps_local_clock_across_fall_back() {
        let s = Schedule::new("0 7 * * *", "Europe/Berlin").unwrap();
        assert_eq!(
            s.next_after(utc("2026-10-24T06:00:00Z")),
            Some(utc("2026-10-25T06:00:00Z"))
        );
        assert_eq!(
            s.next_after(utc("2026-10-25T06:00:00Z")),
            Some(utc("2026-10-26T06:00:00Z"))
        );
    }

    #[test]
    fn time_in_the_spring_gap_runs_right_after_it() {
        let s = Schedule::new("30 2 * * *", "Europe/Berlin").unwrap();
        // 02:30 does not exist on 2026-03-29; 03:00 CEST = 01:00 UTC is the first instant after the gap.
        let next = s.next_after(utc("2026-03-28T12:00:00Z")).unwrap();
        assert_eq!(s.local_date(next), date("2026-03-29"));
        assert_eq!(next, utc("2026-03-29T01:00:00Z"));
        // And the day after it is 02:30 CEST again.
        assert_eq!(s.next_after(next), Some(utc("2026-03-30T00:30:00Z")));
    }

    #[test]
    fn time_in_the_autumn_overlap_runs_once() {
        let s = Schedule::new("30 2 * * *", "Europe/Berlin").unwrap();
        // 02:30 happens twice on 2026-10-25: first at 00:30 UTC (CEST), then 01:30 UTC (CET).
        let first = s.next_after(utc("2026-10-24T12:00:00Z")).unwrap();
        assert_eq!(first, utc("2026-10-25T00:30:00Z"));
        let second = s.next_after(first).unwrap();
        assert_eq!(
            s.local_date(second),
            date("2026-10-26"),
            "ran twice on the overlap day: {second}"
        );
    }

    #[test]
    fn plan_after_a_run_today_skips_to_tomorrow_on_a_frequent_schedule() {
        // Every minute: 1 317 occurrences are left today at 02:02, more than the
        // search steps through one by one.
        let s = Schedule::new("* * * * *", "UTC").unwrap();
        let now = utc("2026-12-01T02:02:39Z");
        assert_eq!(
            s.plan(now, Some(date("2026-12-01"))),
            Some(Step::SleepUntil(utc("2026-12-02T00:00:00Z")))
        );
        assert_eq!(
            s.plan(now, Some(date("2026-11-30"))),
            Some(Step::RunNow {
                date: date("2026-12-01")
            })
        );
    }

    #[test]
    fn plan_runs_at_most_once_per_local_date() {
        let s = Schedule::new("0 7 * * *", "Europe/Berlin").unwrap();
        let now = utc("2026-11-29T09:00:00Z"); // 10:00 in Berlin, after today's 07:00
        assert_eq!(
            s.plan(now, None),
            Some(Step::RunNow {
                date: date("2026-11-29")
            })
        );
        assert_eq!(
            s.plan(now, Some(date("2026-11-28"))),
            Some(Step::RunNow {
                date: date("2026-11-29")
            })
        );
        // Already ran today (e.g. before a restart): wait for tomorrow 07:00 CET.
        assert_eq!(
            s.plan(now, Some(date("2026-11-29"))),
            Some(Step::SleepUntil(utc("2026-11-30T06:00:00Z")))
        );
        // Before today's time: sleep until it.
        let early = utc("2026-11-29T05:00:00Z");
        assert_eq!(
            s.plan(early, None),
            Some(Step::SleepUntil(utc("2026-11-29T06:00:00Z")))
        );
    }

    #[test]
    fn plan_uses_the_local_date_not_the_utc_date() {
        let s = Schedule::new("30 0 * * *", "Asia/Tokyo").unwrap();
        // 2026-11-29T15:45Z is 00:45 on 2026-11-30 in Tokyo: the 00:30 run for the 30th is due.
        let now = Utc.with_ymd_and_hms(2026, 11, 29, 15, 45, 0).unwrap();
        assert_eq!(
            s.plan(now, Some(date("2026-11-29"))),
            Some(Step::RunNow {
                date: date("2026-11-30")
            })
        );
    }

    #[test]
    fn a_clock_that_went_back_does_not_run_again() {
        let s = Schedule::new("0 7 * * *", "Europe/Berlin").unwrap();
        let now = utc("2026-11-29T09:00:00Z"); // after today's 07:00
                                               // The state says the review already ran on 2026-12-01: the clock went back.
        assert_eq!(
            s.plan(now, Some(date("2026-12-01"))),
            Some(Step::SleepUntil(utc("2026-12-02T06:00:00Z")))
        );
        let minutely = Schedule::new("* * * * *", "UTC").unwrap();
        assert_eq!(
            minutely.plan(now, Some(date("2027-06-01"))),
            Some(Step::SleepUntil(utc("2027-06-02T00:00:00Z")))
        );
    }

    #[test]
    fn due_today_follows_local_time_across_the_year() {
        // The doc-review workflow runs at 05:00 and 06:00 UTC on weekdays; the
        // config says 07:00 in Berlin. Exactly one of the two is due-and-first.
        let s = Schedule::new("0 7 * * 1-5", "Europe/Berlin").unwrap();
        // Winter (CET, UTC+1): 05:00 UTC is 06:00 local, not yet; 06:00 UTC is 07:00.
        assert!(!s.due_today(utc("2026-12-01T05:00:00Z")));
        assert!(s.due_today(utc("2026-12-01T06:00:00Z")));
        // Summer (CEST, UTC+2): 05:00 UTC is 07:00 local.
        assert!(s.due_today(utc("2026-07-01T05:00:00Z")));
        // Saturday.
        assert!(!s.due_today(utc("2026-12-05T06:00:00Z")));
    }

    #[test]
    fn a_day_that_never_comes_is_refused() {
        let e = Schedule::new("0 7 30 2 *", "UTC").unwrap_err();
        assert!(e.to_string().contains("never occurs"), "{e}");
        assert!(Schedule::new("0 7 29 2 *", "UTC").is_ok());
    }

    #[test]
    fn bad_input_is_explained() {
        assert!(Schedule::new("0 7 * * *", "Mars/Olympus")
            .unwrap_err()
            .to_string()
            .contains("time zone"));
        assert!(Schedule::new("daily", "UTC")
            .unwrap_err()
            .to_string()
            .contains("five-field"));
        assert!(Schedule::new("61 7 * * *", "UTC")
            .unwrap_err()
            .to_string()
            .contains("not a valid cron"));
    }
}

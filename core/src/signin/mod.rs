//! Daily sign-in: one bit per day in a per-user, per-month Redis BITMAP
//! ([`CityKeys::sign_month`]), day 1 the highest bit of the first byte, so a
//! month reads back as one integer from one `BITFIELD GET u<days> 0`.
//!
//! - Days are UTC dates; the API signs today only.
//! - Signing a day twice changes nothing: `SETBIT` answers the bit it found.
//! - A streak counts within one month (one key per month): it restarts on
//!   the 1st. The current month's streak ends today, or yesterday while
//!   today is not signed yet (signing in the evening does not break it in
//!   the morning); a past month's ends on its last day.
//! - Redis is the only copy, as in the design this follows: a Redis that
//!   lost its data forgets sign-ins. They carry no money and no stock;
//!   keeping them across a restart is Redis persistence's job.

use chrono::{Datelike, NaiveDate};

use crate::ids::UserId;
use crate::kv::{CityKeys, Kv};

/// A calendar month (UTC), written `YYYY-MM`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Month {
    pub year: i32,
    pub month: u32,
}

impl Month {
    pub fn of(day: NaiveDate) -> Self {
        Self { year: day.year(), month: day.month() }
    }

    /// `YYYY-MM`, years 2000 to 9999; anything else is `None`.
    pub fn parse(raw: &str) -> Option<Self> {
        let (year, month) = raw.split_once('-')?;
        if year.len() != 4 || month.len() != 2 || !(year.bytes().chain(month.bytes()).all(|b| b.is_ascii_digit())) {
            return None;
        }
        let (year, month) = (year.parse().ok()?, month.parse().ok()?);
        ((2000..=9999).contains(&year) && (1..=12).contains(&month)).then_some(Self { year, month })
    }

    /// How many days it has.
    pub fn days(self) -> u32 {
        let first = NaiveDate::from_ymd_opt(self.year, self.month, 1).expect("a parsed month");
        let next = first.checked_add_months(chrono::Months::new(1)).expect("a month after");
        (next - first).num_days() as u32
    }
}

impl std::fmt::Display for Month {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

/// A month's sign-ins as far as they can exist on `today`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonthSigns {
    pub month: Month,
    /// Days of the month signed, ascending.
    pub days: Vec<u32>,
    /// Consecutive signed days ending on the month's streak day (see the module doc).
    pub streak: u32,
}

/// Why a month cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("month {0} has not begun")]
    FutureMonth(Month),
    #[error(transparent)]
    Redis(#[from] redis::RedisError),
}

/// Signs and reads sign-ins. Clone freely.
#[derive(Clone)]
pub struct SignIns {
    kv: Kv,
}

impl SignIns {
    pub fn new(kv: Kv) -> Self {
        Self { kv }
    }

    /// Signs `day` for `user`; true when it was not signed before.
    pub async fn sign(&self, user: UserId, day: NaiveDate) -> Result<bool, SignError> {
        let key = self.kv.keys.sign_month(user, &Month::of(day).to_string());
        let was: u8 = redis::cmd("SETBIT").arg(key).arg(day.day0()).arg(1).query_async(&mut self.kv.conn()).await?;
        Ok(was == 0)
    }

    /// `user`'s sign-ins of `month` as they stand on `today`, in one round trip.
    pub async fn month(&self, user: UserId, month: Month, today: NaiveDate) -> Result<MonthSigns, SignError> {
        let this = Month::of(today);
        if month > this {
            return Err(SignError::FutureMonth(month));
        }
        // Only days up to today can be signed; the current month's streak may end yesterday.
        let known = if month == this { today.day() } else { month.days() };
        let key = self.kv.keys.sign_month(user, &month.to_string());
        let (bits,): (Option<u64>,) = redis::cmd("BITFIELD")
            .arg(key)
            .arg("GET")
            .arg(format!("u{known}"))
            .arg(0)
            .query_async(&mut self.kv.conn())
            .await?;
        let (days, streak) = read(bits.unwrap_or(0), known, month == this);
        Ok(MonthSigns { month, days, streak })
    }
}

/// The signed days among the first `known` days of a month, from `bits`
/// (day 1 the highest of `known` bits), and the streak ending on day
/// `known`, or on the day before when `known` is today and not signed.
pub fn read(bits: u64, known: u32, known_is_today: bool) -> (Vec<u32>, u32) {
    let signed = |day: u32| day >= 1 && day <= known && (bits >> (known - day)) & 1 == 1;
    let days: Vec<u32> = (1..=known).filter(|&d| signed(d)).collect();
    let last = if known_is_today && !signed(known) { known - 1 } else { known };
    let streak = (1..=last).rev().take_while(|&d| signed(d)).count() as u32;
    (days, streak)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bits of a month's first `known` days, signed on `days`.
    fn bits(days: &[u32], known: u32) -> u64 {
        days.iter().fold(0, |b, d| b | 1 << (known - d))
    }

    #[test]
    fn a_month_with_gaps_reads_back_its_days_and_the_streak_that_ends_it() {
        let signed = [1, 2, 3, 5, 6, 8, 28, 29, 30];
        assert_eq!(read(bits(&signed, 30), 30, false), (signed.to_vec(), 3));
        // The streak is broken by the last day missing.
        assert_eq!(read(bits(&[1, 2, 3, 29], 30), 30, false).1, 0);
    }

    #[test]
    fn todays_streak_counts_up_to_yesterday_until_today_is_signed() {
        // Today is the 10th: signed the 7th to the 9th.
        assert_eq!(read(bits(&[2, 7, 8, 9], 10), 10, true), (vec![2, 7, 8, 9], 3));
        // Signed today too.
        assert_eq!(read(bits(&[7, 8, 9, 10], 10), 10, true).1, 4);
        // Yesterday missed: a new streak of today alone, or none.
        assert_eq!(read(bits(&[8, 10], 10), 10, true).1, 1);
        assert_eq!(read(bits(&[8], 10), 10, true).1, 0);
        // The 1st, unsigned: nothing before it in this month.
        assert_eq!(read(0, 1, true), (vec![], 0));
        assert_eq!(read(1, 1, true), (vec![1], 1));
    }

    #[test]
    fn months_parse_strictly_and_know_their_length() {
        assert_eq!(Month::parse("2026-02"), Some(Month { year: 2026, month: 2 }));
        assert_eq!(Month::parse("2026-02").unwrap().days(), 28);
        assert_eq!(Month::parse("2028-02").unwrap().days(), 29);
        assert_eq!(Month::parse("2026-12").unwrap().days(), 31);
        assert_eq!(Month { year: 2026, month: 3 }.to_string(), "2026-03");
        for bad in
            ["", "2026", "2026-13", "2026-00", "2026-1", "26-01", "2026-01-01", "+026-01", "1999-12", "２０２６-01"]
        {
            assert_eq!(Month::parse(bad), None, "{bad:?}");
        }
    }
}

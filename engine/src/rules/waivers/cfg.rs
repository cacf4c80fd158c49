//! `waivers:` in conformance.yaml, validated beside the waivers pass: the
//! rule must exist and the expiry must be a date.

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::config_error::{ConfigError, error_at};

/// A waiver: a finding that is accepted until a date.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Waiver {
    /// The id of the rule whose findings it accepts.
    pub rule: Spanned<String>,
    /// The cluster it covers (by discovered name); every cluster when unset.
    #[serde(default)]
    pub cluster: Option<String>,
    /// The Kustomization it covers, as the cluster labels it; every one when unset.
    #[serde(default)]
    pub kustomization: Option<String>,
    /// `Kind/namespace/name` or `Kind/name`.
    #[serde(default)]
    pub object: Option<String>,
    /// Why its findings are accepted (reports quote it).
    pub reason: String,
    /// `YYYY-MM-DD`: the last day the waiver applies.
    pub expires: Spanned<String>,
}

/// Every waiver problem: unknown rules, bad dates.
pub fn validate(
    waivers: &[Waiver],
    rule_ids: &dyn Fn(&str) -> bool,
    problems: &mut Vec<ConfigError>,
) {
    for waiver in waivers {
        if !rule_ids(&waiver.rule.value) {
            problems.push(error_at(
                &waiver.rule,
                format!("waiver for unknown rule `{}`", waiver.rule.value),
            ));
        }
        if Date::parse(&waiver.expires.value).is_none() {
            problems.push(error_at(
                &waiver.expires,
                format!(
                    "expires `{}` is not a YYYY-MM-DD date of the calendar",
                    waiver.expires.value
                ),
            ));
        }
    }
}

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    /// Year.
    pub year: i32,
    /// Month, 1 to 12.
    pub month: u32,
    /// Day of the month, 1 to 31.
    pub day: u32,
}

impl Date {
    /// Reads a `YYYY-MM-DD` date; `None` when it is not one.
    pub fn parse(text: &str) -> Option<Date> {
        // Exactly four, two and two digits: `99999999-01-01` is a typo,
        // not a waiver for ever.
        let shape = text.trim().split('-').map(str::len).collect::<Vec<_>>();
        if shape != [4, 2, 2] || !text.trim().bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            return None;
        }
        let mut parts = text.trim().split('-');
        let year = parts.next()?.parse().ok()?;
        let month = parts.next()?.parse().ok()?;
        let day = parts.next()?.parse().ok()?;
        if parts.next().is_some()
            || !(1..=12).contains(&month)
            || !(1..=Date::days_in_month(year, month)).contains(&day)
        {
            return None;
        }
        Some(Date { year, month, day })
    }

    /// Days in the month of the Gregorian calendar (February 29 only in a
    /// leap year: every fourth, except centuries not divisible by 400).
    fn days_in_month(year: i32, month: u32) -> u32 {
        match month {
            4 | 6 | 9 | 11 => 30,
            2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
            2 => 28,
            _ => 31,
        }
    }

    /// Today (UTC), or `CONFORMANCE_TODAY` (YYYY-MM-DD) when set, so runs and
    /// tests can be pinned to a date.
    pub fn today() -> Date {
        if let Some(d) = std::env::var("CONFORMANCE_TODAY")
            .ok()
            .and_then(|t| Date::parse(&t))
        {
            return d;
        }
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Date::from_days((secs / 86_400) as i64)
    }

    /// The civil date of a day count since 1970-01-01 (Hinnant's algorithm).
    fn from_days(z: i64) -> Date {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date { year, month, day }
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(Date::from_days(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_days(20_787).to_string(), "2026-11-30");
        assert!(Date::parse("2026-12-31").unwrap() > Date::parse("2026-11-30").unwrap());
        // Issue 26: impossible days were accepted.
        assert_eq!(Date::parse("2024-02-30"), None);
        assert_eq!(Date::parse("2023-02-29"), None);
        assert_eq!(Date::parse("2026-04-31"), None);
        assert_eq!(Date::parse("1900-02-29"), None);
        assert!(Date::parse("2024-02-29").is_some());
        assert!(Date::parse("2000-02-29").is_some());
    }
}

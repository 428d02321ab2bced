//! The schedule check names the bad field of an expression.

use super::check_schedule;
use chrono::{TimeZone, Utc};

#[test]
fn good_expressions_parse_and_fire_when_expected() {
    let s = check_schedule("*/15 9 * * Mon-Fri").unwrap();
    let after = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
    let next = super::next_times(&s, after, 5);
    let shown: Vec<String> = next.iter().map(chrono::DateTime::to_rfc3339).collect();
    assert_eq!(
        shown,
        [
            "2026-01-01T09:00:00+00:00",
            "2026-01-01T09:15:00+00:00",
            "2026-01-01T09:30:00+00:00",
            "2026-01-01T09:45:00+00:00",
            "2026-01-02T09:00:00+00:00",
        ]
    );
    assert!(check_schedule("0 0 12 * * *").is_ok());
    assert!(check_schedule("0 0 12 * * * 2030").is_ok());
}

#[test]
fn a_bad_expression_names_its_bad_field() {
    let table: &[(&str, Option<&str>)] = &[
        ("61 * * * *", Some("minute")),
        ("* 25 * * *", Some("hour")),
        ("* * 32 * *", Some("day of month")),
        ("* * * 13 *", Some("month")),
        ("* * * * Funday", Some("day of week")),
        ("70 * * * * *", Some("second")),
        ("0 * * * * * 1492x", Some("year")),
        ("* * *", None),
        ("", None),
        ("* * * * * * * *", None),
    ];
    for (expr, field) in table {
        let e = check_schedule(expr).expect_err(expr);
        assert_eq!(e.field, *field, "{expr}: {e}");
        if let Some(f) = field {
            assert!(e.to_string().starts_with(&format!("{f} field: ")), "{e}");
        }
    }
}

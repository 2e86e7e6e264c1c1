//! Times as people read them.

use std::time::{Duration, UNIX_EPOCH};

/// `ms` (milliseconds since the Unix epoch) as RFC 3339 UTC with milliseconds,
/// `2026-12-01T21:19:27.123Z`.
pub fn format_ms(ms: i64) -> String {
    let since = Duration::from_millis(u64::try_from(ms).unwrap_or(0));
    humantime::format_rfc3339_millis(UNIX_EPOCH + since).to_string()
}

/// A span in seconds as `1h02m`, `4m05s` or `12s`.
pub fn format_span(seconds: i64) -> String {
    let s = seconds.max(0);
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, s) => format!("{s}s"),
        (0, m, s) => format!("{m}m{s:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_rfc3339_utc() {
        assert_eq!(format_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_ms(1_796_160_567_123), "2026-12-01T21:29:27.123Z");
        assert_eq!(format_ms(-5), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn spans_are_short() {
        assert_eq!(format_span(12), "12s");
        assert_eq!(format_span(245), "4m05s");
        assert_eq!(format_span(3720), "1h02m");
        assert_eq!(format_span(-3), "0s");
    }
}

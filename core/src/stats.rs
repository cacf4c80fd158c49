//! Phase timings for benchmarks and profiles: printed on stderr only when
//! `CONFORMANCE_STATS` is set. A leaf, so every layer may time itself.

/// Prints how long `phase` took since `started`, and the resident and
/// peak memory at its end (Linux), when `CONFORMANCE_STATS` is set.
pub fn stat(phase: &str, started: std::time::Instant) {
    if std::env::var_os("CONFORMANCE_STATS").is_some() {
        let memory = match (status_kb("VmRSS:"), status_kb("VmHWM:")) {
            (Some(rss), Some(peak)) => {
                format!(" (rss {} MiB, peak {} MiB)", rss / 1024, peak / 1024)
            }
            _ => String::new(),
        };
        eprintln!(
            "phase {phase}: {:.3}s{memory}",
            started.elapsed().as_secs_f64()
        );
    }
}

/// A `/proc/self/status` field in KiB (`VmRSS:`, `VmHWM:`); `None` off
/// Linux.
pub fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.chars()
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

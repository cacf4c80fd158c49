//! Phase timings for benchmarks and profiles: printed on stderr only when
//! `CONFORMANCE_STATS` is set. A leaf, so every layer may time itself.

/// Prints how long `phase` took since `started`, when `CONFORMANCE_STATS`
/// is set.
pub fn stat(phase: &str, started: std::time::Instant) {
    if std::env::var_os("CONFORMANCE_STATS").is_some() {
        eprintln!("phase {phase}: {:.3}s", started.elapsed().as_secs_f64());
    }
}

//! Progress on a terminal: one line on stderr, rewritten in place, while a
//! long run indexes, builds and checks. Off unless the command line turns
//! it on (it does when stderr is a terminal), so machine formats, pipes,
//! CI logs and tests never see it. A leaf: every layer may report.

use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);

/// When the line was last rewritten: at most ten times a second.
static LAST: Mutex<Option<Instant>> = Mutex::new(None);

/// Turns progress on (the CLI does, when stderr is a terminal).
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Shows `text` as the current step (replacing the last one).
pub fn show(text: &str) {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut last) = LAST.lock() {
        if last.is_some_and(|t| t.elapsed() < Duration::from_millis(100)) {
            return;
        }
        *last = Some(Instant::now());
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K{text}");
    let _ = err.flush();
}

/// Clears the progress line (before the report is printed).
pub fn clear() {
    if !ENABLED.load(Ordering::Relaxed) {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "\r\x1b[2K");
    let _ = err.flush();
}

//! The YAML loader on arbitrary input: it returns documents or an error
//! (with a line), never panics, never runs away (budgets), and what it
//! loads converts to JSON and back (`conformance::fuzzing::loader`, which
//! `cargo test` replays on fuzz/seeds/loader).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| conformance::fuzzing::loader(data));

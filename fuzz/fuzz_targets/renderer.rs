//! The native renderer and Flux's build layer on an arbitrary repository
//! of one tier, never a panic (`conformance::fuzzing::renderer`, which
//! `cargo test` replays on fuzz/seeds/renderer).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| conformance::fuzzing::renderer(data));

//! The bootstrap's script reader (shell parsed with brush-parser,
//! Taskfiles, justfiles, Markdown shell blocks) on arbitrary input: commands
//! and notes, never a panic (`conformance::fuzzing::scripts`, which `cargo
//! test` replays on fuzz/seeds/scripts).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| conformance::fuzzing::scripts(data));

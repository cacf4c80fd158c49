//! Empty: Cargo resolves `[build-dependencies]` only for a package with a
//! build script, and this crate's are there for their features.
fn main() {}

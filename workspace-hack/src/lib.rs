//! Feature unification for the workspace (see its Cargo.toml): no code.

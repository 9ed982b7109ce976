//! Fuzz target `digest`: see `tests/common/fuzz_checks.rs` for the property it checks.
#![no_main]

#[path = "../../tests/common/fuzz_checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::digest(data);
});

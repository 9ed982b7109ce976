//! Fuzz target `guard`: see `tests/common/fuzz_guard.rs` for the property it checks.
#![no_main]

#[path = "../../tests/common/fuzz_guard.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    checks::guard(data);
});

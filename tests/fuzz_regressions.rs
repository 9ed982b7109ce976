//! Every input the fuzzers ever failed on (kept under fuzz/regressions/<target>/) is checked again
//! with the same property, plus a few seeds that exercise each target.

mod common;

use common::fuzz_checks;

fn inputs(target: &str) -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read regression input"))
        .collect()
}

#[test]
fn adapters_regressions() {
    for seed in [
        &b"[]"[..],
        br#"[{"role":"tool","tool_call_id":"x","content":"y"}]"#,
        br#"[{"role":"user","content":"\ud800"}]"#,
    ] {
        fuzz_checks::adapters(seed);
    }
    inputs("adapters")
        .iter()
        .for_each(|d| fuzz_checks::adapters(d));
}

#[test]
fn compression_regressions() {
    fuzz_checks::compression(&[0, b'a', b'\n', 0xff, 0xfe]);
    inputs("compression")
        .iter()
        .for_each(|d| fuzz_checks::compression(d));
}

#[test]
fn planner_regressions() {
    fuzz_checks::planner(&[3, 0, 1, 2, 5, 9, 1, 0, 6, 1, 1, 1, 1, 3, 0, 2, 2]);
    inputs("planner")
        .iter()
        .for_each(|d| fuzz_checks::planner(d));
}

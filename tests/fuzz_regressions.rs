//! Every input the fuzzers ever failed on (kept under fuzz/regressions/<target>/) is checked again
//! with the same property, plus a few seeds that exercise each target.

mod common;

use common::fuzz_checks;

fn regressions_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

/// The saved inputs of one target (dotfiles such as `.keep` aside). A missing folder is an error:
/// a renamed target must not leave its regressions unchecked.
fn inputs(target: &str) -> Vec<Vec<u8>> {
    let dir = regressions_dir().join(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("fuzz regressions folder {}: {e}", dir.display()));
    let mut files: Vec<_> = entries
        .map(|e| e.expect("read regressions folder").path())
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read regression input"))
        .collect()
}

#[test]
fn every_fuzz_target_has_a_regressions_folder() {
    let targets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fuzz_targets");
    let mut names: Vec<String> = std::fs::read_dir(&targets)
        .expect("fuzz/fuzz_targets")
        .map(|e| e.expect("entry").path())
        .filter_map(|p| Some(p.file_stem()?.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["adapters", "compression", "planner"],
        "each target below has a test here"
    );
    for name in names {
        assert!(
            regressions_dir().join(&name).is_dir(),
            "fuzz/regressions/{name} is missing"
        );
    }
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

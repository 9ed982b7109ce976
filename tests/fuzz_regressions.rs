//! Every input the fuzzers ever failed on (kept under fuzz/regressions/<target>/) is checked again
//! with the same property, plus a few seeds that exercise each target.

mod common;

use common::{fuzz_checks, fuzz_guard};

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
        [
            "adapters",
            "compression",
            "digest",
            "failures",
            "guard",
            "planner"
        ],
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
fn digest_regressions() {
    for seed in [
        &b""[..],
        &[200, 0xff, 0x80, b'x'],
        &[1, 0x0f, 0x00, b'a', 0xff, 0x02],
    ] {
        fuzz_checks::digest(seed);
    }
    let saved = inputs("digest");
    assert!(
        !saved.is_empty(),
        "fuzz/regressions/digest holds the seed session"
    );
    for d in &saved {
        fuzz_checks::digest(d);
    }
    // The seed session reaches every part of the digest.
    let d = fuzz_checks::digest(&saved[0]);
    for part in [
        "User turns",
        "Todo list",
        "Files touched",
        "Trimmed tool calls",
    ] {
        assert!(d.contains(part), "{part}: {d}");
    }
}

#[test]
fn failures_regressions() {
    fuzz_checks::failures(&[0, b'e', b'r', b'r', b'o', b'r', b'\n', 0xff]);
    let saved = inputs("failures");
    assert!(
        !saved.is_empty(),
        "fuzz/regressions/failures holds the seed log"
    );
    for d in &saved {
        fuzz_checks::failures(d);
    }
    // The seed cargo log: its failing lines are kept with their numbers, its passing summaries
    // (`0 failed`, `0 errors`) are not.
    assert_eq!(fuzz_checks::failures(&saved[0]), [101, 201, 251]);
}

#[test]
fn planner_regressions() {
    fuzz_checks::planner(&[3, 0, 1, 2, 5, 9, 1, 0, 6, 1, 1, 1, 1, 3, 0, 2, 2]);
    inputs("planner")
        .iter()
        .for_each(|d| fuzz_checks::planner(d));
}

#[test]
fn guard_regressions() {
    // Seeds: queries the guard lets through (checked against SQLite's parse) and ones it refuses.
    for (seed, allowed) in [
        (&b"SELECT count(*) FROM messages"[..], true),
        (b"WITH x(a) AS (SELECT 1) SELECT a FROM x; -- done", true),
        (b"VALUES (1), (2)", true),
        (b"SELECT 1; DELETE FROM messages", false),
        (b"SELECT \"zeroblob\"(10)", false),
        // Token mode: `SELECT count(*)FROM messages `, then `SELECT "zeroblob"(1)`.
        (&[0xFF, 0, 52, 35, 36], true),
        (&[0xFF, 0, 17, 3, 39, 4], false),
    ] {
        assert_eq!(
            fuzz_guard::guard(seed),
            allowed,
            "{}",
            String::from_utf8_lossy(seed)
        );
    }
    inputs("guard").iter().for_each(|d| {
        fuzz_guard::guard(d);
    });
}

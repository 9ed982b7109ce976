//! Property tests of what a cut adds: the digest (deterministic, within its budget) and
//! supersession, on generated sessions that read files again and repeat calls; and the fuzz
//! properties of the digest and of the error-aware compressor on generated inputs (the fuzz
//! targets themselves need cargo-fuzz; these run with every `cargo test`).

mod common;

use common::fuzz_checks;
use common::invariants::{check, Tally};
use common::{replay, requests, Step};
use proptest::prelude::*;
use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::format::Format;
use smarter_compact::store::MemStore;
use smarter_compact::Engine;

/// Pieces of text the generated inputs are made of: paths, commands, failure and passing lines,
/// multibyte text, long lines.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("src/parse.py".to_string()),
        Just("./lib/a b.rs".to_string()),
        Just("cat src/x.py".to_string()),
        Just("FAILED tests/t.py::test_a - AssertionError".to_string()),
        Just("test result: ok. 4 passed; 0 failed".to_string()),
        Just("0 errors".to_string()),
        Just("error[E0308]: mismatched types".to_string()),
        Just("exit code 1".to_string()),
        Just("é漢𝄞".to_string()),
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        "[a-z ]{0,40}",
        (1usize..400).prop_map(|n| "x".repeat(n)),
        (1usize..200).prop_map(|n| "é".repeat(n)),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..30).prop_map(|p| p.concat())
}

/// Chunks for [`fuzz_checks::digest`]: a budget byte, a parts byte, then selector + text chunks.
fn digest_input() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<u8>(),
        any::<u8>(),
        prop::collection::vec((any::<u8>(), text()), 0..40),
    )
        .prop_map(|(budget, parts, chunks)| {
            let mut out = vec![budget, parts];
            for (k, (sel, t)) in chunks.iter().enumerate() {
                if k > 0 {
                    out.push(0xff);
                }
                out.push(*sel);
                out.extend(t.bytes().filter(|&b| b != 0xff));
            }
            out
        })
}

/// A threshold byte and a log of lines made of the pieces.
fn failures_input() -> impl Strategy<Value = Vec<u8>> {
    (any::<u8>(), prop::collection::vec(text(), 0..500)).prop_map(|(t, lines)| {
        let mut out = vec![t];
        out.extend(lines.join("\n").bytes());
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn the_digest_fuzz_property_holds(data in digest_input()) {
        fuzz_checks::digest(&data);
    }

    #[test]
    fn the_failures_fuzz_property_holds(data in failures_input()) {
        fuzz_checks::failures(&data);
    }
}

/// One tool step of a generated session.
#[derive(Debug, Clone)]
enum Tool {
    /// Read file `n` (version `v` of its content, `lines` lines).
    Read { n: u8, v: u8, lines: usize },
    /// `cat` file `n`.
    Cat { n: u8, v: u8, lines: usize },
    /// A shell command `n` with output `out` lines.
    Shell { n: u8, out: usize },
    /// A todo list of `n` items.
    Todo { n: u8 },
}

#[derive(Debug, Clone)]
struct Turn {
    user: usize,
    tools: Vec<Tool>,
}

fn tool() -> impl Strategy<Value = Tool> {
    prop_oneof![
        3 => (0u8..4, 0u8..2, 1usize..120).prop_map(|(n, v, lines)| Tool::Read { n, v, lines }),
        1 => (0u8..4, 0u8..2, 1usize..120).prop_map(|(n, v, lines)| Tool::Cat { n, v, lines }),
        3 => (0u8..5, 1usize..300).prop_map(|(n, out)| Tool::Shell { n, out }),
        1 => (1u8..6).prop_map(|n| Tool::Todo { n }),
    ]
}

fn session() -> impl Strategy<Value = (Vec<Turn>, u32)> {
    let turn = (1usize..80, prop::collection::vec(tool(), 1..14))
        .prop_map(|(user, tools)| Turn { user, tools });
    (prop::collection::vec(turn, 1..5), 1_500u32..8_000)
}

fn file(n: u8, v: u8, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("def f{n}_{i}(x):  # version {v}\n"))
        .collect()
}

/// The session as an OpenAI history.
fn history(turns: &[Turn]) -> Vec<Value> {
    let mut h = vec![json!({"role": "system", "content": "You are a coding agent."})];
    let mut id = 0;
    for (t, turn) in turns.iter().enumerate() {
        h.push(json!({"role": "user", "content": format!("turn {t}: {}", "please ".repeat(turn.user))}));
        for tool in &turn.tools {
            id += 1;
            let (name, args, out) = match *tool {
                Tool::Read { n, v, lines } => (
                    "read",
                    json!({"filePath": format!("src/f{n}.py")}),
                    file(n, v, lines),
                ),
                Tool::Cat { n, v, lines } => (
                    "bash",
                    json!({"command": format!("cat src/f{n}.py")}),
                    file(n, v, lines),
                ),
                Tool::Shell { n, out } => (
                    "bash",
                    json!({"command": format!("pytest tests/t{n}.py")}),
                    format!("collected {n}\n{}", "PASSED tests/t.py::test\n".repeat(out)),
                ),
                Tool::Todo { n } => (
                    "todowrite",
                    json!({"todos": (0..n).map(|i| json!({"content": format!("step {i}"), "status": "pending"})).collect::<Vec<_>>()}),
                    "ok".to_string(),
                ),
            };
            let call = json!({"id": format!("c{id}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}});
            h.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
            h.push(json!({"role": "tool", "tool_call_id": format!("c{id}"), "content": out}));
        }
        h.push(json!({"role": "assistant", "content": format!("done with turn {t}")}));
    }
    h
}

fn engine(trim_at: u32) -> Engine<MemStore> {
    let opts = json!({"trimAtTokens": trim_at, "digestFraction": 0.2, "compressOverTokens": 600});
    Engine::open(
        MemStore::default(),
        Config::resolve(&Default::default(), None, &opts),
    )
    .expect("open")
}

fn run(turns: &[Turn], trim_at: u32) -> Vec<Step> {
    replay(
        &mut engine(trim_at),
        &requests(&history(turns)),
        Format::OpenAi,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// With the digest and supersession on: the trim invariants hold (pairs whole, and between
    /// cuts each request starts with the previous one byte for byte), the digest stays within
    /// its budget, and the same session gives the same bytes on a fresh engine.
    #[test]
    fn cuts_with_digest_and_supersession_are_deterministic_and_frozen((turns, trim_at) in session()) {
        let steps = run(&turns, trim_at);
        let mut tally = Tally::default();
        check("generated", &steps, Format::OpenAi, trim_at, 3, &mut tally);
        prop_assert!(tally.violations.is_empty(), "{:#?}", tally.violations);
        let budget = (0.2 * f64::from(trim_at)) as u64 + 1;
        for s in &steps {
            prop_assert!(s.stats.digest_tokens <= budget, "{} > {budget}", s.stats.digest_tokens);
        }
        // A cut's superseded results are the same bytes on every request it is in force.
        for w in steps.windows(2) {
            if !w[1].stats.trimmed && w[1].stats.cut == w[0].stats.cut {
                prop_assert_eq!(w[1].stats.superseded_tokens, w[0].stats.superseded_tokens);
                prop_assert!(w[1].output.len() >= w[0].output.len());
                prop_assert_eq!(&w[1].output[..w[0].output.len()], &w[0].output[..]);
            }
        }
        let again = run(&turns, trim_at);
        for (a, b) in steps.iter().zip(&again) {
            prop_assert_eq!(&a.output, &b.output, "same input, same bytes");
        }
    }
}

/// The generator reaches the interesting cases: cuts with a digest, and superseded results.
#[test]
fn generated_sessions_get_digests_and_supersession() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut cuts, mut digests, mut superseded) = (0, 0, 0);
    for _ in 0..60 {
        let (turns, trim_at) = session().new_tree(&mut runner).expect("tree").current();
        for s in run(&turns, trim_at).iter().filter(|s| s.stats.trimmed) {
            cuts += 1;
            digests += (s.stats.digest_tokens > 0) as usize;
            superseded += s.stats.superseded_messages;
        }
    }
    assert!(
        cuts > 30 && digests > 20 && superseded > 10,
        "{cuts} cuts, {digests} digests, {superseded} superseded"
    );
}

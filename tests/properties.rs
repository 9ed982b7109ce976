//! Property tests: the trim invariants on generated sessions with parallel tool calls, signed
//! thinking, several user turns, large outputs, in every wire and host format.

mod common;

use common::hosts;
use common::invariants::{check, Tally};
use common::replay;
use proptest::prelude::*;
use serde_json::{json, Value};
use smarter_compact::config::Config;
use smarter_compact::format::Format;
use smarter_compact::store::MemStore;
use smarter_compact::Engine;

#[derive(Debug, Clone)]
struct Exchange {
    results: Vec<usize>,
    thinking: bool,
    text: usize,
}

#[derive(Debug, Clone)]
struct Turn {
    user: usize,
    exchanges: Vec<Exchange>,
    answer: Option<usize>,
}

#[derive(Debug, Clone)]
struct Session {
    system: usize,
    turns: Vec<Turn>,
    trim_at: u32,
    compress_over: u32,
}

/// Text of about `words` words, distinct per `tag`.
fn text(tag: &str, words: usize) -> String {
    let mut s = String::with_capacity(words * 8);
    for i in 0..words {
        s.push_str(if i % 12 == 11 { "\n" } else { " " });
        s.push_str(&format!("{tag}w{i}"));
    }
    s
}

fn result_len() -> impl Strategy<Value = usize> {
    prop_oneof![8 => 1usize..300, 1 => 2_000usize..6_000]
}

fn session() -> impl Strategy<Value = Session> {
    let exchange = (
        prop::collection::vec(result_len(), 1..4),
        any::<bool>(),
        0usize..60,
    )
        .prop_map(|(results, thinking, text)| Exchange {
            results,
            thinking,
            text,
        });
    let turn = (
        1usize..200,
        prop::collection::vec(exchange, 0..7),
        prop::option::of(1usize..80),
    )
        .prop_map(|(user, exchanges, answer)| Turn {
            user,
            exchanges,
            answer,
        });
    (
        1usize..300,
        prop::collection::vec(turn, 1..6),
        1_500u32..12_000,
        300u32..3_000,
    )
        .prop_map(|(system, turns, trim_at, compress_over)| Session {
            system,
            turns,
            trim_at,
            compress_over,
        })
}

/// The session as a message history in `format`.
fn build(s: &Session, format: Format) -> Vec<Value> {
    let mut h = Vec::new();
    let anthropic = format == Format::Anthropic;
    h.push(json!({"role": "system", "content": text("sys", s.system)}));
    for (t, turn) in s.turns.iter().enumerate() {
        let user = text(&format!("u{t}"), turn.user);
        h.push(if anthropic && t % 2 == 1 {
            json!({"role": "user", "content": [{"type": "text", "text": user}]})
        } else {
            json!({"role": "user", "content": user})
        });
        for (e, ex) in turn.exchanges.iter().enumerate() {
            let id = |c: usize| format!("c{t}_{e}_{c}");
            let thought = format!("thinking about step {t}.{e}");
            if anthropic {
                let mut blocks = Vec::new();
                if ex.thinking {
                    blocks.push(json!({"type": "thinking", "thinking": thought, "signature": format!("sig{t}{e}")}));
                }
                if ex.text > 0 {
                    blocks
                        .push(json!({"type": "text", "text": text(&format!("a{t}{e}"), ex.text)}));
                }
                for c in 0..ex.results.len() {
                    blocks.push(json!({"type": "tool_use", "id": id(c), "name": "bash", "input": {"command": format!("run {c}")}}));
                }
                h.push(json!({"role": "assistant", "content": blocks}));
                let results: Vec<Value> = ex.results.iter().enumerate()
                    .map(|(c, &n)| json!({"type": "tool_result", "tool_use_id": id(c), "content": text(&format!("r{t}{e}{c}"), n)}))
                    .collect();
                h.push(json!({"role": "user", "content": results}));
            } else {
                let calls: Vec<Value> = (0..ex.results.len())
                    .map(|c| json!({"id": id(c), "type": "function", "function": {"name": "bash", "arguments": format!("{{\"command\":\"run {c}\"}}")}}))
                    .collect();
                let mut m = json!({"role": "assistant", "content": if ex.text > 0 { Value::String(text(&format!("a{t}{e}"), ex.text)) } else { Value::Null }, "tool_calls": calls});
                if ex.thinking {
                    m["thinking_blocks"] = json!([{"type": "thinking", "thinking": thought, "signature": format!("sig{t}{e}")}]);
                }
                h.push(m);
                for (c, &n) in ex.results.iter().enumerate() {
                    h.push(json!({"role": "tool", "tool_call_id": id(c), "content": text(&format!("r{t}{e}{c}"), n)}));
                }
            }
        }
        if let Some(n) = turn.answer {
            let answer = text(&format!("ans{t}"), n);
            h.push(if anthropic {
                json!({"role": "assistant", "content": [{"type": "text", "text": answer}]})
            } else {
                json!({"role": "assistant", "content": answer})
            });
        }
    }
    h
}

fn engine_for(s: &Session) -> Engine<MemStore> {
    let c = Config::resolve(
        &Default::default(),
        None,
        &json!({"trimAtTokens": s.trim_at, "compressOverTokens": s.compress_over}),
    );
    Engine::open(MemStore::default(), c).expect("open")
}

fn check_session(s: &Session, format: Format) -> Result<(), TestCaseError> {
    let reqs = common::requests(&build(s, format));
    let steps = replay(&mut engine_for(s), &reqs, format);
    let mut tally = Tally::default();
    check("generated", &steps, format, s.trim_at, 3, &mut tally);
    prop_assert!(tally.violations.is_empty(), "{:#?}", tally.violations);
    let again = replay(&mut engine_for(s), &reqs, format);
    for (a, b) in steps.iter().zip(&again) {
        prop_assert_eq!(&a.output, &b.output, "same input, same bytes");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    #[test]
    fn openai_sessions_keep_the_invariants(s in session()) {
        check_session(&s, Format::OpenAi)?;
    }

    #[test]
    fn anthropic_sessions_keep_the_invariants(s in session()) {
        check_session(&s, Format::Anthropic)?;
    }
}

/// The session in a host format, as that host sends it.
fn host_items(s: &Session, format: Format) -> Vec<Value> {
    match format {
        Format::OpenCode => hosts::to_opencode(&build(s, Format::Anthropic)),
        Format::Responses => hosts::to_responses(&build(s, Format::Anthropic)),
        Format::Pi => hosts::to_pi(&build(s, Format::OpenAi)),
        other => build(s, other),
    }
}

fn check_host_session(s: &Session, format: Format) -> Result<(), TestCaseError> {
    let reqs = hosts::requests(format, &host_items(s, format));
    let mut tally = Tally::default();
    let first = hosts::check_host_replay(&mut engine_for(s), format, &reqs, s.trim_at, &mut tally);
    prop_assert!(tally.violations.is_empty(), "{:#?}", tally.violations);
    let again = hosts::check_host_replay(&mut engine_for(s), format, &reqs, s.trim_at, &mut tally);
    prop_assert_eq!(first, again, "same input, same bytes");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn opencode_sessions_keep_the_invariants(s in session()) {
        check_host_session(&s, Format::OpenCode)?;
    }

    #[test]
    fn pi_sessions_keep_the_invariants(s in session()) {
        check_host_session(&s, Format::Pi)?;
    }

    #[test]
    fn responses_sessions_keep_the_invariants(s in session()) {
        check_host_session(&s, Format::Responses)?;
    }
}

/// The generator reaches the interesting cases: trims, compressions and signed thinking.
#[test]
fn generated_sessions_exercise_trims_and_compression() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    for format in Format::ALL {
        let (mut trims, mut compressed, mut thinking) = (0, 0, 0);
        for _ in 0..60 {
            let s = session().new_tree(&mut runner).expect("tree").current();
            let h = host_items(&s, format);
            thinking += h
                .iter()
                .filter(|m| {
                    let t = m.to_string();
                    ["\"signature\"", "thinkingSignature", "encrypted_content"]
                        .iter()
                        .any(|k| t.contains(k))
                })
                .count();
            let reqs = match format.host() {
                None => common::requests(&h),
                Some(_) => hosts::requests(format, &h),
            };
            let mut e = engine_for(&s);
            for req in &reqs {
                let texts: Vec<String> = req.iter().map(Value::to_string).collect();
                let out = e
                    .transform(&format!("[{}]", texts.join(",")), &common::opts(format))
                    .expect("transform");
                trims += out.stats.trimmed as usize;
                compressed += out.stats.compressed;
            }
        }
        assert!(
            trims > 30 && compressed > 10 && thinking > 30,
            "{format:?}: {trims} trims, {compressed} compressed, {thinking} thinking"
        );
    }
}

//! Wire formats: unknown fields survive byte for byte, edits are surgical, malformed input gets
//! an error with a stable code.

mod common;

use serde_json::{json, Value};
use smarter_compact::format::Format;
use smarter_compact::TransformOptions;

fn run(
    format: Format,
    trim_at: u32,
    msgs: &[Value],
) -> Result<(Vec<Value>, smarter_compact::engine::Stats), smarter_compact::Error> {
    let texts: Vec<String> = msgs.iter().map(Value::to_string).collect();
    let out = common::engine(trim_at)
        .transform(&format!("[{}]", texts.join(",")), &common::opts(format))?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    Ok((
        serde_json::from_str(&out.rewrite.render(&refs)).expect("json"),
        out.stats,
    ))
}

fn big(n: usize) -> String {
    (0..n)
        .map(|i| format!("row {i}: value={} status=ok\n", i * 7))
        .collect()
}

#[test]
fn openai_unknown_fields_survive_untouched_and_edited_messages() {
    let msgs = vec![
        json!({"role": "system", "content": "sys", "x_vendor": {"a": [1, 2.5, null]}}),
        json!({"role": "user", "content": [{"type": "text", "text": "task", "x": 1}], "name": "alice"}),
        json!({"role": "assistant", "content": null, "refusal": null, "audio": {"id": "a1"},
               "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}, "extra": true}]}),
        json!({"role": "tool", "tool_call_id": "c1", "content": big(3000), "x_meta": {"exit": 0}}),
    ];
    let (out, stats) = run(Format::OpenAi, 100_000, &msgs).unwrap();
    assert_eq!(stats.compressed, 1);
    assert_eq!(&out[..3], &msgs[..3], "untouched messages are identical");
    let tool = out[3].as_object().unwrap();
    assert_eq!(
        tool.keys().collect::<Vec<_>>(),
        vec!["role", "tool_call_id", "content", "x_meta"],
        "key order kept"
    );
    assert_eq!(tool["x_meta"], json!({"exit": 0}));
    assert!(tool["content"]
        .as_str()
        .unwrap()
        .starts_with("[smarter-compact] output compressed:"));
}

#[test]
fn anthropic_blocks_survive_and_thinking_is_stripped_only_where_allowed() {
    let think =
        |s: &str| json!({"type": "thinking", "thinking": s, "signature": format!("sig-{s}")});
    let mut msgs = vec![json!({"role": "user", "content": "first task", "x": {"keep": true}})];
    for i in 0..30 {
        msgs.push(json!({"role": "assistant", "content": [think(&format!("t{i}")), {"type": "text", "text": format!("step {i}")},
            {"type": "tool_use", "id": format!("tu{i}"), "name": "read", "input": {"path": format!("/f{i}")}, "cache_control": {"type": "ephemeral"}}]}));
        msgs.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("tu{i}"), "content": [{"type": "text", "text": big(40)}], "is_error": false},
            {"type": "server_thing", "payload": i}]}));
    }
    msgs.push(json!({"role": "assistant", "content": [{"type": "redacted_thinking", "data": "opaque"}, {"type": "text", "text": "done"}]}));
    msgs.push(json!({"role": "user", "content": [{"type": "text", "text": "next question", "cache_control": {"type": "ephemeral"}}]}));
    let (out, stats) = run(Format::Anthropic, 2_000, &msgs).unwrap();
    assert!(stats.trimmed);
    assert_eq!(out[0], msgs[0], "task turn verbatim, unknown field kept");
    let last = out.last().unwrap();
    assert!(last["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("[smarter-compact] This session continues."));
    assert_eq!(
        last["content"][1],
        msgs.last().unwrap()["content"][0],
        "cache_control block kept after the pointer"
    );
    // The reply before the last user turn is the latest assistant message: verbatim, thinking
    // included; the older kept exchanges lose their signed thinking.
    assert_eq!(out[out.len() - 2], msgs[msgs.len() - 2]);
    let with_tool_use: Vec<&Value> = out
        .iter()
        .filter(|m| {
            m["content"]
                .as_array()
                .is_some_and(|a| a.iter().any(|b| b["type"] == "tool_use"))
        })
        .collect();
    assert_eq!(with_tool_use.len(), 3, "the last three exchanges stay");
    for m in with_tool_use {
        assert!(
            m["content"]
                .as_array()
                .unwrap()
                .iter()
                .all(|b| b["type"] != "thinking"),
            "{m}"
        );
    }
    // Kept exchanges keep tool_use with cache_control and the unknown result-side block.
    let kept_use = out
        .iter()
        .find(|m| {
            m["content"]
                .as_array()
                .is_some_and(|a| a.iter().any(|b| b["type"] == "tool_use"))
        })
        .unwrap();
    assert!(kept_use["content"]
        .as_array()
        .unwrap()
        .iter()
        .any(|b| b["cache_control"] == json!({"type": "ephemeral"})));
    assert!(out.iter().any(|m| m["content"]
        .as_array()
        .is_some_and(|a| a.iter().any(|b| b["type"] == "server_thing"))));
}

#[test]
fn malformed_input_has_stable_codes() {
    let code = |format: Format, msgs: Value| {
        let out = common::engine(100_000).transform(&msgs.to_string(), &common::opts(format));
        out.err().map(|e| e.code())
    };
    let o = Format::OpenAi;
    let a = Format::Anthropic;
    assert_eq!(
        code(o, json!({"role": "user"})),
        Some("E_JSON"),
        "not an array"
    );
    assert_eq!(
        code(o, json!([{"content": "hi"}])),
        Some("E_MALFORMED"),
        "missing role"
    );
    assert_eq!(
        code(o, json!([{"role": 7, "content": "hi"}])),
        Some("E_MALFORMED"),
        "role not a string"
    );
    assert_eq!(
        code(o, json!([{"role": "wizard", "content": "hi"}])),
        Some("E_MALFORMED"),
        "unknown role"
    );
    assert_eq!(
        code(o, json!([{"role": "user", "content": 42}])),
        Some("E_MALFORMED"),
        "non-string content"
    );
    assert_eq!(
        code(o, json!([{"role": "user", "content": [7]}])),
        Some("E_MALFORMED"),
        "part not an object"
    );
    assert_eq!(
        code(o, json!(["just a string"])),
        Some("E_MALFORMED"),
        "message not an object"
    );
    assert_eq!(
        code(o, json!([{"role": "assistant", "tool_calls": {"id": "x"}}])),
        Some("E_MALFORMED"),
        "tool_calls not an array"
    );
    assert_eq!(
        code(
            o,
            json!([{"role": "assistant", "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {}}}]}])
        ),
        Some("E_MALFORMED"),
        "arguments not a string"
    );
    assert_eq!(
        code(
            o,
            json!([{"role": "tool", "tool_call_id": "nope", "content": "r"}])
        ),
        Some("E_ORPHAN_RESULT"),
        "result for unknown call"
    );
    assert_eq!(
        code(o, json!([{"role": "tool", "content": "r"}])),
        Some("E_MALFORMED"),
        "result without call id"
    );
    assert_eq!(
        code(a, json!([{"role": "user"}])),
        Some("E_MALFORMED"),
        "missing content"
    );
    assert_eq!(
        code(
            a,
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "x"}]}])
        ),
        Some("E_ORPHAN_RESULT")
    );
    assert_eq!(
        code(
            a,
            json!([{"role": "user", "content": [{"type": "text", "text": 5}]}])
        ),
        Some("E_MALFORMED"),
        "text not a string"
    );
    assert!(common::engine(100_000)
        .transform("not json", &common::opts(o))
        .is_err_and(|e| e.code() == "E_JSON"));
    assert!(
        TransformOptions::from_value(&serde_json::json!({"format": "gemini"}))
            .is_err_and(|e| e.code() == "E_FORMAT")
    );
    assert!(
        TransformOptions::from_value(&serde_json::json!({"model": 5}))
            .is_err_and(|e| e.code() == "E_ARG")
    );
}

#[test]
fn a_request_under_the_threshold_goes_out_as_it_came() {
    let msgs = vec![
        json!({"role": "user", "content": "héllo 漢字 😀 \u{2028}"}),
        json!({"role": "assistant", "content": "hi"}),
    ];
    let (out, stats) = run(Format::OpenAi, 100_000, &msgs).unwrap();
    assert_eq!(out, msgs);
    assert!(!stats.trimmed && stats.compressed == 0 && !stats.over_limit);
}

//! What a cut teaches the memory bank: the lines of its digest worth keeping across sessions,
//! written as memories of kind [`CUT_KIND`] when the cut is made.
//!
//! From the same extracted data the digest shows (the functions of [`crate::digest`]):
//! - each real user turn that left the request (`User asked: …`), unless it is too short to
//!   say anything (`yes`, `go on`);
//! - each file the trimmed calls touched, once per file with the strongest way it was touched
//!   (`edited src/a.py while working on: <the user turn before the touch>`);
//! - each failing command that left the request, with the fix when it is visible: a later
//!   passing run of the same command (trimmed or not) and the files edited in between (`` `pytest -x` failed with "…"; it passed after
//!   editing src/a.py``).
//!
//! A memory's text carries no message numbers and no session id, so the same cut made twice, or
//! a later cut over the same messages, writes the same texts, which the bank's unique hash
//! deduplicates. The session and the message numbers go in its `source`: `<session> #12 #15`.

use std::collections::{HashMap, HashSet};

use crate::digest::TouchKind;
use crate::digest::{collapse, exchanges, files_touched, left_user_turns, user_text, Entry};

/// Kind of the memories a cut writes.
pub const CUT_KIND: &str = "cut";
/// Most memories one cut writes (failures first, then user turns, changed files, read files).
pub const MAX_CUT_MEMORIES: usize = 48;
/// Shortest user turn worth a memory, in bytes once collapsed.
const MIN_USER_BYTES: usize = 24;
/// Most bytes of a user turn's memory text.
const USER_CAP_BYTES: usize = 600;
/// Most bytes of the task a file memory names.
const TOPIC_CAP_BYTES: usize = 140;
/// Longest line ending with `:` taken for an introduction, in bytes.
const INTRO_MAX_BYTES: usize = 80;

/// One memory to write: its text and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    /// The memory, on one line.
    pub text: String,
    /// `<session> #N …`: the session and the message numbers it was taken from.
    pub source: String,
}

/// The memories of a cut over `history` (the digest's entries) of session `session`.
pub fn cut_memories(history: &[Entry], session: &str) -> Vec<Memory> {
    let source = |numbers: &[u64]| {
        let mut s = session.to_string();
        for n in numbers {
            s.push_str(&format!(" #{n}"));
        }
        s
    };
    let files = files_touched(history);
    let mut out = failures(history, &source);
    for (n, text) in left_user_turns(history) {
        let text = collapse(&text, USER_CAP_BYTES);
        if text.len() >= MIN_USER_BYTES {
            out.push(Memory {
                text: format!("User asked: {text}"),
                source: source(&[n]),
            });
        }
    }
    let mut touched: Vec<(TouchKind, Memory)> = files
        .iter()
        .filter(|t| worth_remembering(&t.path))
        .map(|t| {
            let kind = t.by.iter().map(|b| b.0).max().unwrap_or(TouchKind::Read);
            let numbers: Vec<u64> = t.by.iter().map(|b| b.1).collect();
            let first = t.by.iter().find(|b| b.0 == kind).map_or(0, |b| b.1);
            let text = match topic(history, first) {
                Some(topic) => format!("{} {} while working on: {topic}", kind.word(), t.path),
                None => format!("{} {}", kind.word(), t.path),
            };
            let source = source(&numbers);
            (kind, Memory { text, source })
        })
        .collect();
    // Changed files before read ones; the order of first touch within each.
    touched.sort_by_key(|(kind, _)| *kind == TouchKind::Read);
    out.extend(touched.into_iter().map(|(_, m)| m));
    out.truncate(MAX_CUT_MEMORIES);
    out
}

/// The task a call at message `number` served: the latest real user turn before it (kept or
/// not), without markup tags and without the lines that only introduce what follows
/// (`Consider the following PR description:`), on one line and capped.
fn topic(history: &[Entry], number: u64) -> Option<String> {
    let turn = history
        .iter()
        .rev()
        .find(|e| e.real_user && e.number < number)?;
    let text = without_tags(&user_text(turn.message));
    let body = text
        .lines()
        .skip_while(|l| {
            let l = l.trim();
            l.is_empty() || (l.ends_with(':') && l.len() <= INTRO_MAX_BYTES)
        })
        .collect::<Vec<_>>()
        .join("\n");
    let topic = collapse(&body, TOPIC_CAP_BYTES);
    (!topic.is_empty()).then_some(topic)
}

/// Whether a path the digest found is worth a memory: a name (not a directory, not a fragment
/// of a `sed` expression) whose segments are made of word characters, dots and dashes, with an
/// extension or at least two segments of two characters or more.
fn worth_remembering(path: &str) -> bool {
    let segments: Vec<&str> = path.trim_start_matches("./").split('/').collect();
    let last = segments.last().copied().unwrap_or("");
    let wordy = |s: &str| s.chars().all(|c| c.is_alphanumeric() || "_.-".contains(c));
    let named = |s: &&str| s.len() >= 2 && s.chars().any(char::is_alphabetic);
    let has_ext = last
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && ext.chars().any(char::is_alphabetic));
    wordy(&path.replace('/', ""))
        && named(&last)
        && (has_ext || segments.iter().filter(|s| named(s)).count() >= 2)
}

/// The subject of a file memory (its text after the verb), which a memory of the same file with
/// a stronger touch shares: `read a.py while working on: x` and `edited a.py while working on:
/// x` have one subject. `None` for other memories.
pub fn file_subject(text: &str) -> Option<&str> {
    let (verb, rest) = text.split_once(' ')?;
    ["read", "edited", "written"]
        .contains(&verb)
        .then_some(rest)
}

/// `text` without markup tags (`<task>`, `</pr_description>`), each replaced by a space.
fn without_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('<') {
        out.push_str(&rest[..at]);
        let tag = &rest[at + 1..];
        let name = tag.strip_prefix('/').unwrap_or(tag);
        let len = name
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(name.len());
        if len > 0 && name[len..].starts_with('>') {
            out.push(' ');
            rest = &name[len + 1..];
        } else {
            out.push('<');
            rest = tag;
        }
    }
    out.push_str(rest);
    out
}

/// Failing commands of the trimmed calls, each with its fix when a later run of the same command
/// passed (trimmed or still in the request, so that the next cut writes the same memory): one
/// memory per failing streak.
fn failures(history: &[Entry], source: &dyn Fn(&[u64]) -> String) -> Vec<Memory> {
    let trimmed: HashSet<u64> = history
        .iter()
        .filter(|e| !e.kept)
        .map(|e| e.number)
        .collect();
    let whole: Vec<Entry> = history
        .iter()
        .map(|e| Entry { kept: false, ..*e })
        .collect();
    let calls = exchanges(&whole);
    let files = files_touched(&whole);
    // (tool, args) → (first failing call, latest failing call) of the current streak.
    let mut streaks: HashMap<(&str, &str), (usize, usize)> = HashMap::new();
    let mut out = Vec::new();
    let failed_with = |k: usize| match &calls[k].failure_line {
        Some(line) => format!("`{}` failed with \"{line}\"", calls[k].args),
        None => format!("`{}` failed", calls[k].args),
    };
    for (k, x) in calls.iter().enumerate() {
        let key = (x.tool.as_str(), x.args.as_str());
        match x.failed {
            Some(true) => {
                streaks.entry(key).and_modify(|s| s.1 = k).or_insert((k, k));
            }
            Some(false) => {
                let Some((first, last)) = streaks.remove(&key) else {
                    continue;
                };
                if !trimmed.contains(&calls[last].call_at) {
                    continue;
                }
                let (from, to) = (calls[first].call_at, x.call_at);
                let edits: Vec<&str> = files
                    .iter()
                    .filter(|t| {
                        t.by.iter()
                            .any(|b| b.0 != TouchKind::Read && b.1 > from && b.1 < to)
                    })
                    .map(|t| t.path.as_str())
                    .collect();
                let fix = if edits.is_empty() {
                    "it passed on a later run".to_string()
                } else {
                    format!("it passed after editing {}", edits.join(", "))
                };
                out.push(Memory {
                    text: format!("{}; {fix}", failed_with(last)),
                    source: source(&[calls[last].call_at, to]),
                });
            }
            None => {}
        }
    }
    // Trimmed streaks never followed by a pass, with a failure line to say what went wrong.
    let mut open: Vec<(usize, usize)> = streaks.into_values().collect();
    open.sort();
    for (_, last) in open {
        if trimmed.contains(&calls[last].call_at) && calls[last].failure_line.is_some() {
            out.push(Memory {
                text: failed_with(last),
                source: source(&[calls[last].call_at]),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Block, Message, Role};

    fn msg(role: Role, blocks: Vec<Block>) -> Message {
        Message {
            role,
            blocks,
            synthetic: false,
        }
    }

    fn user(text: &str) -> Message {
        msg(Role::User, vec![Block::Text(text.into())])
    }

    fn call(id: &str, name: &str, args: &str) -> Message {
        let (id, name, arguments) = (id.into(), name.into(), args.into());
        msg(
            Role::Assistant,
            vec![Block::ToolCall {
                id,
                name,
                arguments,
            }],
        )
    }

    fn result(id: &str, text: &str) -> Message {
        let block = Block::ToolResult {
            call_id: id.into(),
            name: None,
            text: text.into(),
            is_error: false,
        };
        msg(Role::Tool, vec![block])
    }

    /// Entries numbered from 1; the first `trimmed` messages left the request.
    fn entries(messages: &[Message], trimmed: usize) -> Vec<Entry<'_>> {
        messages
            .iter()
            .enumerate()
            .map(|(i, m)| Entry {
                number: i as u64 + 1,
                kept: i >= trimmed,
                real_user: m.role == Role::User,
                message: m,
                compressed: &[],
                gists: None,
            })
            .collect()
    }

    const TEST: &str = r#"{"command": "cargo test -p core"}"#;

    fn session() -> Vec<Message> {
        vec![
            user("<task>Make the tokenizer accept tabs in headers</task>"),
            call("a", "bash", TEST),
            result("a", "error: test header_tabs failed\nexit code 101"),
            call(
                "b",
                "edit",
                r#"{"filePath": "src/token.rs", "oldString": "' '"}"#,
            ),
            result("b", "ok"),
            user("ok"),
            call("c", "bash", TEST),
            result("c", "test result: ok. 12 passed\nexit code 0"),
        ]
    }

    #[test]
    fn a_failure_is_written_with_the_fix_even_when_the_pass_is_still_in_the_request() {
        let m = session();
        let got = cut_memories(&entries(&m, 6), "s1");
        let texts: Vec<&str> = got.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "`cargo test -p core` failed with \"error: test header_tabs failed\"; it passed after editing src/token.rs",
                "User asked: <task>Make the tokenizer accept tabs in headers</task>",
                "edited src/token.rs while working on: Make the tokenizer accept tabs in headers",
            ],
            "the short user turn `ok` is no memory"
        );
        assert_eq!(got[0].source, "s1 #2 #7");
        assert_eq!(got[2].source, "s1 #4");
        // The next cut over more of the same messages writes the same texts.
        let later: Vec<String> = cut_memories(&entries(&m, 8), "s1")
            .into_iter()
            .map(|m| m.text)
            .collect();
        assert_eq!(later, texts);
    }

    #[test]
    fn a_failure_never_fixed_is_written_with_its_failure_line_and_a_kept_one_not_at_all() {
        let m = session();
        let got = cut_memories(&entries(&m[..5], 5), "s1");
        assert_eq!(
            got[0].text,
            "`cargo test -p core` failed with \"error: test header_tabs failed\""
        );
        let kept = cut_memories(&entries(&m, 1), "s1");
        assert!(!kept.iter().any(|m| m.text.contains("failed")), "{kept:?}");
        assert_eq!(without_tags("<a>x</a> 1 < 2 <b c>"), " x  1 < 2 <b c>");
    }

    #[test]
    fn only_file_names_become_memories_and_a_task_loses_its_introduction() {
        for good in [
            "src/a.py",
            "django/db/models/deletion.py",
            "tests/delete",
            "check.py",
        ] {
            assert!(worth_remembering(good), "{good}");
        }
        for bad in ["1341s/)/", "75s/", "/def", "tests/", "s/if"] {
            assert!(!worth_remembering(bad), "{bad}");
        }
        let m = [
            user("<pr>\nConsider the following PR description:\nOptimize .delete()\n</pr>"),
            call("a", "read", r#"{"filePath": "a/b.py"}"#),
        ];
        let got = cut_memories(&entries(&m, 2), "s1");
        assert_eq!(
            got[1].text,
            "read a/b.py while working on: Optimize .delete()"
        );
        assert_eq!(
            file_subject(&got[1].text),
            Some("a/b.py while working on: Optimize .delete()")
        );
        assert_eq!(file_subject("User asked: x"), None);
    }
}

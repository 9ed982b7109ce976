//! The digest: an extracted account of what a cut took out of the request, put after the pointer.
//!
//! It is computed once, when a cut is made, over the messages the cut leaves out (of a very long
//! session, the newest ones and every real user turn), and frozen in the cut: the same bytes go
//! out on every request until the next cut. Nothing in it is summarised; every line is taken
//! from the messages themselves, so the same history always gives the same digest. It holds,
//! within a token budget and in this order of priority:
//! - the real user turns that left the request (the instructions), verbatim up to a cap each;
//! - the latest state of the agent's todo list when the call that set it left the request;
//! - the files the trimmed tool calls read, wrote or edited, with the message numbers where;
//! - a table of contents of the trimmed tool calls, one line each (newest ones in full, older
//!   ones condensed into ranges when the budget is short);
//! - the names (paths, identifiers) the trimmed messages used that nothing kept shows, under the
//!   message where each was last seen.
//!
//! Every line carries message numbers (`#12`) that `smart_compact_get(id="12")` pages through,
//! and compressed outputs carry their blob id.

mod files;
mod gist;
mod names;
mod toc;

use crate::facts::CompressedPart;
use crate::message::{Block, Message};
use crate::tokens::estimate_text;

pub(crate) use files::touches;
pub use files::{files_touched, Touch, TouchKind};
pub use gist::{Gist, ResultOf};
pub use toc::{exchanges, short_args, Exchange};

/// First line of every digest.
pub const DIGEST_HEADER: &str = "[smarter-compact] Digest of what left the request \
(#N is a message number: smart_compact_get(id=\"N\") shows it in full):";

/// Longest user turn shown whole, in bytes; a longer one shows its head and tail.
pub const USER_TURN_CAP_BYTES: usize = 1_200;
/// Shortest cap a user turn is cut down to when many turns share the budget.
const USER_TURN_MIN_BYTES: usize = 160;
/// Most bytes of the todo list.
const TODO_CAP_BYTES: usize = 600;
/// The share of the budget left after the user turns, todo list and files that the table of
/// contents leaves to the names, in percent.
const NAMES_SHARE_PERCENT: u32 = 50;
/// Smallest budget worth a digest, in tokens.
pub const MIN_DIGEST_TOKENS: u32 = 40;

/// Which parts a digest holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Parts {
    /// Earlier real user turns.
    pub users: bool,
    /// The table of contents of trimmed tool calls.
    pub toc: bool,
    /// Files touched.
    pub files: bool,
    /// The latest todo list.
    pub todo: bool,
    /// Names the trimmed messages used that nothing kept shows.
    pub names: bool,
}

impl Parts {
    /// Every part.
    pub const ALL: Parts = Parts {
        users: true,
        toc: true,
        files: true,
        todo: true,
        names: true,
    };

    /// Parses a comma-separated list of part names (`users,toc,files,todo,names`, or `all`, or
    /// `none`/empty for no digest).
    pub fn parse(raw: &str) -> Option<Parts> {
        let mut p = Parts {
            users: false,
            toc: false,
            files: false,
            todo: false,
            names: false,
        };
        let unquote = |n: &str| {
            n.trim_matches(|c: char| c.is_whitespace() || "[]\"'".contains(c))
                .to_string()
        };
        for name in raw.split(',').map(unquote).filter(|n| !n.is_empty()) {
            match name.to_ascii_lowercase().as_str() {
                "all" => p = Parts::ALL,
                "none" => {}
                "users" => p.users = true,
                "toc" => p.toc = true,
                "files" => p.files = true,
                "todo" => p.todo = true,
                "names" => p.names = true,
                _ => return None,
            }
        }
        Some(p)
    }

    /// The list as `parse` reads it.
    pub fn names(&self) -> String {
        let names: Vec<&str> = [
            (self.users, "users"),
            (self.toc, "toc"),
            (self.files, "files"),
            (self.todo, "todo"),
            (self.names, "names"),
        ]
        .into_iter()
        .filter_map(|(on, n)| on.then_some(n))
        .collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(",")
        }
    }

    fn any(&self) -> bool {
        self.users || self.toc || self.files || self.todo || self.names
    }
}

/// One message of the history as the digest sees it.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// Its message number in the session store.
    pub number: u64,
    /// The cut keeps it in the request.
    pub kept: bool,
    /// A real user turn.
    pub real_user: bool,
    /// The message.
    pub message: &'a Message,
    /// Its parts that are sent compressed, with their blob ids.
    pub compressed: &'a [CompressedPart],
    /// The gists of its tool results, in order; `None`: taken from the results' texts. A
    /// caller that gives them may leave those texts out of `message`.
    pub gists: Option<&'a [Gist]>,
}

/// The digest of the messages of `history` that are not kept, within `budget_tokens` (estimated
/// as the engine estimates everything); empty when nothing left or the budget is too small.
pub fn build(history: &[Entry], budget_tokens: u32, parts: Parts) -> String {
    if !parts.any() || budget_tokens < MIN_DIGEST_TOKENS || history.iter().all(|e| e.kept) {
        return String::new();
    }
    let mut left = budget_tokens.saturating_sub(estimate_text(DIGEST_HEADER) + 1);
    let mut sections: Vec<String> = Vec::new();
    let take = |section: String, left: &mut u32, sections: &mut Vec<String>| {
        if section.is_empty() {
            return;
        }
        let cost = estimate_text(&section) + 1;
        if cost <= *left {
            *left -= cost;
            sections.push(section);
        }
    };
    if parts.users {
        let s = users_section(history, left * 3 / 5);
        take(s, &mut left, &mut sections);
    }
    if parts.todo {
        take(todo_section(history), &mut left, &mut sections);
    }
    if parts.files {
        let s = files::section(&files_touched(history), left / 3);
        take(s, &mut left, &mut sections);
    }
    if parts.toc {
        // with names on, the table leaves them a share of what is left
        let share = if parts.names {
            left - left * NAMES_SHARE_PERCENT / 100
        } else {
            left
        };
        let s = toc::section(&exchanges(history), share);
        take(s, &mut left, &mut sections);
    }
    if parts.names {
        let shown = sections.join("\n");
        take(
            names::section(history, &shown, left),
            &mut left,
            &mut sections,
        );
    }
    if sections.is_empty() {
        return String::new();
    }
    format!("{DIGEST_HEADER}\n{}", sections.join("\n"))
}

/// The real user turns of `history` that left the request, oldest first: (message number, text).
pub fn left_user_turns(history: &[Entry]) -> Vec<(u64, String)> {
    history
        .iter()
        .filter(|e| !e.kept && e.real_user)
        .map(|e| (e.number, user_text(e.message)))
        .collect()
}

/// The real user turns that left the request, oldest first, each at most `cap` bytes.
fn users_section(history: &[Entry], budget: u32) -> String {
    let turns = left_user_turns(history);
    if turns.is_empty() {
        return String::new();
    }
    let mut cap = USER_TURN_CAP_BYTES;
    loop {
        let lines: Vec<String> = turns.iter().map(|(n, t)| user_line(*n, t, cap)).collect();
        let text = format!("User turns that left the request:\n{}", lines.join("\n"));
        if estimate_text(&text) <= budget {
            return text;
        }
        if cap <= USER_TURN_MIN_BYTES {
            // Only the newest turns fit; the older ones are named so they can be fetched.
            let mut kept: Vec<String> = Vec::new();
            let mut used = estimate_text("User turns that left the request:") + 1;
            for (n, t) in turns.iter().rev() {
                let line = user_line(*n, t, cap);
                let cost = estimate_text(&line) + 1;
                if used + cost > budget {
                    break;
                }
                used += cost;
                kept.push(line);
            }
            let older = turns.len() - kept.len();
            if older > 0 {
                let first = turns[0].0;
                let last = turns[older - 1].0;
                kept.push(format!(
                    "#{first}…#{last}: {older} older user turns (smart_compact_get each)"
                ));
            }
            kept.reverse();
            let text = format!("User turns that left the request:\n{}", kept.join("\n"));
            return if estimate_text(&text) <= budget {
                text
            } else {
                String::new()
            };
        }
        cap = (cap / 2).max(USER_TURN_MIN_BYTES);
    }
}

/// The text blocks of a user turn, joined.
pub fn user_text(m: &Message) -> String {
    let texts: Vec<&str> = m
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.trim()),
            _ => None,
        })
        .filter(|t| !t.is_empty())
        .collect();
    texts.join("\n")
}

/// `#N: text`, or its head and tail when longer than `cap` bytes.
fn user_line(number: u64, text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return format!("#{number}: {text}");
    }
    let head = floor_boundary(text, cap * 2 / 3);
    let tail = ceil_boundary(text, text.len() - cap / 3);
    format!(
        "#{number}: {} … [{} bytes left out] … {}",
        text[..head].trim_end(),
        tail - head,
        text[tail..].trim_start()
    )
}

/// The latest todo list, when the call that set it left the request and no later one is kept.
fn todo_section(history: &[Entry]) -> String {
    let latest = history.iter().rev().find_map(|e| {
        e.message.blocks.iter().rev().find_map(|b| match b {
            Block::ToolCall {
                name, arguments, ..
            } if is_todo_tool(name) => Some((e, arguments.as_str())),
            _ => None,
        })
    });
    let Some((entry, args)) = latest.filter(|(e, _)| !e.kept) else {
        return String::new();
    };
    let Some(items) = todo_items(args) else {
        return String::new();
    };
    let mut line = format!("Todo list (#{}):", entry.number);
    for item in items {
        if line.len() + item.len() + 3 > TODO_CAP_BYTES {
            line.push_str(" …");
            break;
        }
        line.push_str(if line.ends_with(':') { " " } else { " · " });
        line.push_str(&item);
    }
    line
}

/// Tools that set the agent's todo list (OpenCode and Claude Code `todowrite`, Codex
/// `update_plan`).
fn is_todo_tool(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "todowrite" | "todo_write" | "update_plan"
    )
}

/// The items of a todo call as `[x] text` (done), `[~] text` (in progress) or `[ ] text`.
fn todo_items(args: &str) -> Option<Vec<String>> {
    let v: serde_json::Value = serde_json::from_str(args).ok()?;
    let list = v.get("todos").or_else(|| v.get("plan"))?.as_array()?;
    let items = list
        .iter()
        .filter_map(|t| {
            let text = ["content", "step", "text", "title"]
                .iter()
                .find_map(|k| t.get(*k).and_then(|s| s.as_str()))?;
            let mark = match t.get("status").and_then(|s| s.as_str()).unwrap_or("") {
                "completed" | "done" => "[x]",
                "in_progress" | "in-progress" | "active" => "[~]",
                "cancelled" => "[-]",
                _ => "[ ]",
            };
            Some(format!("{mark} {}", collapse(text, 160)))
        })
        .collect();
    Some(items)
}

/// `text` on one line (runs of whitespace as one space), at most `cap` bytes (`…` when cut).
pub fn collapse(text: &str, cap: usize) -> String {
    let mut out = String::with_capacity(text.len().min(cap + 4));
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if out.len() > cap {
            break;
        }
    }
    if out.len() > cap {
        let end = floor_boundary(&out, cap);
        out.truncate(end);
        out.push('…');
    }
    out
}

/// The largest char boundary of `s` at or below `at`.
fn floor_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The smallest char boundary of `s` at or above `at`.
fn ceil_boundary(s: &str, at: usize) -> usize {
    let mut at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

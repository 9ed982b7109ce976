//! The names of what left: file paths and identifiers that the trimmed messages used and that
//! nothing still in the request shows, each under the message where it was last seen. They are
//! what an agent reaches for next (the script it was writing, the function it was reading), so a
//! line of them lets it name the right thing, or fetch the right message, after a cut.

use std::collections::{HashMap, HashSet};

use super::Entry;
use crate::message::{Block, Role};
use crate::tokens::estimate_text;

/// Shortest name listed, in bytes.
const MIN_NAME_BYTES: usize = 4;
/// Longest name listed, in bytes (longer runs are data, not names).
const MAX_NAME_BYTES: usize = 96;
/// Most dot- or slash-separated segments of a run whose sub-names count as shown.
const MAX_SEGMENTS: usize = 12;
/// How much more a name counts when the agent wrote it (its calls and text) than when a tool
/// printed it.
const AGENT_WEIGHT: u32 = 3;
/// Most new names one tool output brings.
const OUTPUT_NAMES_PER_MESSAGE: usize = 24;
/// Fewest numbered names (`case_1`, `case_2`, …) shown as one family.
const FAMILY_MIN: usize = 3;
/// A name's weight, the position of the last trimmed message using it, that message's number,
/// and the order it was first seen in.
type Weighed = (u32, usize, u64, usize);
/// First line of the section.
const HEADING: &str = "Names used in what left (#N: the message where last seen):";

/// Paths and prefixes that say nothing about the work: system locations and boilerplate.
const STOP: &[&str] = &[
    "__init__",
    "__main__",
    "__name__",
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/bin/bash",
    "/bin/sh",
    "/usr/bin/env",
    "and/or",
    "n/a",
];

/// The section: names of the messages of `history` that are not kept and occur neither in the
/// kept messages nor in `shown` (the rest of the digest), best first within `budget_tokens`,
/// printed newest message first. Empty when there is none or the budget is too small.
pub fn section(history: &[Entry], shown: &str, budget_tokens: u32) -> String {
    let mut visible = Visible::default();
    for e in history.iter().filter(|e| e.kept) {
        for_texts(e, |text, _| visible.add_text(text));
    }
    visible.add_text(shown);
    let trimmed: Vec<&Entry> = history.iter().filter(|e| !e.kept).collect();
    if trimmed.is_empty() {
        return String::new();
    }
    // name → (weight, position of the last message, its number, first-seen order)
    let mut seen: HashMap<String, Weighed> = HashMap::new();
    for (pos, e) in trimmed.iter().enumerate() {
        let mut in_message: HashSet<String> = HashSet::new();
        let mut new_from_output = 0;
        for_names(e, |name, agent| {
            if visible.has(name) {
                return;
            }
            if !agent && !seen.contains_key(name) {
                // a long output (a file, a listing) brings a few new names, not hundreds
                if new_from_output == OUTPUT_NAMES_PER_MESSAGE {
                    return;
                }
                new_from_output += 1;
            }
            let w = if agent { AGENT_WEIGHT } else { 1 };
            let order = seen.len();
            let slot = seen
                .entry(name.to_string())
                .or_insert((0, pos, e.number, order));
            // one count per message and source kind, so a long output repeating a name
            // does not outweigh the agent's own use of it
            if in_message.insert(format!("{agent}{name}")) {
                slot.0 += w;
            }
            slot.1 = pos;
            slot.2 = e.number;
        });
    }
    let n = trimmed.len() as u64;
    let entries = families(seen);
    let mut ranked: Vec<(u64, &String, u64, usize)> = entries
        .iter()
        .map(|(name, (w, pos, number, order))| {
            // recency triples the weight from the oldest trimmed message to the newest
            let score = u64::from(*w) * (n + 2 * *pos as u64);
            (score, name, *number, *order)
        })
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.3.cmp(&b.3)));

    let mut used = estimate_text(HEADING) + 1;
    let mut listed = Visible::default();
    let mut chosen: Vec<(u64, usize, &String)> = Vec::new();
    let mut groups: HashSet<u64> = HashSet::new();
    for (_, name, number, order) in ranked {
        if listed.has(name) {
            continue;
        }
        // a new group costs its `#N:` and line break
        let cost = estimate_text(name)
            + 1
            + if groups.contains(&number) {
                0
            } else {
                estimate_text(&format!("#{number}:")) + 1
            };
        if used + cost > budget_tokens {
            continue;
        }
        used += cost;
        groups.insert(number);
        listed.add_text(name);
        chosen.push((number, order, name));
    }
    if chosen.is_empty() {
        return String::new();
    }
    chosen.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut out = String::from(HEADING);
    let mut current = None;
    for (number, _, name) in chosen {
        if current != Some(number) {
            out.push_str(&format!("\n#{number}:"));
            current = Some(number);
        }
        out.push(' ');
        out.push_str(name);
    }
    if estimate_text(&out) > budget_tokens {
        return String::new();
    }
    out
}

/// Folds numbered families (`test_case_1`, `test_case_2`, … of one listing) into one entry
/// `test_case_1…143` that counts as its most used, most recent member.
fn families(seen: HashMap<String, Weighed>) -> Vec<(String, Weighed)> {
    let mut by_stem: HashMap<&str, Vec<(u64, &String)>> = HashMap::new();
    for name in seen.keys() {
        let stem = name.trim_end_matches(|c: char| c.is_ascii_digit());
        if stem.len() >= 3 && stem.len() < name.len() {
            if let Ok(k) = name[stem.len()..].parse::<u64>() {
                by_stem.entry(stem).or_default().push((k, name));
            }
        }
    }
    let mut folded: HashSet<&String> = HashSet::new();
    let mut out: Vec<(String, Weighed)> = Vec::new();
    for (stem, mut members) in by_stem {
        if members.len() < FAMILY_MIN {
            continue;
        }
        members.sort();
        let (lo, hi) = (members[0].0, members[members.len() - 1].0);
        let mut w: Weighed = (0, 0, 0, usize::MAX);
        for (_, name) in &members {
            let m = seen[*name];
            w.0 = w.0.max(m.0);
            if m.1 >= w.1 {
                (w.1, w.2) = (m.1, m.2);
            }
            w.3 = w.3.min(m.3);
            folded.insert(name);
        }
        out.push((format!("{stem}{lo}…{hi}"), w));
    }
    out.extend(
        seen.iter()
            .filter(|(name, _)| !folded.contains(name))
            .map(|(name, w)| (name.clone(), *w)),
    );
    out
}

/// Calls `f` with each text of a message and whether the agent wrote it (its calls, its text,
/// a user's turn) rather than a tool printed it. Thinking is private and left out.
fn for_texts(e: &Entry, mut f: impl FnMut(&str, bool)) {
    let agent = e.message.role != Role::Tool;
    for b in &e.message.blocks {
        match b {
            Block::Text(t) => f(t, agent),
            Block::ToolCall { arguments, .. } => match serde_json::from_str(arguments) {
                Ok(v) => for_strings(&v, &mut |s| f(s, true)),
                Err(_) => f(arguments, true),
            },
            Block::ToolResult { text, .. } => f(text, false),
            Block::Thinking { .. } | Block::Image | Block::Other(_) => {}
        }
    }
}

/// Calls `f` with each name of a message in order and whether the agent wrote it (see
/// [`for_texts`]); a tool result's names are its gist's, each once (a name's later uses in the
/// same result change nothing that [`section`] counts).
fn for_names(e: &Entry, mut f: impl FnMut(&str, bool)) {
    let agent = e.message.role != Role::Tool;
    let mut results = e.results();
    for b in &e.message.blocks {
        match b {
            Block::Text(t) => names_in(t).for_each(|n| f(n, agent)),
            Block::ToolCall { arguments, .. } => match serde_json::from_str(arguments) {
                Ok(v) => for_strings(&v, &mut |s| names_in(s).for_each(|n| f(n, true))),
                Err(_) => names_in(arguments).for_each(|n| f(n, true)),
            },
            Block::ToolResult { .. } => {
                if let Some(r) = results.next() {
                    r.gist.names().for_each(|n| f(n, false));
                }
            }
            Block::Thinking { .. } | Block::Image | Block::Other(_) => {}
        }
    }
}

/// Calls `f` with every string of a JSON value.
fn for_strings(v: &serde_json::Value, f: &mut impl FnMut(&str)) {
    match v {
        serde_json::Value::String(s) => f(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| for_strings(x, f)),
        serde_json::Value::Object(o) => o.values().for_each(|x| for_strings(x, f)),
        _ => {}
    }
}

/// Whether `c` belongs to a run that may hold a name.
fn run_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// Runs of name characters of `text`, without trailing punctuation; written-out escapes
/// (`\n` in a command) separate runs.
fn runs(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !run_char(c))
        .flat_map(|r| r.split("\\n"))
        .map(|r| r.trim_end_matches(['.', '/', '-']))
        .map(|r| r.trim_start_matches(['.', '-']))
        .filter(|r| !r.is_empty())
}

/// The distinctive names of `text`: paths (a `/` joining two segments, or a file extension) and
/// identifiers (snake_case, dotted, camelCase or CamelCase), at least four bytes.
pub(super) fn names_in(text: &str) -> impl Iterator<Item = &str> {
    runs(text).filter(|r| is_name(r))
}

/// Whether a run is a distinctive name.
fn is_name(r: &str) -> bool {
    if r.len() < MIN_NAME_BYTES
        || r.len() > MAX_NAME_BYTES
        || !r.bytes().any(|b| b.is_ascii_alphabetic())
    {
        return false;
    }
    if STOP.iter().any(|s| s.eq_ignore_ascii_case(r)) || r.contains("..") {
        return false;
    }
    if r.contains('/') {
        return r.split('/').filter(|s| !s.is_empty()).count() >= 2
            && !r.starts_with("/tmp")
            && !r.starts_with("/proc");
    }
    if has_file_extension(r) {
        return true;
    }
    let first = r.as_bytes()[0];
    if r.contains('-') || !(first.is_ascii_alphabetic() || first == b'_') {
        return false;
    }
    if r.contains('.') || r.contains('_') {
        return true;
    }
    // camelCase or CamelCase: a capital after a lower-case letter
    r.as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

/// Whether a run ends in a common source or data file extension.
fn has_file_extension(r: &str) -> bool {
    const EXT: &[&str] = &[
        "py", "pyi", "js", "mjs", "cjs", "ts", "tsx", "jsx", "json", "md", "rst", "txt", "cfg",
        "ini", "toml", "yaml", "yml", "lock", "c", "h", "cc", "cpp", "hpp", "rs", "go", "java",
        "kt", "rb", "php", "sh", "html", "css", "xml", "csv", "log", "sql",
    ];
    r.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty() && EXT.iter().any(|e| e.eq_ignore_ascii_case(ext))
    })
}

/// The names a text shows: every run and every stretch of its `.`/`/`/`-` segments, so that
/// `a.b` counts as shown by `x.a.b.c` (as a reader finds it there).
#[derive(Default)]
struct Visible(HashSet<String>);

impl Visible {
    fn add_text(&mut self, text: &str) {
        for r in runs(text) {
            let segs: Vec<&str> = r.split(['.', '/', '-']).collect();
            if segs.len() > MAX_SEGMENTS {
                self.0.insert(r.to_string());
                continue;
            }
            // byte offsets of segment starts and ends within r
            let mut bounds = Vec::with_capacity(segs.len());
            let mut at = 0;
            for s in &segs {
                bounds.push((at, at + s.len()));
                at += s.len() + 1;
            }
            for i in 0..segs.len() {
                for j in i..segs.len() {
                    let piece = &r[bounds[i].0..bounds[j].1];
                    if !piece.is_empty() {
                        self.0.insert(piece.to_string());
                    }
                }
            }
        }
    }

    fn has(&self, name: &str) -> bool {
        self.0.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_paths_and_identifiers() {
        let got: Vec<&str> = names_in(
            "cat django/db/models/deletion.py && python reproduce_issue.py; see self.fast_deletes \
             and QuerySet.delete, getLookup, the value 1234, a plain word, /tmp/x, __init__.",
        )
        .collect();
        assert_eq!(
            got,
            [
                "django/db/models/deletion.py",
                "reproduce_issue.py",
                "self.fast_deletes",
                "QuerySet.delete",
                "getLookup"
            ]
        );
    }

    #[test]
    fn numbered_families_fold_into_one_entry() {
        let mut seen: HashMap<String, Weighed> = HashMap::new();
        for k in 1..=40u64 {
            seen.insert(
                format!("test_case_{k}"),
                (1, k as usize, 10 + k, k as usize),
            );
        }
        seen.insert("md5".into(), (3, 2, 5, 0));
        seen.insert("sha1_hex".into(), (1, 1, 4, 99));
        let mut got = families(seen);
        got.sort_by_key(|(_, w)| w.3);
        assert_eq!(
            got,
            [
                ("md5".to_string(), (3, 2, 5, 0)),
                ("test_case_1…40".to_string(), (1, 40, 50, 1)),
                ("sha1_hex".to_string(), (1, 1, 4, 99)),
            ]
        );
    }

    #[test]
    fn a_dotted_run_shows_its_stretches() {
        let mut v = Visible::default();
        v.add_text("x = connection.schema_editor.create_model(y)");
        assert!(v.has("schema_editor"));
        assert!(v.has("connection.schema_editor"));
        assert!(v.has("schema_editor.create_model"));
        assert!(!v.has("schema"));
    }
}

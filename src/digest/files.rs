//! Files touched by the trimmed tool calls: paths read, written or edited, with the message
//! numbers where. File tools are read from their arguments; shell commands from their words.

use super::Entry;
use crate::message::Block;
use crate::tokens::estimate_text;

/// How a call touched a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TouchKind {
    /// Read, listed or searched.
    Read,
    /// Edited in place.
    Edited,
    /// Written whole (created or overwritten).
    Written,
}

impl TouchKind {
    /// The verb: read, edited, written.
    pub fn word(self) -> &'static str {
        match self {
            TouchKind::Read => "read",
            TouchKind::Edited => "edited",
            TouchKind::Written => "written",
        }
    }
}

/// One file and the calls that touched it.
#[derive(Debug, Clone, PartialEq)]
pub struct Touch {
    /// The path as the call spelled it.
    pub path: String,
    /// (kind, message number of the call), in order.
    pub by: Vec<(TouchKind, u64)>,
}

/// Extensions that make a bare word a file name.
const EXTENSIONS: [&str; 40] = [
    "py", "rs", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp",
    "hpp", "cs", "rb", "php", "swift", "scala", "sh", "md", "rst", "txt", "toml", "yaml", "yml",
    "json", "cfg", "ini", "xml", "html", "css", "sql", "lock", "proto", "vue", "svelte", "patch",
];

/// The files the trimmed calls of `history` touched, in order of first touch.
pub fn files_touched(history: &[Entry]) -> Vec<Touch> {
    let mut out: Vec<Touch> = Vec::new();
    let mut add =
        |path: String, kind: TouchKind, at: u64| match out.iter_mut().find(|t| t.path == path) {
            Some(t) => {
                if !t.by.contains(&(kind, at)) {
                    t.by.push((kind, at));
                }
            }
            None => out.push(Touch {
                path,
                by: vec![(kind, at)],
            }),
        };
    for e in history.iter().filter(|e| !e.kept) {
        for b in &e.message.blocks {
            if let Block::ToolCall {
                name, arguments, ..
            } = b
            {
                for (path, kind) in touches(name, &crate::message::call_arguments(arguments)) {
                    add(path, kind, e.number);
                }
            }
        }
    }
    out
}

/// The files one call touches, with what it does to each.
pub(crate) fn touches(tool: &str, arguments: &str) -> Vec<(String, TouchKind)> {
    let v: serde_json::Value = serde_json::from_str(arguments).unwrap_or(serde_json::Value::Null);
    let get = |k: &str| v.get(k).and_then(|s| s.as_str());
    let tool = tool.to_ascii_lowercase();
    let path = ["filePath", "file_path", "path", "notebook_path", "file"]
        .iter()
        .find_map(|k| get(k));
    // Editor-style tools say what they do in a `command` argument.
    let sub = get("command").unwrap_or("");
    let file_kind = match tool.as_str() {
        "write" | "create" | "create_file" | "write_file" => Some(TouchKind::Written),
        "edit" | "multiedit" | "str_replace" | "patch" | "notebookedit" => Some(TouchKind::Edited),
        "read" | "view" | "cat" | "read_file" | "list" | "ls" | "glob" | "grep" => {
            Some(TouchKind::Read)
        }
        _ if path.is_some() => Some(match sub {
            "create" => TouchKind::Written,
            "str_replace" | "insert" | "undo_edit" => TouchKind::Edited,
            _ => TouchKind::Read,
        }),
        _ => None,
    };
    if let (Some(kind), Some(p)) = (file_kind, path) {
        return vec![(p.to_string(), kind)];
    }
    if tool == "apply_patch" {
        let text = get("input").or(get("patch")).unwrap_or(arguments);
        return patch_files(text);
    }
    let command = ["command", "cmd", "script"]
        .iter()
        .find_map(|k| match v.get(*k) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Array(a)) => Some(
                a.iter()
                    .filter_map(|x| x.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        });
    command.map(|c| shell_files(&c)).unwrap_or_default()
}

/// Files named by a patch (`*** Update File: p`, `+++ b/p`).
fn patch_files(text: &str) -> Vec<(String, TouchKind)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let found = [
            ("*** Update File: ", TouchKind::Edited),
            ("*** Add File: ", TouchKind::Written),
            ("+++ b/", TouchKind::Edited),
        ]
        .iter()
        .find_map(|(p, k)| {
            line.strip_prefix(p)
                .map(|rest| (rest.trim().to_string(), *k))
        });
        if let Some(f) = found {
            if !f.0.is_empty() && !out.iter().any(|(p, _)| *p == f.0) {
                out.push(f);
            }
        }
    }
    out
}

/// Files named in a shell command, with what the command does to them: the target of `>`,
/// `>>`, `tee` or `cat > f <<EOF` is written, a file under `sed -i`, `patch` or `git apply` is
/// edited, any other is read.
fn shell_files(command: &str) -> Vec<(String, TouchKind)> {
    // Only the command lines, not a here-document's body.
    let mut script = String::new();
    let mut heredoc_end: Option<String> = None;
    for line in command.lines() {
        if let Some(end) = &heredoc_end {
            if line.trim() == end {
                heredoc_end = None;
            }
            continue;
        }
        if let Some(at) = line.find("<<") {
            let tag = line[at + 2..]
                .trim_start_matches('-')
                .trim()
                .trim_matches(|c| c == '\'' || c == '"')
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_matches(|c| c == '\'' || c == '"')
                .to_string();
            if !tag.is_empty() {
                heredoc_end = Some(tag);
            }
        }
        script.push_str(line);
        script.push('\n');
    }
    let mut out: Vec<(String, TouchKind)> = Vec::new();
    for segment in script.split(['\n', ';', '|', '&']) {
        let words: Vec<&str> = segment.split_whitespace().collect();
        let in_place = words
            .windows(2)
            .any(|w| w[0] == "sed" && w[1].starts_with("-i"))
            || words.first().is_some_and(|w| *w == "patch")
            || words.windows(2).any(|w| w == ["git", "apply"]);
        let mut redirect = false;
        for (k, w) in words.iter().enumerate() {
            if matches!(*w, ">" | ">>") || (*w == "tee" && k + 1 < words.len()) {
                redirect = true;
                continue;
            }
            let (word, glued) = match w.strip_prefix(">>").or_else(|| w.strip_prefix('>')) {
                Some(rest) if !rest.is_empty() => (rest, true),
                _ => (*w, false),
            };
            let Some(path) = path_word(word) else {
                redirect = false;
                continue;
            };
            let kind = if redirect || glued {
                TouchKind::Written
            } else if in_place {
                TouchKind::Edited
            } else {
                TouchKind::Read
            };
            redirect = false;
            if !out.iter().any(|(p, k)| *p == path && *k == kind) {
                out.push((path, kind));
            }
        }
    }
    out
}

/// The word as a file path, when it looks like one: it has a `/` or a known extension, and is
/// not an option, a URL, a glob or a redirect of a descriptor.
fn path_word(word: &str) -> Option<String> {
    let w = word
        .trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | '(' | ')' | ',' | ':'))
        .trim_end_matches(['.', ';']);
    if w.len() < 3
        || w.len() > 200
        || w.starts_with('-')
        || w.contains("://")
        || w.contains(['*', '$', '{', '}', '=', '<', '>', '\\'])
        || w.starts_with("/dev/")
        || ((w.starts_with("s/") || w.starts_with("y/")) && w.matches('/').count() >= 3)
        || w.chars()
            .all(|c| c.is_ascii_digit() || c == '/' || c == '.')
    {
        return None;
    }
    // a sed address or command (`75s/`, `1,20p`, `12s/a/b/`), and a directory (`tests/`)
    let after_address = w.trim_start_matches(|c: char| c.is_ascii_digit() || c == ',');
    if w.ends_with('/')
        || (after_address.len() < w.len() && after_address.starts_with(['s', 'y', 'p', 'd', '/']))
    {
        return None;
    }
    let has_ext = w
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext));
    // without an extension, a path joins two segments (`/def` is a sed address, not a file)
    let slashy = w.split('/').filter(|s| !s.is_empty()).count() >= 2
        && w.chars().any(|c| c.is_ascii_alphabetic());
    (has_ext || slashy).then(|| w.to_string())
}

/// `Files: a.py (read #3 #9, edited #12) · b.rs (written #15)`, the most recently touched files
/// first when they do not all fit in `budget` tokens.
pub fn section(list: &[Touch], budget: u32) -> String {
    if list.is_empty() {
        return String::new();
    }
    let mut order: Vec<&Touch> = list.iter().collect();
    // Newest touch first, so the budget keeps what was worked on last.
    order.sort_by_key(|t| std::cmp::Reverse(t.by.iter().map(|b| b.1).max().unwrap_or(0)));
    let mut out = String::from("Files touched:");
    let mut shown = 0;
    for t in &order {
        let item = item(t);
        let next = format!("{out}{}{item}", if shown == 0 { " " } else { " · " });
        if estimate_text(&next) > budget {
            break;
        }
        out = next;
        shown += 1;
    }
    if shown == 0 {
        return String::new();
    }
    if shown < order.len() {
        let more = format!(" · {} more", order.len() - shown);
        if estimate_text(&out) + estimate_text(&more) <= budget {
            out.push_str(&more);
        }
    }
    out
}

/// `a.py (read #3 #9, edited #12)`.
fn item(t: &Touch) -> String {
    let mut kinds: Vec<TouchKind> = t.by.iter().map(|b| b.0).collect();
    kinds.sort();
    kinds.dedup();
    let parts: Vec<String> = kinds
        .iter()
        .map(|k| {
            let at: Vec<String> =
                t.by.iter()
                    .filter(|b| b.0 == *k)
                    .map(|b| format!("#{}", b.1))
                    .collect();
            format!("{} {}", k.word(), at.join(" "))
        })
        .collect();
    format!("{} ({})", t.path, parts.join(", "))
}

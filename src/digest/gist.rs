//! What the digest reads of a tool result: a few facts taken from its text once, so that a cut
//! over a long history holds these instead of every output.

use std::borrow::Cow;
use std::collections::HashSet;

use super::Entry;
use crate::compress::{lines, looks_like_failure};
use crate::message::Block;

/// Most bytes of a result's first failure line.
pub(super) const FAILURE_CAP_BYTES: usize = 120;

/// The facts of one tool result the digest uses.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gist {
    /// How many lines the result has.
    pub lines: usize,
    /// The exit status it states, when it states one.
    pub exit: Option<i64>,
    /// Its first failure line, on one line and capped.
    pub failure_line: Option<String>,
    /// The distinct names (paths, identifiers) it shows, in order of first use, one per line
    /// (one allocation for all: a cut holds the gists of a whole session).
    pub names: String,
}

impl Gist {
    /// The gist of a result with this text.
    pub fn of(text: &str) -> Gist {
        let all = lines(text);
        let mut seen = HashSet::new();
        Gist {
            lines: all.len(),
            exit: super::toc::exit_status(text),
            failure_line: all
                .iter()
                .find(|l| looks_like_failure(l) && !l.contains("<returncode>"))
                .map(|l| super::collapse(l, FAILURE_CAP_BYTES)),
            names: super::names::names_in(text)
                .filter(|n| seen.insert(*n))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    /// Its names, in order of first use.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.split('\n').filter(|n| !n.is_empty())
    }

    /// The gists of the tool results of a message, in order.
    pub fn of_message(message: &crate::message::Message) -> Vec<Gist> {
        message
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult { text, .. } => Some(Gist::of(text)),
                _ => None,
            })
            .collect()
    }
}

/// One tool result of an entry: the call it answers, whether it is an error, its gist.
pub struct ResultOf<'a> {
    /// The id of the call it answers.
    pub call_id: &'a str,
    /// The tool reported an error.
    pub is_error: bool,
    /// What the digest reads of it.
    pub gist: Cow<'a, Gist>,
}

impl<'a> Entry<'a> {
    /// The tool results of the message in order, each with its gist: the one the entry
    /// carries, or else taken from the result's text.
    pub fn results(&self) -> impl Iterator<Item = ResultOf<'a>> + 'a {
        let gists = self.gists;
        self.message
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolResult {
                    call_id,
                    text,
                    is_error,
                    ..
                } => Some((call_id.as_str(), text.as_str(), *is_error)),
                _ => None,
            })
            .enumerate()
            .map(move |(k, (call_id, text, is_error))| ResultOf {
                call_id,
                is_error,
                gist: match gists.and_then(|g| g.get(k)) {
                    Some(g) => Cow::Borrowed(g),
                    None => Cow::Owned(Gist::of(text)),
                },
            })
    }
}

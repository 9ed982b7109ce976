//! Tool exchanges: the groups of messages that must leave or stay together. An assistant message
//! that makes tool calls forms one unit with every message carrying a result of those calls;
//! every other message is a unit of its own.

use std::collections::HashMap;

use crate::facts::MsgInfo;

/// One unit.
#[derive(Debug, Clone)]
pub struct Unit {
    /// Indices of its messages, ascending.
    pub members: Vec<usize>,
    /// It makes tool calls (a tool exchange).
    pub exchange: bool,
    /// Estimated tokens as sent.
    pub tokens: u64,
    /// Involves a protected tool.
    pub protected: bool,
}

impl Unit {
    /// Index of its first message.
    pub fn first(&self) -> usize {
        self.members[0]
    }
}

/// The units of a history, ordered by their first message, and the unit of each message.
#[derive(Debug, Clone)]
pub struct Units {
    /// All units in order of their first message.
    pub units: Vec<Unit>,
    /// For each message, the index of its unit in `units`.
    pub unit_of: Vec<usize>,
}

/// Groups a (valid) history into units. A result whose call is unknown stays a unit of its own.
pub fn group(infos: &[&MsgInfo]) -> Units {
    let n = infos.len();
    // Union-find over message indices, joined through call ids.
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut caller: HashMap<&str, usize> = HashMap::new();
    for (i, info) in infos.iter().enumerate() {
        for r in &info.results {
            if let Some(&c) = caller.get(r.as_str()) {
                let (a, b) = (find(&mut parent, i), find(&mut parent, c));
                parent[a.max(b)] = a.min(b);
            }
        }
        for (id, _) in &info.calls {
            caller.insert(id.as_str(), i);
        }
    }
    let mut index_of_root: HashMap<usize, usize> = HashMap::new();
    let mut units: Vec<Unit> = Vec::new();
    let mut unit_of = vec![0; n];
    for (i, info) in infos.iter().enumerate() {
        let root = find(&mut parent, i);
        let u = *index_of_root.entry(root).or_insert_with(|| {
            units.push(Unit {
                members: Vec::new(),
                exchange: false,
                tokens: 0,
                protected: false,
            });
            units.len() - 1
        });
        let unit = &mut units[u];
        unit.members.push(i);
        unit.exchange |= !info.calls.is_empty();
        unit.tokens += u64::from(info.sent_tokens);
        unit.protected |= info.protected;
        unit_of[i] = u;
    }
    Units { units, unit_of }
}

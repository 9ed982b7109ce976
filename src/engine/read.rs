//! Reading the messages of a request that the session has not seen before.

use std::collections::HashMap;

use serde_json::Value;

use super::Engine;
use crate::error::{Error, Result};
use crate::facts::{Blob, MsgInfo, NewMessage, Output, Part, Reading};
use crate::fingerprint::Fp;
use crate::format::Format;
use crate::message::Block;
use crate::store::Store;

/// The new messages of a request (a suffix of it) and the blobs of their compressed results.
pub(super) struct Fresh<'t> {
    pub messages: Vec<NewMessage<'t>>,
    pub blobs: Vec<Blob>,
}

/// Reads every message from `first_new`, the first unknown fingerprint, on (every one before
/// it is known; `prev` is the one just before it).
pub(super) fn read_new<'t, S: Store>(
    engine: &Engine<S>,
    raws: &[&'t str],
    fps: &[Fp],
    (first_new, prev): (usize, Option<&MsgInfo>),
    format: Format,
    trim_at: u32,
) -> Result<Fresh<'t>> {
    let adapter = format.adapter();
    let reading = Reading {
        compress_over_tokens: engine.config.compress_over_tokens,
        compress_text_over_tokens: engine.config.compress_over_tokens.max(trim_at / 4),
        protected_tools: &engine.config.protected_tools,
    };
    let mut prev_turn = prev.map_or(0, |m| m.turn);
    let mut local_calls: HashMap<String, String> = HashMap::new();
    let mut fresh = Fresh {
        messages: Vec::new(),
        blobs: Vec::new(),
    };
    for i in first_new..raws.len() {
        let value: Value = crate::format::parse_message(raws[i], i)?;
        let view = adapter.view(&value, i)?;
        let name_of = |id: &str| {
            local_calls
                .get(id)
                .or_else(|| engine.call_names.get(id))
                .cloned()
        };
        if let Some(orphan) = view.result_ids().find(|id| name_of(id).is_none()) {
            return Err(Error::OrphanResult {
                index: i,
                call_id: orphan.chars().take(80).collect(),
            });
        }
        let (info, blobs) = MsgInfo::read(fps[i], &view, prev_turn, &reading, &name_of);
        prev_turn = info.turn;
        let mut outputs = Vec::new();
        for b in &view.blocks {
            if let Block::ToolResult {
                call_id,
                name,
                text,
                ..
            } = b
            {
                outputs.push(Output {
                    call_id: call_id.clone(),
                    tool_name: name.clone().or_else(|| name_of(call_id)),
                    blank: text.trim().is_empty(),
                    blob_id: info
                        .compressed
                        .iter()
                        .find(|c| c.part == Part::ToolResult(call_id.clone()))
                        .map(|c| c.blob_id.clone()),
                });
            }
        }
        let (tool_call_id, tool_name) = match (outputs.first(), info.calls.first()) {
            (Some(o), _) => (Some(o.call_id.clone()), o.tool_name.clone()),
            (None, Some((id, name))) => (Some(id.clone()), Some(name.clone())),
            (None, None) => (None, None),
        };
        for (id, name) in &info.calls {
            local_calls.insert(id.clone(), name.clone());
        }
        fresh.blobs.extend(blobs.into_iter().map(|(b, _)| b));
        fresh.messages.push(NewMessage {
            info,
            json: raws[i],
            format,
            outputs,
            tool_name,
            tool_call_id,
        });
    }
    Ok(fresh)
}

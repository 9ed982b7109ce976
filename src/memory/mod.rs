//! Memory across sessions and on demand: the memory bank of short memories with vectors
//! ([`bank`]), recall of memories into the pointer on trim ([`recall`]), and `compact_context`,
//! the memory-aware scorer that keeps the messages that matter for a query ([`compact_context`]),
//! and the memories a cut writes to the bank ([`from_cut`]).

pub mod bank;
pub mod compact_context;
pub mod from_cut;
pub mod recall;

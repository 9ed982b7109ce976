//! Replays all real sessions request by request at several thresholds and checks the trim
//! invariants on every rewritten request.

mod common;

use common::invariants::{check, Tally};
use common::{engine, load_sessions, replay, requests};
use smarter_compact::format::Format;

#[test]
fn all_real_sessions_keep_the_invariants() {
    let sessions = load_sessions();
    assert_eq!(sessions.len(), 32, "expected the 32 real sessions");
    for trim_at in [8_000u32, 16_000, 32_000] {
        let mut tally = Tally::default();
        let (mut superseded, mut superseded_tokens) = (0, 0);
        for (id, history) in &sessions {
            let reqs = requests(history);
            let mut e = engine(trim_at);
            let steps = replay(&mut e, &reqs, Format::OpenAi);
            check(id, &steps, Format::OpenAi, trim_at, 3, &mut tally);
            for s in steps.iter().filter(|s| s.stats.trimmed) {
                superseded += s.stats.superseded_messages;
                superseded_tokens += s.stats.superseded_tokens;
            }
            // Same input → same bytes, on a fresh engine.
            let again = replay(&mut engine(trim_at), &reqs, Format::OpenAi);
            for (a, b) in steps.iter().zip(&again) {
                assert_eq!(a.output, b.output, "{id}: not deterministic");
            }
        }
        eprintln!(
            "trim_at={trim_at} requests={} trims={} prefix_reuse={}/{} over_minimum={} over_guard={} superseded={superseded} (≈{superseded_tokens} tokens)",
            tally.requests, tally.trims, tally.reused, tally.reusable, tally.over_minimum, tally.over_guard
        );
        assert!(tally.violations.is_empty(), "{:#?}", tally.violations);
        assert!(tally.trims > 0, "no trims at {trim_at}");
        assert!(superseded > 0, "no result superseded at {trim_at}");
        assert_eq!(tally.reused, tally.reusable);
    }
}

// context_status as text: the last trim's superseded results are named, and only when there are some.
import assert from "node:assert/strict";
import { test } from "node:test";
import { statusText } from "../../npm/js/status.js";

const status = (lastTrim) => ({
  version: "0.1.0",
  session_id: "ses_status",
  store: { ok: true, backend: "node:sqlite", path: "/state/ses_status.db" },
  messages: 40,
  trims: 1,
  last_trim: lastTrim,
  usage: {
    requests: 3,
    before_tokens: 9000,
    after_tokens: 4000,
    prefix_reused: 2,
    over_limit: 0,
    compressed: 1,
  },
  fail_opens: 0,
});

test("the last trim names its superseded results and what they saved", () => {
  const base = {
    seq: 2,
    removed_messages: 12,
    removed_tokens: 4100,
    manual: false,
    cache_cold: false,
    lifted: false,
  };
  const text = statusText(status({ ...base, superseded_messages: 3, superseded_tokens: 1250 }));
  assert.match(
    text,
    /trims: 1 \(last: #2, 12 messages ≈4\.1k tokens, 3 superseded results ≈1\.3k tokens\)/,
  );
  const one = statusText(status({ ...base, superseded_messages: 1, superseded_tokens: 80 }));
  assert.match(one, /, 1 superseded result ≈80 tokens\)/);
  const none = statusText(status({ ...base, superseded_messages: 0, superseded_tokens: 0 }));
  assert.match(none, /\(last: #2, 12 messages ≈4\.1k tokens\)/);
  assert.doesNotMatch(none, /superseded/);
});

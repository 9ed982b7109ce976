// The bench's continuity measure (bench/lib/continuity.mjs): the names of the next assistant
// messages that the full request showed, looked up in the request a compactor sent under a cut.
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CONTINUITY_ARMS,
  CONTINUITY_BEGIN,
  CONTINUITY_END,
  continuitySection,
  decodedText,
  extractNames,
  nameKind,
  nextAssistants,
  occurs,
  runContinuity,
  scoreRequest,
} from "../../bench/lib/continuity.mjs";
import { sessionFiles } from "../../bench/lib/real-sessions.mjs";
import { sectionOf, spliceSection } from "../../bench/lib/report-merge.mjs";
import { loadSession, requests } from "../../npm/js/sessions.js";
import { scratchDir } from "./helpers/scratch.mjs";

const names = (text) => extractNames(text).map((x) => `${x.kind}:${x.name}`);

test("name extraction: paths, identifiers, numbers, and the stoplist", () => {
  assert.equal(nameKind("django/db/models/query.py"), "path");
  assert.equal(nameKind("query.py"), "path", "a file extension makes a path");
  assert.equal(nameKind("/testbed/django/forms"), "path");
  assert.equal(nameKind("/def"), null, "one segment after a slash is not a path");
  assert.equal(nameKind("collect_related"), "ident", "snake_case");
  assert.equal(nameKind("getFieldValue"), "ident", "camelCase");
  assert.equal(nameKind("QuerySet"), "ident", "CamelCase");
  assert.equal(nameKind("settings.configure"), "ident", "dotted");
  assert.equal(nameKind("URLs"), null, "a plural acronym");
  assert.equal(nameKind("the"), null);
  assert.equal(nameKind("Django"), null, "a capitalised word");
  assert.equal(nameKind("a_b"), null, "under 4 characters");
  assert.equal(nameKind("2012"), "number");
  assert.equal(nameKind("7"), null, "one digit");
  for (const stop of ["/testbed", "__init__", "/dev/null", "e.g", "__main__"])
    assert.equal(nameKind(stop), null, `stoplist: ${stop}`);
  assert.deepEqual(
    names(
      "Edit /testbed/django/db/models/deletion.py: collect_related in QuerySet.delete at line 284, see e.g. /dev/null and __init__; then x.py; fast-delete-path",
    ),
    [
      "path:/testbed/django/db/models/deletion.py",
      "ident:collect_related",
      "ident:QuerySet.delete",
      "number:284",
      "path:x.py",
    ],
  );
  assert.deepEqual(names("printf 'foo_bar\\nbaz_qux'"), ["ident:foo_bar", "ident:baz_qux"]);
  assert.deepEqual(names("same_name then same_name again"), ["ident:same_name"], "each once");
});

test("occurs: a name counts only where it is not inside a longer one", () => {
  assert.ok(occurs("at line 12.", "12"));
  assert.ok(!occurs("in 2012", "12"));
  assert.ok(!occurs("collect_related()", "collect"));
  assert.ok(occurs("x = collect(y)", "collect"));
  assert.ok(occurs("open django/db/models/query.py:88", "django/db/models/query.py"));
});

test("scoring a hand-built request: names the full request showed, kept or missing", () => {
  const tool = (content) => ({ role: "tool", tool_call_id: "c1", content });
  const full = [
    { role: "user", content: "Fix the bug in src/app/models.py" },
    tool("def load_config(path):\n    return parse_yaml(path)  # line 118"),
  ];
  const next = [
    {
      role: "assistant",
      content: "I will edit load_config in src/app/models.py",
      tool_calls: [
        {
          id: "c2",
          type: "function",
          function: {
            name: "bash",
            arguments: JSON.stringify({ command: "sed -n 110,130p src/app/models.py" }),
          },
        },
      ],
    },
    { role: "assistant", content: "parse_yaml and brand_new_helper: see line 118" },
  ];
  // shown: src/app/models.py, load_config, parse_yaml, 118 (110, 130, brand_new_helper were not)
  const kept = [full[0], tool("[smarter-compact] trimmed; load_config is at line 118")];
  const r = scoreRequest({ full, rewritten: kept, next });
  assert.deepEqual(r.names.map((x) => x.name).sort(), [
    "118",
    "load_config",
    "parse_yaml",
    "src/app/models.py",
  ]);
  assert.deepEqual(
    r.missing.map((x) => x.name),
    ["parse_yaml"],
  );
  assert.equal(r.score, 0.75);
  assert.equal(scoreRequest({ full, rewritten: full, next }).score, 1, "nothing left out");
  assert.equal(scoreRequest({ full, rewritten: [], next }).score, 0, "everything left out");
  assert.equal(
    scoreRequest({ full, rewritten: full, next: [{ role: "assistant", content: "Done." }] }),
    null,
    "no name to look for",
  );
  assert.match(decodedText(next), /sed -n 110,130p/, "tool-call arguments decoded");
  const history = [full[0], next[0], full[1], next[1]];
  assert.deepEqual(nextAssistants(history, 1), [next[0], next[1]]);
  assert.deepEqual(nextAssistants(history, 2), [next[1]]);
});

test("a run on 3 real sessions at 8k: cuts, scores in [0,1], the digest helps", async () => {
  const files = sessionFiles(3);
  const arms = { bare: CONTINUITY_ARMS.bare, all: CONTINUITY_ARMS.all };
  const res = await runContinuity({
    sessions: files,
    trimAts: [8000],
    arms,
    stateRoot: scratchDir("sc-continuity-"),
  });
  const cell = (arm) => res.cells.find((c) => c.arm === arm && c.trimAt === 8000);
  const [bare, all] = [cell("bare"), cell("all")];
  for (const c of [bare, all]) {
    assert.ok(c.underCut > 0, `${c.arm}: requests under a cut (${c.underCut})`);
    assert.ok(c.scored > 0 && c.scored <= c.underCut, `${c.arm}: scored ${c.scored}`);
    assert.equal(c.failOpens, 0, `${c.arm}: no fail-open`);
  }
  for (const r of res.perRequest)
    assert.ok(r.score >= 0 && r.score <= 1, `${r.arm} ${r.session} #${r.request}: ${r.score}`);
  // the full request against itself: every name is there
  let selfScored = 0;
  for (const f of files) {
    const { history } = loadSession(f);
    for (const req of requests(history)) {
      const r = scoreRequest({
        full: req,
        rewritten: req,
        next: nextAssistants(history, req.length),
      });
      if (!r) continue;
      selfScored++;
      assert.equal(r.score, 1);
    }
  }
  assert.ok(selfScored >= bare.scored, `the full requests scored: ${selfScored}`);
  const bareRows = res.perRequest.filter((r) => r.arm === "bare");
  assert.ok(
    bareRows.some((r) => r.score < 1 && r.missing.length > 0),
    "the bare cut loses a name somewhere",
  );
  assert.equal(bare.digest?.mean ?? 0, 0, "no digest in the bare arm");
  assert.ok(all.digest && all.digest.mean > 0, `the all arm's digest: ${all.digest?.mean}`);
  assert.ok(all.digest.max <= 8000, "the digest stays a small part of trim_at");
  assert.ok(all.score > bare.score, `all ${all.score} > bare ${bare.score} on the mean`);
  assert.ok(all.digest.mean <= 0.05 * 8000, `mean digest ${all.digest.mean} within 5% of trim_at`);
  // trim regret: the recorded agents run some calls again after a cut has removed the first
  assert.ok(Number.isInteger(bare.repeats) && bare.repeats > 0, `repeats: ${bare.repeats}`);

  // the section, and merging it into a report twice gives the same file
  const section = continuitySection(res, { forTables: true });
  assert.match(section, /\| \*\*bare\*\* \| 8k \| \d\.\d\d \|/);
  const markers = { begin: CONTINUITY_BEGIN, end: CONTINUITY_END, before: "## Speed and scale" };
  const once = spliceSection(
    "# r\n\n## Real sessions\n\nx\n\n## Speed and scale\n",
    section,
    markers,
  );
  assert.ok(once.indexOf(CONTINUITY_END) < once.indexOf("## Speed and scale"));
  assert.equal(spliceSection(once, section, markers), once);
});

test("sectionOf: a report rebuilt without a phase's results finds that phase's old section", () => {
  const report = [
    "# r",
    "## Real sessions",
    "rows",
    "",
    CONTINUITY_BEGIN,
    "## Continuity after a cut",
    "table",
    CONTINUITY_END,
    "",
    "## Speed and scale",
    "fast",
  ].join("\n");
  assert.equal(sectionOf(report, "## Real sessions"), "## Real sessions\nrows", "up to a marker");
  assert.equal(
    sectionOf(report, CONTINUITY_BEGIN, CONTINUITY_END),
    [CONTINUITY_BEGIN, "## Continuity after a cut", "table", CONTINUITY_END].join("\n"),
  );
  assert.equal(sectionOf(report, "## Speed and scale"), "## Speed and scale\nfast", "to the end");
  assert.equal(sectionOf(report, "## Idle gaps"), null);
  assert.equal(sectionOf(`${CONTINUITY_BEGIN}\nno end`, CONTINUITY_BEGIN, CONTINUITY_END), null);
});

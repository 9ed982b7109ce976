// Runs one query through the SQL tool's runner (js/sql.js) in this runtime, so the bounds tests
// reach every backend (node:sqlite under Node 22, bun:sqlite under Bun). Prints one JSON line:
// `{"rows": …}` or `{"code": …, "message": …}`.
//
// usage: <runtime> sql-run.mjs '<runReadonlySql options as JSON>'
import { runReadonlySql } from "../../../npm/js/sql.js";

const opts = JSON.parse(process.argv[2]);
const out = await runReadonlySql(opts).then(
  (r) => ({ rows: r.rows }),
  (e) => ({ code: e.code, message: e.message }),
);
process.stdout.write(`${JSON.stringify(out)}\n`);

// The idle phase: the mechanism's tasks with idle gaps on a simulated clock, driven through the
// smarter-compact arm twice at the same settings, with cache-cold cuts on (the engine's default)
// and off (a cache lifetime of 0 in the arm's config.toml). The meter's prompt cache expires
// after the gap of IDLE.ttlMs, so a request after a long gap writes its whole prompt.
import { engineModule } from "../../npm/js/wasm.js";
import { runTrial, scores } from "./mechanism.mjs";
import { cost } from "./meter.mjs";
import { idleGaps, makeTask } from "./tasks.mjs";

/** The two variants of the idle phase, in report order. */
export const IDLE_VARIANTS = ["on", "off"];

/** The bench config of one variant: the smarter-compact arm as configured, plus, for "off", a
 * config.toml that turns cache-cold cuts off. */
export function variantConfig(config, variant, params) {
  if (variant === "on") return config;
  const arm = config.arms["smarter-compact"];
  return {
    ...config,
    arms: { ...config.arms, "smarter-compact": { ...arm, toml: params.offToml } },
  };
}

/** What the report and the tests need of one idle trial. `trimTo`: trim_to_fraction × trim_at,
 * in the engine's tokens (its stats' unit). */
export function idleSummary(tr, variant, prices, { ttlMs, trimTo }) {
  const long = tr.rows.filter((r) => r.gapMs != null && r.gapMs > ttlMs);
  return {
    task: tr.task,
    seed: tr.seed,
    variant,
    ...scores(tr),
    totals: tr.totals,
    cost: Object.fromEntries(Object.entries(prices).map(([k, p]) => [k, cost(tr.rows, p)])),
    trims: tr.armStats.trims,
    coldCuts: tr.armStats.coldTrims,
    failOpens: tr.armStats.failOpens,
    recalls: tr.answers.filter((a) => a.tool).length,
    gaps: tr.rows.length - 1,
    longGaps: long.length,
    // each request after a long gap: whether it was a cache-cold cut, the engine's count of what
    // went out, and whether it was above trim_to (a cold cut is, by the engine's rule: it cuts
    // only above trim_to; an uncut request is above it when what it sent is)
    longGapRequests: long.map((r) => {
      const cold = r.events.includes("cold");
      return {
        at: tr.rows.indexOf(r),
        gapMs: r.gapMs,
        cold,
        engineTokens: r.engine,
        aboveTrimTo: cold || r.engine > trimTo,
      };
    }),
    expired: tr.rows.filter((r) => r.expired).length,
  };
}

/** The engine's settings the idle section states: the cache lifetime in force per variant (the
 * `default` entry of its cache_ttl table, seconds) and the loop guard's parameters. */
async function idleEngine(config, params, engine) {
  const glue = await engineModule();
  const resolve = (toml) =>
    glue.resolveConfig({
      env: {},
      toml,
      projectToml: null,
      config: config.arms["smarter-compact"].config ?? {},
    });
  const ttl = (c) => c.cache_ttl_table.find(([p]) => p === "default")?.[1] ?? null;
  const on = resolve(null);
  const trimAt = engine.trimAt[config.model];
  return {
    trimAt,
    trimToFraction: engine.trimToFraction,
    trimTo: engine.trimToFraction * trimAt,
    minFree: on.min_free_fraction * trimAt,
    keepLastExchanges: on.keep_last_exchanges,
    ttlOn: ttl(on),
    ttlOff: ttl(resolve(params.offToml)),
  };
}

/** Runs the idle phase over `config.tasks` × `config.seeds`, both variants per task and seed.
 * `engine`: the engine's trim_at per model and trim_to_fraction (report-facts.mjs). */
export async function idlePhase(config, params, { stateRoot, engine, log = () => {} }) {
  const settings = await idleEngine(config, params, engine);
  const trimTo = settings.trimTo;
  const trials = [];
  for (const spec of config.tasks) {
    for (const seed of config.seeds) {
      const task = makeTask(spec, seed);
      const clock = { startMs: params.startMs, ttlMs: params.ttlMs, gaps: idleGaps(task, params) };
      for (const variant of IDLE_VARIANTS) {
        const tr = await runTrial(task, "smarter-compact", variantConfig(config, variant, params), {
          stateRoot,
          tag: `idle-${variant}`,
          clock,
        });
        const s = idleSummary(tr, variant, config.prices.models, { ttlMs: params.ttlMs, trimTo });
        trials.push(s);
        log(
          `idle ${spec.id} seed ${seed} cold cuts ${variant.padEnd(3)} score ${s.score.toFixed(2)} cold cuts ${s.coldCuts}/${s.longGaps} long gaps, trims ${s.trims}, hit ${(s.totals.hit * 100).toFixed(0)}% $${s.cost.haiku.toFixed(3)}`,
        );
      }
    }
  }
  return {
    config: { seeds: config.seeds, tasks: config.tasks, model: config.model, cache: config.cache },
    params,
    engine: settings,
    trials,
  };
}

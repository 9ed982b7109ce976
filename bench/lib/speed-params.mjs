// Fixed parameters of the speed measurements (bench/lib/speed-child.mjs), shared with the report
// so that its prose states what the children did.
export const SPEED = {
  /** Messages each timed request adds to the session (an assistant tool call and its result). */
  newPerRequest: 2,
  /** Log lines per tool output in the search store. */
  linesPerOutput: 100,
  /** Line-id lookups timed per store size. */
  idLookups: 40,
  /** Word queries timed per store size. */
  wordQueries: ["sticky_cut", "fingerprint ERROR", "annotate latency_ms", "migrate"],
  /** LIKE scans timed per store size (the reference). */
  likeScans: 5,
  /** Steady requests timed at full length after the RSS run's growth. */
  steadyAtFull: 10,
  /** Most incremental requests timed in the ingest job. */
  maxIncremental: 200,
};

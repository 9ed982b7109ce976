// The per-install secret between the CLI (`enable`, `proxy start|stop|status`, the MCP server's
// `--ensure-proxy`) and the proxy it started: a random key in `<state dir>/context/proxy.secret`
// (mode 0600). `/health?challenge=…` answers with an HMAC of the challenge, the port the proxy
// listens on and its pid, so a process squatting on the port cannot pose as the proxy to these
// commands (the host CLI still sends its requests to whatever holds the port), and a
// relay in front of the real proxy (on another port) cannot either.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { resolveStateDir } from "../config.js";

/** `<state dir>/context/proxy.secret`. */
export function secretPath(stateDir) {
  return join(resolveStateDir(stateDir), "context", "proxy.secret");
}

/** The install's secret (64 hex digits), created (mode 0600) when there is none yet; a secret file
 * that others can read is made private again. */
export function installSecret(stateDir) {
  const file = secretPath(stateDir);
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, randomBytes(32).toString("hex"), { mode: 0o600, flag: "wx" });
  } catch (e) {
    if (e?.code !== "EEXIST") throw e;
  }
  if (process.platform !== "win32" && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const secret = readFileSync(file, "utf8").trim();
  if (!/^[0-9a-f]{64}$/.test(secret)) throw new Error(`${file} does not hold a proxy secret`);
  return secret;
}

/** The install's secret, or null when there is none (nothing is created). */
export function readSecret(stateDir) {
  try {
    const secret = readFileSync(secretPath(stateDir), "utf8").trim();
    return /^[0-9a-f]{64}$/.test(secret) ? secret : null;
  } catch {
    return null;
  }
}

/** A fresh challenge for `/health`. */
export function newChallenge() {
  return randomBytes(16).toString("hex");
}

/** The proof a proxy holding `secret` gives for `challenge` on `port` as process `pid`. */
export function proofOf(secret, challenge, port, pid) {
  return createHmac("sha256", secret)
    .update(`smarter-compact-proxy\n${challenge}\n${port}\n${pid}`)
    .digest("hex");
}

/** Whether `health` (a `/health` answer to `challenge` on `port`) proves it knows `secret`. */
export function proves(health, secret, challenge, port) {
  if (typeof health?.proof !== "string" || !Number.isInteger(health?.pid)) return false;
  const want = Buffer.from(proofOf(secret, challenge, port, health.pid), "hex");
  const got = Buffer.from(health.proof, "hex");
  return got.length === want.length && timingSafeEqual(got, want);
}

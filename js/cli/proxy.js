// `smarter-compact proxy [run|start|stop|status]`.
import { UsageError } from "./args.js";
import { ensureProxy, proxyHealth, proxyPort, runProxy, stopProxy } from "../proxy/daemon.js";

export async function proxyCommand({ sub = "status", flags }, out) {
  const opts = { stateDir: flags.stateDir, port: flags.port };
  const upstreams = { anthropic: flags.anthropicUpstream, openai: flags.openaiUpstream };
  switch (sub) {
    case "run": {
      const p = await runProxy({ ...opts, upstreams });
      out(
        `smarter-compact proxy on http://127.0.0.1:${p.port} → anthropic ${p.upstreams.anthropic}, openai ${p.upstreams.openai}`,
      );
      return new Promise(() => {}); // runs until SIGTERM/SIGINT
    }
    case "start": {
      const h = await ensureProxy(opts);
      out(
        `${h.started ? "started" : "already running"}: smarter-compact proxy on http://127.0.0.1:${h.port} (pid ${h.pid})`,
      );
      return 0;
    }
    case "stop": {
      const outcome = await stopProxy(opts);
      out(
        {
          stopped: "stopped the smarter-compact proxy",
          "not-running": "the smarter-compact proxy was not running",
          foreign: `something else answers on 127.0.0.1:${proxyPort(flags.port)} as the smarter-compact proxy without this install's secret: left alone`,
        }[outcome],
      );
      return outcome === "foreign" ? 1 : 0;
    }
    case "status": {
      const h = await proxyHealth(proxyPort(flags.port), { stateDir: flags.stateDir });
      if (flags.json) out(JSON.stringify(h ?? { ok: false, running: false }, null, 2));
      else
        out(
          h
            ? `${h.authentic ? "running" : "NOT this install's proxy (it cannot prove the secret)"} on http://127.0.0.1:${h.port} (pid ${h.pid}, since ${h.started_at}): ${h.requests} requests, ${h.rewritten} rewritten, ${h.fail_opens} fail-opens, ${h.sessions} sessions`
            : "not running",
        );
      return 0;
    }
    default:
      throw new UsageError(
        `proxy: expected run, start, stop or status, got ${JSON.stringify(sub)}`,
      );
  }
}

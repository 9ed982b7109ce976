// Real-model mode: the questions are answered by a real model behind an OpenAI-compatible
// Chat Completions endpoint instead of the oracle. Enabled only when BENCH_BASE_URL,
// BENCH_MODEL and BENCH_API_KEY are all set (never in CI, never by default).
//
// The feeding phase stays scripted (the same pages and assistant steps for every arm), so the
// model sees exactly what each arm sends; at each question the arm's request goes to the model
// with the arm's tool list. Recall tools (smarter-compact) are executed by the real engine;
// the data tool answers that the stream was consumed; other tools are unavailable.

/** The real-model client, or null when the environment does not ask for one. */
export function realModelFromEnv(env, cfg) {
  const base = env.BENCH_BASE_URL;
  const model = env.BENCH_MODEL;
  const key = env.BENCH_API_KEY;
  if (!base || !model || !key) return null;
  const url = `${base.replace(/\/+$/, "")}/chat/completions`;
  const usage = { requests: 0, prompt: 0, cached: 0, completion: 0, errors: 0 };
  return {
    model,
    url,
    usage,
    maxRounds: cfg.maxRounds,
    async complete(messages, tools) {
      const body = {
        model,
        messages,
        tools,
        temperature: cfg.temperature,
        max_tokens: cfg.maxTokens,
      };
      for (let attempt = 0; ; attempt++) {
        const res = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify(body),
        });
        if (res.ok) {
          const j = await res.json();
          usage.requests++;
          usage.prompt += j.usage?.prompt_tokens ?? 0;
          usage.cached += j.usage?.prompt_tokens_details?.cached_tokens ?? 0;
          usage.completion += j.usage?.completion_tokens ?? 0;
          return j.choices?.[0]?.message ?? { content: "" };
        }
        const text = await res.text();
        if ((res.status === 429 || res.status >= 500) && attempt < 4) {
          await new Promise((r) => setTimeout(r, 2000 * 2 ** attempt));
          continue;
        }
        usage.errors++;
        // a request the provider refuses (e.g. over its window) is an unanswered question
        return { content: `(request failed: HTTP ${res.status} ${text.slice(0, 200)})` };
      }
    },
  };
}

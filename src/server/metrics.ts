// GET /metrics: Prometheus text exposition (version 0.0.4). llama-server's `llamacpp:` names where it has
// them (prompt_tokens_total, tokens_predicted_total, requests_processing, requests_deferred, ...), plus
// per-route request counts, slot use and a time-to-first-token histogram.
import { TTFT_BUCKETS, type Engine } from './engine.js';

export class RequestCounter {
  private readonly counts = new Map<string, number>();
  add(route: string, status: number): void {
    const k = `${route}\u0000${status}`;
    this.counts.set(k, (this.counts.get(k) ?? 0) + 1);
  }
  entries(): { route: string; status: number; n: number }[] {
    return [...this.counts].map(([k, n]) => { const [route, status] = k.split('\u0000'); return { route: route!, status: Number(status), n }; });
  }
}

const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export function metricsText(engine: Engine | undefined, requests: RequestCounter): string {
  const out: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, value: number) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${Number.isFinite(value) ? value : 0}`);
  };
  out.push('# HELP gguf_edge_http_requests_total HTTP requests answered, by route and status.', '# TYPE gguf_edge_http_requests_total counter');
  for (const r of requests.entries()) out.push(`gguf_edge_http_requests_total{route="${esc(r.route)}",status="${r.status}"} ${r.n}`);
  if (!engine) return out.join('\n') + '\n';
  const s = engine.stats;
  metric('llamacpp:prompt_tokens_total', 'counter', 'Number of prompt tokens processed.', s.promptTokens);
  metric('llamacpp:prompt_seconds_total', 'counter', 'Prompt process time.', s.promptMs / 1000);
  metric('llamacpp:prompt_tokens_cache_total', 'counter', 'Prompt tokens reused from slot caches.', s.cachedTokens);
  metric('llamacpp:tokens_predicted_total', 'counter', 'Number of generation tokens processed.', s.predictedTokens);
  metric('llamacpp:tokens_predicted_seconds_total', 'counter', 'Predict process time.', s.predictedMs / 1000);
  metric('llamacpp:n_decode_total', 'counter', 'Batched evaluations (one per step, all slots together).', s.decodeCalls);
  metric('llamacpp:prompt_tokens_seconds', 'gauge', 'Average prompt throughput in tokens/s.', s.promptMs > 0 ? (s.promptTokens * 1000) / s.promptMs : 0);
  metric('llamacpp:predicted_tokens_seconds', 'gauge', 'Average generation throughput in tokens/s (per slot).', s.predictedMs > 0 ? (s.predictedTokens * 1000) / s.predictedMs : 0);
  metric('llamacpp:kv_cache_usage_ratio', 'gauge', 'KV-cache usage. 1 means 100 percent usage.', engine.kvUsage());
  metric('llamacpp:requests_processing', 'gauge', 'Number of slots processing a task.', engine.busy);
  metric('llamacpp:requests_deferred', 'gauge', 'Number of tasks waiting in the queue.', engine.queued);
  metric('gguf_edge_slots_total', 'gauge', 'Slots (--parallel).', engine.nSlots);
  metric('gguf_edge_tasks_completed_total', 'counter', 'Tasks (choices) finished.', s.tasksDone);
  metric('gguf_edge_tasks_cancelled_total', 'counter', 'Tasks cancelled (client gone).', s.tasksCancelled);
  metric('gguf_edge_tasks_failed_total', 'counter', 'Tasks failed by an evaluation error.', s.tasksFailed);
  const h = 'gguf_edge_time_to_first_token_seconds';
  out.push(`# HELP ${h} Time from a task's arrival to its first generated token.`, `# TYPE ${h} histogram`);
  let cum = 0;
  TTFT_BUCKETS.forEach((b, i) => { cum += s.ttft[i]!; out.push(`${h}_bucket{le="${b}"} ${cum}`); });
  cum += s.ttft[TTFT_BUCKETS.length]!;
  out.push(`${h}_bucket{le="+Inf"} ${cum}`, `${h}_sum ${engine.ttftSum}`, `${h}_count ${engine.ttftCount}`);
  return out.join('\n') + '\n';
}

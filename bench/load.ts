// `npm run load`: a load test of `gguf-edge serve` on loopback, measured by the client the way vLLM's
// `bench serve` does (vllm/benchmarks/serve.py): TTFT (send -> first content chunk), ITL (gaps between
// successive content chunks, pooled), TPOT per request ((E2EL - TTFT) / (output tokens - 1)), each as
// mean / p50 / p99 in ms; requests/s and output tokens/s over a level's wall time, and output tokens per CPU-second of
// the server process (/proc/PID/stat; the figure a shared machine does not distort as much as the wall clock).
// It starts its own server (127.0.0.1, a free port), runs concurrency levels (default 1, 4, 16) with a
// bounded number of streamed chat requests each (every 10th client disconnects mid-stream), and checks:
// every completed response is well-formed SSE (role chunk, content deltas, finish chunk, usage chunk,
// [DONE]) with the requested token count, none lost, every slot free after each level, and the server's
// RSS back within 50 MiB of its post-warm-up baseline. Exits 1 when a check fails. Stops by itself: each
// level has a deadline and the whole run a hard one.
//
// Usage: npm run load -- [MODEL | --synthetic SHAPE:TYPE] [-np 4] [-t 2] [-c 4096] [--levels 1,4,16]
//          [--requests 10] [--max-tokens 32] [--input-len N] [--max-seconds 600] [--json]
// GGUF_EDGE_SERVE_NODE_ARGS="--cpu-prof --cpu-prof-dir=DIR" profiles the server process.
// Default model: --synthetic qwen3-0.6b:q4_k_m. --input-len N: /v1/completions with N random token ids per
// prompt (vLLM's random dataset; the default, 32, for synthetic models, whose placeholder vocabulary makes text
// cost a token per character); 0: streamed chat with short English prompts (the default for a MODEL file).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const MiB = 1 << 20;

interface Rec {
  ok: boolean;
  aborted: boolean;
  error?: string;
  ttft: number;
  e2el: number;
  itl: number[];
  outTokens: number;
  serverTps?: number;
}

const PROMPTS = [
  'Tell me a story about a robot who learns to paint.',
  'Explain how a bicycle stays upright while it moves.',
  'Write a short poem about the sea at night.',
  'What are the main differences between a lake and a pond?',
  'Describe a busy market in the morning, with its sounds and smells.',
  'Give three tips for keeping a small garden healthy in summer.',
  'Why do leaves change colour in autumn? Keep it simple.',
  'Summarize the rules of chess for a beginner.',
];

function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const k = (s.length - 1) * (p / 100), lo = Math.floor(k), hi = Math.ceil(k);
  return s[lo]! + (s[hi]! - s[lo]!) * (k - lo);
}
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const stats = (xs: number[]) => ({ mean: mean(xs), p50: percentile(xs, 50), p99: percentile(xs, 99) });

/** user + system CPU seconds of a process so far (/proc/PID/stat utime + stime, clock ticks of 1/100 s) */
function cpuOf(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const after = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(after[11]) + Number(after[12])) / 100;
}

function rssOf(pid: number): number {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(s)![1]) * 1024;
}

/** A request's prompt: chat text, or token ids for /v1/completions (vLLM's random dataset) */
type Prompt = { chat: string } | { tokens: number[] };

/** One streamed request; checks the SSE framing as it goes. `abortAfter`: disconnect after that many content chunks. */
async function streamChat(base: string, prompt: Prompt, maxTokens: number, abortAfter: number | undefined, deadline: number): Promise<Rec> {
  const chat = 'chat' in prompt;
  const rec: Rec = { ok: false, aborted: false, ttft: NaN, e2el: NaN, itl: [], outTokens: 0 };
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), Math.max(1, deadline - Date.now()));
  const t0 = performance.now();
  const fail = (m: string) => { rec.error = m; return rec; };
  try {
    const common = { model: 'load', ignore_eos: true, stream: true, stream_options: { include_usage: true }, temperature: 0.8, seed: 42 };
    const res = await fetch(`${base}/v1/${chat ? 'chat/' : ''}completions`, {
      method: 'POST', signal: ctrl.signal, headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(chat ? { ...common, messages: [{ role: 'user', content: prompt.chat }], max_completion_tokens: maxTokens } : { ...common, prompt: prompt.tokens, max_tokens: maxTokens }),
    });
    if (res.status !== 200) return fail(`HTTP ${res.status}: ${await res.text()}`);
    if (!/text\/event-stream/.test(res.headers.get('content-type') ?? '')) return fail('not an event stream');
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let buf = '', nEvents = 0, nContent = 0, last = NaN, id: string | undefined;
    let finish: string | null = null, usage: any, done = false;
    for (;;) {
      const { value, done: eof } = await reader.read();
      if (eof) break;
      buf += dec.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const now = performance.now();
        if (!block.startsWith('data: ')) return fail(`not a data event: ${block.slice(0, 80)}`);
        const data = block.slice(6);
        if (data === '[DONE]') { done = true; continue; }
        if (done) return fail('event after [DONE]');
        const ev = JSON.parse(data);
        id ??= ev.id;
        if (ev.id !== id) return fail('the id changed within the stream');
        if (nEvents++ === 0 && chat) {
          const d = ev.choices?.[0]?.delta;
          if (!d || d.role !== 'assistant' || d.content !== null) return fail(`first chunk is not the role chunk: ${data}`);
          continue;
        }
        if (!ev.choices.length) { usage = ev.usage; if (!ev.timings) return fail('usage chunk without timings'); rec.serverTps = ev.timings.predicted_per_second; continue; }
        const c = ev.choices[0];
        if (chat && 'role' in c.delta) return fail('role in a later chunk');
        if (c.finish_reason !== null) {
          if (chat ? Object.keys(c.delta).length : c.text !== '') return fail('finish chunk with content');
          finish = c.finish_reason;
          continue;
        }
        if (typeof (chat ? c.delta.content : c.text) !== 'string') return fail('content chunk without content');
        if (nContent === 0) rec.ttft = now - t0; else rec.itl.push(now - last);
        last = now;
        nContent++;
        if (abortAfter !== undefined && nContent >= abortAfter) { rec.aborted = true; ctrl.abort(); return rec; }
      }
    }
    rec.e2el = performance.now() - t0;
    if (!done) return fail('no [DONE]');
    if (finish !== 'length') return fail(`finish_reason ${finish}, expected length (ignore_eos)`);
    if (!usage || usage.completion_tokens !== maxTokens || !(usage.prompt_tokens > 0) || usage.total_tokens !== usage.prompt_tokens + usage.completion_tokens) return fail(`bad usage ${JSON.stringify(usage)}`);
    if (nContent < 1 || nContent > maxTokens) return fail(`${nContent} content chunks for ${maxTokens} tokens`);
    rec.outTokens = usage.completion_tokens;
    rec.ok = true;
    return rec;
  } catch (e) {
    if (rec.aborted) return rec;
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    return fail(`${(e as Error).name}: ${(e as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`);
  } finally {
    clearTimeout(timer);
  }
}

async function idleSlots(base: string, ms: number): Promise<boolean> {
  const t0 = Date.now();
  for (;;) {
    const slots = (await (await fetch(`${base}/slots`)).json()) as { is_processing: boolean }[];
    if (slots.every((s) => !s.is_processing)) return true;
    if (Date.now() - t0 > ms) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startServer(serveArgs: string[]): Promise<{ proc: ChildProcess; base: string }> {
  const bin = fileURLToPath(new URL('../../bin/gguf-edge.js', import.meta.url));
  // GGUF_EDGE_SERVE_NODE_ARGS: extra node flags for the server process, e.g. "--cpu-prof --cpu-prof-dir=DIR"
  const nodeArgs = (process.env.GGUF_EDGE_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const proc = spawn(process.execPath, [...nodeArgs, bin, 'serve', ...serveArgs, '--host', '127.0.0.1', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr!.setEncoding('utf8');
  const base = await new Promise<string>((ok, fail) => {
    proc.stderr!.on('data', (d: string) => { err += d; const m = /listening on (http:\/\/\S+)/.exec(err); if (m) ok(m[1]!); });
    proc.once('exit', (c) => fail(new Error(`serve exited with ${c}: ${err}`)));
  });
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`serve exited: ${err}`);
    try { if ((await fetch(`${base}/health`)).status === 200) break; } catch { /* loading */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { proc, base };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    args: process.argv.slice(2).map((a) => (a === '-np' ? '--parallel' : a)), allowPositionals: true,
    options: {
      synthetic: { type: 'string' }, parallel: { type: 'string' }, threads: { type: 'string', short: 't' }, ctx: { type: 'string', short: 'c' },
      levels: { type: 'string' }, requests: { type: 'string' }, 'max-tokens': { type: 'string' }, 'max-seconds': { type: 'string' },
      'input-len': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) { process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n') + '\n'); return 0; }
  const parallel = Number(values.parallel ?? 4), threads = values.threads ?? '2', ctx = values.ctx ?? '4096';
  const levels = (values.levels ?? '1,4,16').split(',').map(Number);
  const perLevel = Number(values.requests ?? 10), maxTokens = Number(values['max-tokens'] ?? 32), maxSeconds = Number(values['max-seconds'] ?? 600);
  if (![parallel, perLevel, maxTokens, maxSeconds, ...levels].every((x) => Number.isInteger(x) && x > 0)) throw new Error('numeric options must be positive integers');
  const modelArgs = positionals[0] ? [positionals[0]] : ['--synthetic', values.synthetic ?? 'qwen3-0.6b:q4_k_m'];
  const label = positionals[0] ?? values.synthetic ?? 'qwen3-0.6b:q4_k_m';
  // synthetic models have a placeholder vocabulary (text costs a token per character): random token prompts
  const inputLen = values['input-len'] !== undefined ? Number(values['input-len']) : positionals[0] ? 0 : 32;
  if (!Number.isInteger(inputLen) || inputLen < 0) throw new Error('--input-len must be a non-negative integer');
  let nVocab = 1000;
  // distinct random prompts per request index (vLLM's random dataset: no two share a prefix the server could
  // reuse). An earlier formula, (7919 i + 104729 k) mod 1000, gave the warm-up's prompts 1000 + i the same tokens
  // as requests i, so the first level's prompts were already cached and its TTFT skipped the prefill.
  const promptOf = (i: number): Prompt => {
    if (inputLen === 0) return { chat: PROMPTS[i % PROMPTS.length]! };
    let x = (Math.imul(i + 1, 2654435761) ^ 0x9e3779b9) >>> 0;
    return { tokens: Array.from({ length: inputLen }, () => { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; return 3 + ((x >>> 8) % Math.min(1000, nVocab - 3)); }) };
  };
  const hardStop = setTimeout(() => { process.stderr.write('load: hard deadline reached\n'); process.exit(1); }, (maxSeconds * (levels.length + 1) + 120) * 1000);
  hardStop.unref();
  const tty = process.stderr.isTTY;
  const log = (m: string) => { if (tty) process.stderr.write(`\r\x1b[K${m}`); };
  const { proc, base } = await startServer([...modelArgs, '-np', String(parallel), '-t', threads, '-c', ctx, '--max-queue', '256']);
  nVocab = ((await (await fetch(`${base}/v1/models`)).json()) as { data: { meta: { n_vocab: number } }[] }).data[0]!.meta.n_vocab;
  const checks: { name: string; ok: boolean; detail: string }[] = [];
  const rows: Record<string, unknown>[] = [];
  try {
    // warm-up: every slot once, then the RSS baseline
    log('warm-up');
    await Promise.all(Array.from({ length: parallel }, (_, i) => streamChat(base, promptOf(1000 + i), maxTokens, undefined, Date.now() + maxSeconds * 1000)));
    await idleSlots(base, 5000);
    const baseline = rssOf(proc.pid!);
    for (const c of levels) {
      const n = Math.max(perLevel, 2 * c);
      const deadline = Date.now() + maxSeconds * 1000;
      const recs: Rec[] = [];
      let next = 0;
      const t0 = performance.now(), cpu0 = cpuOf(proc.pid!);
      const client = async () => {
        while (next < n && Date.now() < deadline) {
          const i = next++;
          // every 10th request disconnects after 2 content chunks
          recs.push(await streamChat(base, promptOf(i), maxTokens, i % 10 === 9 ? 2 : undefined, deadline));
          log(`concurrency ${c}: ${recs.length}/${n}`);
        }
      };
      await Promise.all(Array.from({ length: c }, client));
      const wall = (performance.now() - t0) / 1000, cpu = cpuOf(proc.pid!) - cpu0;
      const done = recs.filter((r) => r.ok), aborted = recs.filter((r) => r.aborted), failed = recs.filter((r) => !r.ok && !r.aborted);
      const outTok = done.reduce((a, r) => a + r.outTokens, 0);
      const tpot = done.filter((r) => r.outTokens > 1).map((r) => (r.e2el - r.ttft) / (r.outTokens - 1));
      rows.push({
        concurrency: c, requests: n, completed: done.length, aborted: aborted.length, failed: failed.length, wall_s: wall,
        request_throughput: done.length / wall, output_throughput: outTok / wall,
        server_cpu_s: cpu, output_per_cpu_s: outTok / cpu,
        ttft_ms: stats(done.map((r) => r.ttft)), tpot_ms: stats(tpot), itl_ms: stats(done.flatMap((r) => r.itl)),
        server_predicted_per_second: mean(done.map((r) => r.serverTps ?? NaN)),
      });
      checks.push({ name: `c=${c}: every request completed well-formed or was a planned disconnect`, ok: failed.length === 0 && recs.length === n && aborted.length === Math.floor(n / 10), detail: failed.map((r) => r.error).slice(0, 3).join('; ') || `${done.length} completed, ${aborted.length} disconnected of ${n}` });
      const idle = await idleSlots(base, 5000);
      checks.push({ name: `c=${c}: every slot free afterwards`, ok: idle, detail: idle ? 'ok' : 'slots still busy after 5 s' });
    }
    await new Promise((r) => setTimeout(r, 500));
    const rssEnd = rssOf(proc.pid!);
    checks.push({ name: 'RSS back within 50 MiB of the post-warm-up baseline', ok: rssEnd - baseline <= 50 * MiB, detail: `baseline ${(baseline / MiB).toFixed(1)} MiB, end ${(rssEnd / MiB).toFixed(1)} MiB (${((rssEnd - baseline) / MiB).toFixed(1)} MiB)` });
  } finally {
    proc.kill('SIGTERM');
    if (tty) process.stderr.write('\r\x1b[K');
  }
  const r1 = rows.find((r) => r.concurrency === 1), r4 = rows.find((r) => r.concurrency === 4);
  const scaling = r1 && r4 ? (r4.output_throughput as number) / (r1.output_throughput as number) : undefined;
  // the same ratio per server CPU-second: what a shared (loaded) machine's wall clock cannot show
  const cpuScaling = r1 && r4 ? (r4.output_per_cpu_s as number) / (r1.output_per_cpu_s as number) : undefined;
  if (values.json) process.stdout.write(JSON.stringify({ model: label, input_len: inputLen, parallel, threads: Number(threads), max_tokens: maxTokens, rows, scaling_4_over_1: scaling, cpu_scaling_4_over_1: cpuScaling, checks }, null, 2) + '\n');
  else {
    const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '-');
    const s3 = (s: any) => `${f(s.mean)} / ${f(s.p50)} / ${f(s.p99)}`;
    const out = [`load: ${label}, serve -np ${parallel} -t ${threads} -c ${ctx}, ${maxTokens} output tokens per request (ignore_eos), ${inputLen ? `streamed completions, ${inputLen}-token random prompts` : 'streamed chat'}`, '',
      '| concurrency | requests | completed | disconnected | failed | req/s | output tok/s | server CPU s (tok per CPU-s) | TTFT ms mean / p50 / p99 | TPOT ms mean / p50 / p99 | ITL ms mean / p50 / p99 |',
      '|---|---|---|---|---|---|---|---|---|---|---|'];
    for (const r of rows as any[]) out.push(`| ${r.concurrency} | ${r.requests} | ${r.completed} | ${r.aborted} | ${r.failed} | ${r.request_throughput.toFixed(2)} | ${f(r.output_throughput)} | ${r.server_cpu_s.toFixed(1)} (${r.output_per_cpu_s.toFixed(2)}) | ${s3(r.ttft_ms)} | ${s3(r.tpot_ms)} | ${s3(r.itl_ms)} |`);
    if (scaling !== undefined) out.push('', `output tok/s, 4 concurrent streams over 1: ${scaling.toFixed(2)}x (per server CPU-second: ${cpuScaling!.toFixed(2)}x)`);
    out.push('', ...checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'} ${c.name}: ${c.detail}`));
    process.stdout.write(out.join('\n') + '\n');
  }
  return checks.every((c) => c.ok) ? 0 : 1;
}

main().then((code) => process.exit(code), (e) => { process.stderr.write(`load: ${(e as Error).message}\n`); process.exit(1); });

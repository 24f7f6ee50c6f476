// The browser build in Chromium vs wllama 3.8.1 (llama.cpp compiled to WebAssembly; peers/), the same page
// harness (bench/web/), the same synthetic GGUF files, the same thread count, served by `gguf-edge web`'s
// server (cross-origin isolated, so both get their threads). pp<N>: an N-token prompt into an empty KV
// cache; tg<N>: N greedy tokens after a 1-token prompt (end-of-generation ignored); each engine's own
// llama-server-style timings (prompt_per_second, predicted_per_second), one warm-up (an 8-token prompt, 2 tokens), mean ± sd over the
// runs. A benchmark, never a test: the machine is shared and figures are noisy (the report prints uptime).
//
// Usage: npm run bench:web -- [--models SPEC,SPEC...] [-p 128] [-n 64] [-t 2] [-r 3] [--engines gguf-edge,wllama] [--out FILE]
// SPEC is a synthetic SHAPE:TYPE (built and cached like `gguf-edge bench --synthetic`).
import { execSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startWebServer } from '../src/web/server.js';
import { parseSyntheticSpec } from '../src/bench/shapes.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import { formatTps, markdownTable } from '../src/bench/format.js';
import { meanSd } from '../src/bench/runner.js';
import { peerPath } from './peers.js';
import { chromiumPath, launchChromium } from '../test/helpers/chromium.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const TARGET = 3; // issue #13: >= 3x wllama

interface Timings { prompt_n: number; prompt_per_second: number; predicted_n: number; predicted_per_second: number }

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: 'qwen3-0.6b:q4_k_m,llama-3.2-1b:q4_0' },
    p: { type: 'string', short: 'p', default: '128' }, n: { type: 'string', short: 'n', default: '64' },
    t: { type: 'string', short: 't', default: '2' }, r: { type: 'string', short: 'r', default: '3' },
    engines: { type: 'string', default: 'gguf-edge,wllama' }, out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(`Usage: npm run bench:web -- [options]
  The browser build (gguf-edge's web bundle) vs wllama (peers/, pinned 3.8.1) in Debian's Chromium, same page harness and files.
  --models SPEC,...   synthetic SHAPE:TYPE models (default qwen3-0.6b:q4_k_m,llama-3.2-1b:q4_0)
  -p N                prompt tokens of the pp test (default 128)
  -n N                generated tokens of the tg test (default 64)
  -t N                threads (web workers) of both engines (default 2)
  -r N                timed runs per test and engine (default 3)
  --engines LIST      gguf-edge,wllama (default both)
  --out FILE          also write the markdown report to FILE
`);
  process.exit(0);
}
const pp = Number(values.p), tg = Number(values.n), threads = Number(values.t), reps = Number(values.r);
const engines = values.engines!.split(',');
const wllamaDir = peerPath('@wllama/wllama', 'esm');
const wllamaVersion = (JSON.parse(readFileSync(resolve(wllamaDir, '..', 'package.json'), 'utf8')) as { version: string }).version;

// a prompt of ~pp tokens: the synthetic models' placeholder vocabulary makes a letter a token
function promptOf(n: number): string {
  let x = 12345, s = '';
  for (let i = 0; i < n; i++) { x = (x * 1103515245 + 12345) >>> 0; s += String.fromCharCode(97 + ((x >>> 16) % 26)); }
  return s;
}

const specs = values.models!.split(',').map((m) => ({ spec: m, ...parseSyntheticSpec(m) }));
const files = specs.map((s) => {
  process.stderr.write(`synthetic ${s.spec}...\n`);
  return { ...s, path: syntheticModel(s.shape.name, s.type).path };
});
const dirs = [...new Set(files.map((f) => dirname(f.path)))];
if (dirs.length !== 1) throw new Error('synthetic models in more than one folder');

const server = await startWebServer({
  port: 0, isolation: true,
  mounts: { '/bench/': resolve(ROOT, 'bench/web'), '/wllama/': wllamaDir, '/models/': dirs[0]! },
});
const a = server.address();
const base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
const browser = await launchChromium();
const uptimeBefore = execSync('uptime', { encoding: 'utf8' }).trim();
type Row = { model: string; engine: string; test: string; tps: number[]; n: number[]; device: string; load_ms: number };
const rows: Row[] = [];
try {
  for (const f of files) {
    for (const engine of engines) {
      const page = await browser.context.newPage();
      page.on('pageerror', (e) => process.stderr.write(`page error: ${e.message}\n`));
      await page.goto(`${base}/bench/`);
      await page.waitForFunction(() => (globalThis as { benchReady?: boolean }).benchReady === true);
      process.stderr.write(`${engine}: loading ${f.spec}\n`);
      const info = await page.evaluate(([e, u, t]) => (globalThis as unknown as { bench: { load(e: string, u: string, t: number, c: number): Promise<{ device: string; isolated: boolean; load_ms: number }> } }).bench.load(e as string, u as string, t as number, 512), [engine, `/models/${basename(f.path)}`, threads] as const);
      if (!info.isolated) throw new Error('the bench page is not cross-origin isolated');
      const run = (prompt: string, max: number) => page.evaluate(([p, m]) => (globalThis as unknown as { bench: { run(p: string, m: number): Promise<Timings> } }).bench.run(p as string, m as number), [prompt, max] as const);
      const ppRow: Row = { model: f.spec, engine, test: `pp${pp}`, tps: [], n: [], device: info.device, load_ms: info.load_ms };
      const tgRow: Row = { ...ppRow, test: `tg${tg}`, tps: [], n: [] };
      await run(promptOf(8), 2); // warm-up (compiles, allocates the batch buffers)
      for (let r = 0; r < reps; r++) {
        process.stderr.write(`${engine}: ${f.spec} run ${r + 1}/${reps}\n`);
        const a1 = await run(promptOf(pp), 1);
        ppRow.tps.push(a1.prompt_per_second); ppRow.n.push(a1.prompt_n);
        const b1 = await run('a', tg);
        tgRow.tps.push(b1.predicted_per_second); tgRow.n.push(b1.predicted_n);
      }
      rows.push(ppRow, tgRow);
      // as they come: a long run stopped midway keeps what it measured
      for (const r of [ppRow, tgRow]) process.stderr.write(`result ${JSON.stringify(r)}\n`);
      if (values.out) writeFileSync(values.out, JSON.stringify({ rows, uptimeBefore, threads, reps, wllamaVersion }, null, 2));
      await page.evaluate(() => (globalThis as unknown as { bench: { close(): Promise<void> } }).bench.close());
      await page.close();
    }
  }
} finally {
  await browser.close();
  server.close();
}
const uptimeAfter = execSync('uptime', { encoding: 'utf8' }).trim();

const table: string[][] = [];
for (const f of files) {
  for (const test of [`pp${pp}`, `tg${tg}`]) {
    const mine = rows.find((r) => r.model === f.spec && r.test === test && r.engine === 'gguf-edge');
    const theirs = rows.find((r) => r.model === f.spec && r.test === test && r.engine === 'wllama');
    const m = mine && meanSd(mine.tps), t = theirs && meanSd(theirs.tps);
    const ratio = m && t ? m.mean / t.mean : undefined;
    table.push([f.spec, test, `${(mine ?? theirs)?.n.join('/') ?? ''}`, m ? formatTps(m.mean, m.sd) : '-', t ? formatTps(t.mean, t.sd) : '-',
      ratio !== undefined ? `${ratio.toFixed(2)}x` : '-', ratio !== undefined ? (ratio >= TARGET ? 'met' : 'NOT met') : '-']);
  }
}
const md = `Chromium ${execSync(`${chromiumPath()} --version`, { encoding: 'utf8' }).trim()} (headless, --disable-gpu), ${threads} threads, cross-origin isolated; ` +
  `wllama ${wllamaVersion}; ${reps} runs after a warm-up (8-token prompt + 2 tokens); tokens/s from each engine's own timings.\n` +
  `uptime before: ${uptimeBefore}\nuptime after: ${uptimeAfter}\n\n` +
  markdownTable(['model', 'test', 'tokens', 'gguf-edge t/s', `wllama t/s`, 'ratio', `target ${TARGET}x`], table, [false, false, true, true, true, true, false]) +
  '\n' + [...new Set(rows.map((r) => `- ${r.engine} on ${r.model}: ${r.device} (load ${(r.load_ms / 1000).toFixed(1)} s)`))].join('\n') + '\n';
process.stdout.write(md);
if (values.out) writeFileSync(values.out, JSON.stringify({ rows, uptimeBefore, uptimeAfter, threads, reps, wllamaVersion }, null, 2));

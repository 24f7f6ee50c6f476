// Peak memory of a generation: loads a model, evaluates a short prompt, then generates N tokens one
// at a time (greedy, EOS ignored), sampling the process's resident set after every token from
// /proc/self/status (VmRSS, and VmHWM = the peak so far) and process.memoryUsage().
// Checks the issue's bound: peak RSS <= model file + KV cache + 100 MiB, and RSS flat after the
// first generated token. A measurement, not a unit test.
//
// Usage: npm run bench:memory -- [MODEL | --synthetic SHAPE:TYPE] [-n 1000] [--prompt 16]
//          [--device NAME] [-t THREADS] [--kv-type f16|f32|q8_0|q4_0] [--ctx N] [--swa-full] [--json]
// --ctx: the context size (default prompt + generated); --swa-full: sliding-window layers keep full caches
// instead of their rings (src/runtime/swa-ring.ts). The KV cache of the bound is what the context allocated.
// Default model: --synthetic smollm2-135m:q4_0 (qwen3-0.6b:q4_k_m with the cpu device).

import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { defaultDeviceName, getDevice } from '../src/backends/registry.js';
import { formatBytes } from '../src/bench/format.js';
import { randomTokens } from '../src/bench/runner.js';
import { parseSyntheticSpec } from '../src/bench/shapes.js';
import { syntheticModel } from '../src/bench/synthetic.js';
import { openGguf } from '../src/gguf/open.js';
import { Context } from '../src/runtime/context.js';
import { isKvType, KV_TYPES, type KvType } from '../src/graph/kv-type.js';
import { loadModel } from '../src/runtime/model.js';
import { argmax } from '../src/runtime/sampler.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
// relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
enableRelaxedSimd();

const MiB = 1 << 20;

/** VmRSS and VmHWM in bytes (Linux); falls back to process.memoryUsage().rss for both. */
function procMem(): { rss: number; hwm: number } {
  try {
    const s = readFileSync('/proc/self/status', 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS'), hwm = kb('VmHWM');
    if (Number.isFinite(rss) && Number.isFinite(hwm)) return { rss, hwm };
  } catch { /* not Linux */ }
  const rss = process.memoryUsage().rss;
  return { rss, hwm: rss };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      synthetic: { type: 'string' },
      'n-gen': { type: 'string', short: 'n' },
      prompt: { type: 'string' },
      device: { type: 'string' },
      threads: { type: 'string', short: 't' },
      'kv-type': { type: 'string' },
      ctx: { type: 'string', short: 'c' },
      'swa-full': { type: 'boolean' },
      json: { type: 'boolean' },
      'build-only': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(readFileSync(new URL(import.meta.url), 'utf8').split('\n').filter((l) => l.startsWith('//')).map((l) => l.slice(3)).join('\n') + '\n');
    return 0;
  }
  const deviceName = values.device ?? defaultDeviceName();
  const nGen = Number(values['n-gen'] ?? 1000);
  const nPrompt = Number(values.prompt ?? 16);
  const kvType = (values['kv-type'] ?? 'f16') as KvType;
  if (!isKvType(kvType)) throw new Error(`--kv-type must be one of ${KV_TYPES.join(', ')}, got "${kvType}"`);
  let path = positionals[0];
  let label = path;
  if (!path) {
    const spec = values.synthetic ?? (deviceName === 'reference' ? 'smollm2-135m:q4_0' : 'qwen3-0.6b:q4_k_m');
    const { shape, type } = parseSyntheticSpec(spec);
    if (values['build-only']) { process.stdout.write(syntheticModel(shape.name, type).path + '\n'); return 0; }
    // build (or find) the synthetic file in a child process, so its vocab and buffers are not in our RSS
    const r = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--build-only', '--synthetic', spec], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (r.status !== 0) throw new Error(`building ${spec} failed`);
    path = r.stdout.trim();
    label = spec;
  }
  const fileBytes = statSync(path).size;
  const start = procMem();
  const device = await getDevice(deviceName, values.threads ? { threads: Number(values.threads) } : undefined);
  const file = openGguf(path);
  const model = loadModel(file, { device });
  const nCtx = values.ctx !== undefined ? Number(values.ctx) : nPrompt + nGen;
  const ctx = new Context(model, { nCtx, kvType, swaFull: !!values['swa-full'] });
  const hp = model.hp;
  // what the context allocated: the full layers' rows and the sliding-window rings
  const kvBytes = ctx.kvBytesPerToken * ctx.kvCapacity + ctx.kvRingBytes;
  const afterLoad = procMem();

  const prompt = Array.from(randomTokens(nPrompt, hp.nVocab, 7));
  const t0 = performance.now();
  let logits = await ctx.decode(prompt);
  const afterPrompt = procMem();
  const rss: number[] = []; // after each generated token
  const hwm: number[] = [];
  for (let i = 0; i < nGen; i++) {
    const tok = argmax(logits);
    logits = await ctx.decode([tok]);
    const m = procMem();
    rss.push(m.rss);
    hwm.push(m.hwm);
    if (process.stderr.isTTY && (i % 10 === 0 || i === nGen - 1)) process.stderr.write(`\rtoken ${i + 1}/${nGen}  RSS ${formatBytes(m.rss)}  peak ${formatBytes(m.hwm)}`);
  }
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
  const secs = (performance.now() - t0) / 1000;
  const mu = process.memoryUsage();
  // VmHWM is updated lazily by the kernel: the peak is the larger of it and every RSS sample
  const peak = Math.max(hwm[hwm.length - 1] ?? afterPrompt.hwm, ...rss, afterPrompt.rss);
  const at = [1, 10, 100, Math.floor(nGen / 2), nGen].filter((k, i, a) => k >= 1 && k <= nGen && a.indexOf(k) === i);
  const bound = fileBytes + kvBytes + 100 * MiB;
  const first = rss[0] ?? afterPrompt.rss;
  const maxAfterFirst = Math.max(...rss.slice(1), first);
  const minAfterFirst = Math.min(...rss.slice(1), first);
  const growth = maxAfterFirst - first;
  // "flat": after the first token the RSS moves by less than 16 MiB (GC noise) over the whole run
  const FLAT = 16 * MiB;
  const out = {
    model: label, device: device.name, n_prompt: nPrompt, n_gen: nGen, n_ctx: nCtx, kv_type: kvType,
    model_file_bytes: fileBytes, kv_cache_bytes: kvBytes, bound_bytes: bound,
    rss_start: start.rss, rss_after_load: afterLoad.rss, rss_after_prompt: afterPrompt.rss, rss_after_first_token: first,
    rss_max_after_first: maxAfterFirst, rss_min_after_first: minAfterFirst, rss_growth_after_first: growth,
    peak_rss: peak, heap_total: mu.heapTotal, heap_used: mu.heapUsed, external: mu.external, array_buffers: mu.arrayBuffers,
    rss_at_token: Object.fromEntries(at.map((k) => [k, rss[k - 1]!])),
    within_bound: peak <= bound, flat_after_first_token: growth < FLAT, tg_tps: nGen / secs,
  };
  ctx.close();
  file.source.close?.();
  if (values.json) { process.stdout.write(JSON.stringify(out, null, 2) + '\n'); return 0; }
  const f = (n: number) => `${(n / MiB).toFixed(1)} MiB`;
  process.stdout.write([
    `model            ${label} (${device.name}), ${nPrompt}-token prompt + ${nGen} generated, n_ctx ${nCtx}, KV ${kvType}`,
    `model file       ${f(fileBytes)}`,
    `KV cache         ${f(kvBytes)}`,
    `bound            ${f(bound)}  (model file + KV cache + 100 MiB)`,
    `RSS at start     ${f(start.rss)}`,
    `RSS after load   ${f(afterLoad.rss)}`,
    `RSS after prompt ${f(afterPrompt.rss)}`,
    `RSS after tok 1  ${f(first)}`,
    `RSS tok 2..N     ${f(minAfterFirst)} .. ${f(maxAfterFirst)}  (growth after the first token: ${f(growth)})`,
    `RSS at token     ${at.map((k) => `${k}: ${f(rss[k - 1]!)}`).join(', ')}`,
    `peak RSS (VmHWM) ${f(peak)}  -> ${peak <= bound ? 'within' : 'OVER'} the bound by ${f(Math.abs(bound - peak))}`,
    `flat after tok 1 ${growth < FLAT ? 'yes' : 'NO'} (growth < ${f(FLAT)})`,
    `heap ${f(mu.heapUsed)} used / ${f(mu.heapTotal)} total, external ${f(mu.external)}, array buffers ${f(mu.arrayBuffers)}; ${(nGen / secs).toFixed(2)} tok/s`,
  ].join('\n') + '\n');
  return 0;
}

main().then((c) => process.exit(c), (e) => {
  process.stderr.write(`bench:memory: ${(e as Error).message}\n`);
  process.exit(1);
});

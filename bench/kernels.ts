// Micro-benchmark of the CPU matvec/matmul kernels: GB/s of weights streamed for decode (1 token) and
// tokens/s-equivalent GFLOP/s for a small prefill batch, at 1 and 2 threads (or --threads a,b,...).
// Weights are repacked into the cpu device's layouts (Q4_0 -> Q4_0r4; fast numerics: Q8_0 -> Q8_0r4) unless --no-repack.
// Usage: npm run bench:kernels [-- --numerics exact|fast --relaxed true|false --no-repack --mb 64 --seconds 0.5 --threads 1,2 --types Q4_0,Q8_0,Q4_K,Q6_K --tokens 32 --gemv]
// --gemv: the batch's tokens in the one-token order (several sequences' decode tokens, graph.ts inp_batch_rows), not the GEMM order.
// Numbers are noisy on a shared machine: run a few times.
import { createCpuRuntime, weightRowBytes, activationTypeFor, activationRowBytes } from '../src/backends/cpu/index.js';
import { ggmlTypeByName, GgmlType } from '../src/gguf/ggml-types.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
// relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
enableRelaxedSimd();

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const MB = Number(arg('mb', '64'));
const SECONDS = Number(arg('seconds', '0.5'));
const THREADS = arg('threads', '1,2').split(',').map(Number);
const TYPES = arg('types', 'Q4_0,Q8_0,Q4_K,Q6_K').split(',');
const TOKENS = Number(arg('tokens', '32'));
const COLS = Number(arg('cols', '4096'));

// f16 scale fields per type (byte offsets within a block, block bytes)
const SCALES: Record<number, [number[], number]> = {
  [GgmlType.Q4_0]: [[0], 18], [GgmlType.Q8_0]: [[0], 34], [GgmlType.Q4_1]: [[0, 2], 20], [GgmlType.Q5_0]: [[0], 22], [GgmlType.Q5_1]: [[0, 2], 24],
  [GgmlType.Q2_K]: [[80, 82], 84], [GgmlType.Q3_K]: [[108], 110], [GgmlType.Q4_K]: [[0, 2], 144], [GgmlType.Q5_K]: [[0, 2], 176], [GgmlType.Q6_K]: [[208], 210],
};

/**
 * Seconds per call: the best (least disturbed) wall time over short rounds within the time budget, and
 * the process CPU time per call divided by the thread count (less sensitive to other load, since time
 * spent descheduled is not counted). The machine is shared: expect noise.
 */
function time(fn: () => void, threads = 1): number {
  fn();
  let best = Infinity, cpu = 0, calls = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  while (performance.now() - t0 < SECONDS * 1000) {
    const r0 = performance.now();
    let n = 0, t = r0;
    while (t - r0 < 20 || n < 2) { fn(); n++; t = performance.now(); }
    calls += n;
    best = Math.min(best, (t - r0) / 1000 / n);
  }
  const c = process.cpuUsage(c0);
  cpu = (c.user + c.system) / 1e6 / calls / threads;
  lastCpu = cpu;
  return best;
}
let lastCpu = 0;

for (const threads of THREADS) {
  const rt = await createCpuRuntime({ threads, spin: Number(arg('spin', '2000')), numerics: arg('numerics', 'exact') === 'fast' ? 'fast' : 'exact', relaxedSimd: arg('relaxed', 'true') !== 'false' });
  console.log(`kernels: ${rt.simd}`);
  console.log(`threads=${threads}`);
  // fork/join cost of an empty op
  const one = rt.alloc(64);
  const fj = time(() => { for (let i = 0; i < 1000; i++) rt.run('add', 64, 16, 1 << 30, one, one, one); }) / 1000;
  console.log(`  fork/join (tiny op on all threads): ${(fj * 1e6).toFixed(2)} us`);
  for (const name of TYPES) {
    const info = ggmlTypeByName(name);
    if (!info) throw new Error(`unknown type ${name}`);
    let wtype: number = info.id;
    const rb = weightRowBytes(wtype, COLS);
    const rows = Math.floor((MB * 2 ** 20) / rb / 64) * 64;
    const m = rt.mark();
    const w = rt.alloc(rows * rb);
    const bytes = rt.u8(w, rows * rb);
    const u32 = new Uint32Array(bytes.buffer, w, (rows * rb) >> 2);
    let s = 12345;
    for (let i = 0; i < u32.length; i++) { s = (s * 1664525 + 1013904223) >>> 0; u32[i] = s; }
    const sc = SCALES[wtype];
    if (sc) for (let o = 0; o < rows * rb; o += sc[1]) for (const f of sc[0]) { bytes[o + f] = 0x00; bytes[o + f + 1] = 0x20; }
    // the cpu device's layouts: Q4_0 with 4 rows interleaved (Q4_0r4), in fast numerics Q8_0 too (Q8_0r4)
    if (!process.argv.includes('--no-repack') && (wtype === GgmlType.Q4_0 || (wtype === GgmlType.Q8_0 && rt.fastNumerics))) wtype = rt.repackRows4(w, rows, COLS, wtype);
    const x = rt.alloc(COLS * 4 * TOKENS);
    const xf = rt.f32(x, COLS * TOKENS);
    for (let i = 0; i < xf.length; i++) xf[i] = Math.sin(i);
    const y = rt.alloc(rows * 4 * TOKENS);
    const a = rt.alloc(activationRowBytes(activationTypeFor(wtype), COLS) * TOKENS);
    rt.quantize(activationTypeFor(wtype), x, COLS, TOKENS, a);
    const tv = time(() => rt.matmulQ(wtype, w, rows, COLS, a, 1, y), threads);
    const tvCpu = lastCpu;
    const tq = time(() => rt.matmul(wtype, w, rows, COLS, x, 1, y));
    const tp = time(() => process.argv.includes('--gemv') ? rt.matmulQ(wtype, w, rows, COLS, a, TOKENS, y, undefined, undefined, 0) : rt.matmulQ(wtype, w, rows, COLS, a, TOKENS, y), threads);
    const tpCpu = lastCpu;
    const gb = (rows * rb) / 1e9;
    console.log(`  ${name.padEnd(5)} ${rows}x${COLS} (${(gb * 1000).toFixed(0)} MB): matvec ${(gb / tv).toFixed(2)} GB/s (${(tv * 1e3).toFixed(2)} ms; cpu-time ${(gb / tvCpu).toFixed(2)} GB/s; with x quantize ${(gb / tq).toFixed(2)} GB/s)` +
      `  matmul x${TOKENS}: ${((2 * rows * COLS * TOKENS) / tp / 1e9).toFixed(1)} GFLOP/s (cpu-time ${((2 * rows * COLS * TOKENS) / tpCpu / 1e9).toFixed(1)})`);
    rt.release(m);
  }
  // decode attention over an f16 cache (Qwen3-0.6B shape: 16 heads, 8 kv heads, head 128)
  for (const ctx of [512, 2048]) {
    const m = rt.mark();
    const nHead = 16, nKv = 8, hd = 128;
    const q = rt.alloc(nHead * hd * 4), out = rt.alloc(nHead * hd * 4);
    const k = rt.alloc(ctx * nKv * hd * 2), v = rt.alloc(ctx * nKv * hd * 2);
    rt.u16(k, ctx * nKv * hd).fill(0x3000); rt.u16(v, ctx * nKv * hd).fill(0x3400);
    rt.f32(q, nHead * hd).fill(0.01);
    const pos = rt.alloc(4);
    rt.u8(pos, 4).set(new Uint8Array(Int32Array.of(ctx - 1).buffer));
    rt.reserveAttentionGgml(hd, ctx - 1);
    const ta = time(() => rt.attentionGgml({ q, k, v, out, nTokens: 1, nHead, nKvHead: nKv, headDim: hd, scale: 0.088, positions: pos, maxPos: ctx - 1, window: 0 }), threads);
    console.log(`  attention decode, ctx ${ctx} (16/8 heads x 128): ${(ta * 1e6).toFixed(0)} us per layer (KV ${(2 * ctx * nKv * hd * 2 / ta / 1e9).toFixed(2)} GB/s)`);
    rt.release(m);
  }
  {
    // prefill attention: 128 new tokens over an empty cache, same shape
    const m = rt.mark();
    const nTok = 128, nHead = 16, nKv = 8, hd = 128;
    const q = rt.alloc(nTok * nHead * hd * 4), out = rt.alloc(nTok * nHead * hd * 4);
    const k = rt.alloc(nTok * nKv * hd * 2), v = rt.alloc(nTok * nKv * hd * 2);
    rt.u16(k, nTok * nKv * hd).fill(0x3000); rt.u16(v, nTok * nKv * hd).fill(0x3400);
    rt.f32(q, nTok * nHead * hd).fill(0.01);
    const pos = rt.alloc(4 * nTok);
    rt.u8(pos, 4 * nTok).set(new Uint8Array(Int32Array.from({ length: nTok }, (_, i) => i).buffer));
    rt.reserveAttentionGgml(hd, nTok - 1, nKv);
    const ta = time(() => rt.attentionGgml({ q, k, v, out, nTokens: nTok, nHead, nKvHead: nKv, headDim: hd, scale: 0.088, positions: pos, maxPos: nTok - 1, window: 0 }), threads);
    console.log(`  attention prefill, 128 tokens (16/8 heads x 128): ${(ta * 1e3).toFixed(2)} ms per layer`);
    rt.release(m);
  }
  await rt.close();
}

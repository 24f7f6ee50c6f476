// Decode-step simulation on the CPU runtime: one token through a Qwen3-0.6B-shaped model (Q4_K_M-like:
// Q4_K projections, Q6_K ffn_down and output) with random weights, to estimate tokens/s of the kernels
// and the thread pool together (no model code involved). Numbers are noisy on a shared machine.
// Usage: node dist/bench/decode-sim.js [--threads 1,2] [--ctx 256] [--layers 28] [--seconds 3] [--spin 2000]
import { createCpuRuntime, weightRowBytes, type CpuRuntime } from '../src/backends/cpu/index.js';
import { GgmlType } from '../src/gguf/ggml-types.js';
import { enableRelaxedSimd } from '../src/backends/cpu/node-flags.js';
// relaxed SIMD on Node 20 (see src/backends/cpu/node-flags.ts), before any kernel compiles
enableRelaxedSimd();

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const THREADS = arg('threads', '1,2').split(',').map(Number);
const CTX = Number(arg('ctx', '256'));
const LAYERS = Number(arg('layers', '28'));
const SECONDS = Number(arg('seconds', '3'));
const D = 1024, NH = 16, NKV = 8, HD = 128, FF = 3072, VOCAB = 151936;

function weights(rt: CpuRuntime, type: number, rows: number, cols: number): number {
  const rb = weightRowBytes(type, cols);
  const p = rt.alloc(rows * rb);
  const u32 = new Uint32Array(rt.memory.buffer, p, (rows * rb) >> 2);
  let s = (p * 2654435761) >>> 0;
  for (let i = 0; i < u32.length; i++) { s = (s * 1664525 + 1013904223) >>> 0; u32[i] = s; }
  const u8 = rt.u8(p, rows * rb);
  const [bb, offs] = type === GgmlType.Q4_K ? [144, [0, 2]] : [210, [208]];
  for (let o = 0; o < rows * rb; o += bb) for (const f of offs) { u8[o + f] = 0; u8[o + f + 1] = 0x18; }
  return p;
}

for (const threads of THREADS) {
  const rt = await createCpuRuntime({ threads, spin: Number(arg('spin', '2000')) });
  const L = Array.from({ length: LAYERS }, () => ({
    q: weights(rt, GgmlType.Q4_K, NH * HD, D), k: weights(rt, GgmlType.Q4_K, NKV * HD, D), v: weights(rt, GgmlType.Q4_K, NKV * HD, D),
    o: weights(rt, GgmlType.Q4_K, D, NH * HD), gate: weights(rt, GgmlType.Q4_K, FF, D), up: weights(rt, GgmlType.Q4_K, FF, D),
    down: weights(rt, GgmlType.Q6_K, D, FF), kc: rt.alloc(CTX * NKV * HD * 2), vc: rt.alloc(CTX * NKV * HD * 2),
    n1: rt.alloc(D * 4), n2: rt.alloc(D * 4), qn: rt.alloc(HD * 4), kn: rt.alloc(HD * 4),
  }));
  const out = weights(rt, GgmlType.Q6_K, VOCAB, D);
  for (const l of L) { rt.f32(l.n1, D).fill(1); rt.f32(l.n2, D).fill(1); rt.f32(l.qn, HD).fill(1); rt.f32(l.kn, HD).fill(1); rt.u16(l.kc, CTX * NKV * HD).fill(0x3000); rt.u16(l.vc, CTX * NKV * HD).fill(0x3000); }
  const arena = rt.createArena(4 << 20);
  const x = arena.alloc(D * 4), h = arena.alloc(D * 4), q = arena.alloc(NH * HD * 4), k = arena.alloc(NKV * HD * 4), v = arena.alloc(NKV * HD * 4);
  const att = arena.alloc(NH * HD * 4), g = arena.alloc(FF * 4), u = arena.alloc(FF * 4), logits = arena.alloc(VOCAB * 4);
  rt.reserve(1, FF, HD);
  rt.reserveAttentionGgml(HD, CTX - 1);
  rt.f32(x, D).fill(0.1);
  const pos = [CTX - 1];
  const posPtr = arena.alloc(4);
  rt.u8(posPtr, 4).set(new Uint8Array(Int32Array.of(CTX - 1).buffer));
  const token = (): void => {
    for (const l of L) {
      rt.rmsNorm(x, h, D, 1, 1e-6, l.n1);
      rt.matmul(GgmlType.Q4_K, l.q, NH * HD, D, h, 1, q);
      rt.matmul(GgmlType.Q4_K, l.k, NKV * HD, D, h, 1, k);
      rt.matmul(GgmlType.Q4_K, l.v, NKV * HD, D, h, 1, v);
      rt.rmsNorm(q, q, HD, NH, 1e-6, l.qn);
      rt.rmsNorm(k, k, HD, NKV, 1e-6, l.kn);
      rt.rope({ x: q, nTokens: 1, nHead: NH, headDim: HD, nDims: HD, positions: pos, freqBase: 1e6, neox: true });
      rt.rope({ x: k, nTokens: 1, nHead: NKV, headDim: HD, nDims: HD, positions: pos, freqBase: 1e6, neox: true });
      rt.f32ToF16(k, l.kc + (CTX - 1) * NKV * HD * 2, NKV * HD);
      rt.f32ToF16(v, l.vc + (CTX - 1) * NKV * HD * 2, NKV * HD);
      rt.attentionGgml({ q, k: l.kc, v: l.vc, out: att, nTokens: 1, nHead: NH, nKvHead: NKV, headDim: HD, scale: 1 / Math.sqrt(HD), positions: posPtr, maxPos: CTX - 1, window: 0 });
      rt.matmul(GgmlType.Q4_K, l.o, D, NH * HD, att, 1, h);
      rt.add(x, h, x, D);
      rt.rmsNorm(x, h, D, 1, 1e-6, l.n2);
      rt.matmul(GgmlType.Q4_K, l.gate, FF, D, h, 1, g);
      rt.matmul(GgmlType.Q4_K, l.up, FF, D, h, 1, u);
      rt.siluMul(g, u, g, FF);
      rt.matmul(GgmlType.Q6_K, l.down, D, FF, g, 1, h);
      rt.add(x, h, x, D);
    }
    rt.rmsNorm(x, h, D, 1, 1e-6);
    rt.matmul(GgmlType.Q6_K, out, VOCAB, D, h, 1, logits);
  };
  token();
  const before = rt.used();
  let n = 0, best = Infinity;
  const t0 = performance.now();
  while (performance.now() - t0 < SECONDS * 1000) {
    const a = performance.now();
    token();
    best = Math.min(best, performance.now() - a);
    n++;
  }
  const mean = (performance.now() - t0) / n;
  if (rt.used() !== before) throw new Error('decode step allocated');
  const mb = (rt.used() / 2 ** 20).toFixed(0);
  console.log(`threads=${threads}: ${LAYERS} layers + output, ctx ${CTX}: best ${best.toFixed(1)} ms/token (${(1000 / best).toFixed(1)} tok/s), mean ${mean.toFixed(1)} ms (${mb} MiB wasm memory)`);
  await rt.close();
}

// Every op of the graph op set on the cpu device against the reference device, through the real
// compute path (a small graph from GraphBuilder, tensors placed in each device's buffers, the
// device's backend computing the nodes): all weight types the loader reads, awkward shapes (odd
// sizes, weight rows not a multiple of 8 or of the thread count, batch 1 and > 1), 1 and 2 threads.
// Prints a max-abs-error table. With numerics 'exact' every result must be bit-identical; the 'fast'
// device (the default: free-order Q8_0/Q4_0/Q4_K kernels, weights in its own layouts through
// prepareWeight as at model load) only agrees to float rounding.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Device, Placement } from '../../../src/backends/backend.js';
import { tensorBytes } from '../../../src/backends/backend.js';
import { createCpuDevice, LLAMA_EXACT_MATMUL_TYPES } from '../../../src/backends/cpu/device.js';
import { relaxedSimdAvailable } from '../../../src/backends/cpu/wasm.js';
import { referenceDevice } from '../../../src/backends/reference/device.js';
import { GraphBuilder, nElements, type Graph, type TensorDesc } from '../../../src/graph/graph.js';
import { GgmlType, ggmlTypeName, rowBytes } from '../../../src/gguf/ggml-types.js';
import { f32ToBf16, f32ToF16, quantizer } from '../../../src/quant/index.js';

const WEIGHT_TYPES = [GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q4_0, GgmlType.Q4_1, GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q8_0,
  GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K, GgmlType.IQ4_NL];

const K_QUANTS = new Set<number>([GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K]);
const FLOATS = new Set<number>([GgmlType.F32, GgmlType.F16, GgmlType.BF16]);

const ref = referenceDevice();
// parallelMinWork 0: even these small ops are split across the threads
const cpu1 = await createCpuDevice({ threads: 1, numerics: 'exact' });
const cpu2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'exact' });
const fast2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'fast' });
// the SIMD128 build of the kernels (the others run the relaxed-SIMD build where the engine has it, as the
// test runner enables it on Node 20): the same integers, so the same bits
const base2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'exact', relaxedSimd: false });
const baseFast2 = await createCpuDevice({ threads: 2, parallelMinWork: 0, numerics: 'fast', relaxedSimd: false });
after(async () => { await cpu1.close(); await cpu2.close(); await fast2.close(); await base2.close(); await baseFast2.close(); });
test('kernel builds: the relaxed-SIMD build runs when the engine has it', () => {
  const relaxed = relaxedSimdAvailable();
  assert.equal(cpu2.runtime.simd, relaxed ? 'relaxed' : 'simd128', 'a relaxed-capable engine failed the kernel self-test');
  assert.equal(base2.runtime.simd, 'simd128');
  console.log(`# kernels: ${cpu2.runtime.simd} (relaxed SIMD ${relaxed ? '' : 'not '}available)`);
});

// deterministic data
let seed = 12345;
function rand(): number { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return seed / 2 ** 32; }
function randF32(n: number, amp = 1): Float32Array { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = (2 * rand() - 1) * amp; return a; }

/** bytes of a weight tensor of type t with `rows` rows of k random values */
function weightBytes(t: number, k: number, rows: number): Uint8Array {
  const x = randF32(k * rows);
  const rb = rowBytes(t, k);
  const out = new Uint8Array(rb * rows);
  if (t === GgmlType.F32) return new Uint8Array(x.buffer);
  if (t === GgmlType.F16 || t === GgmlType.BF16) {
    const h = new Uint16Array(out.buffer);
    for (let i = 0; i < x.length; i++) h[i] = t === GgmlType.F16 ? f32ToF16(x[i]!) : f32ToBf16(x[i]!);
    return out;
  }
  const q = quantizer(t);
  for (let r = 0; r < rows; r++) q(x, r * k, out, r * rb, k);
  return out;
}

interface Case {
  /** the graph: computed once per entry of `steps` (inputs rewritten per step), state persists */
  graph: Graph;
  /** leaf data by tensor id (weights, state initial value) */
  data: Map<number, Uint8Array>;
  /** per step: input data by tensor id */
  steps: Map<number, Uint8Array>[];
  /** tensor compared (default: the graph output); state tensors compare their bytes as f16/f32 */
  check?: number;
}

/** Runs a case on a device; returns the checked tensor as f32 values after the last step. */
async function runCase(device: Device, c: Case): Promise<Float32Array> {
  // a copy of the graph's tensors: a device may give weights its own layout (prepareWeight), as at model load
  const g = { ...c.graph, tensors: c.graph.tensors.map((t) => ({ ...t })) };
  const bt = device.bufferType();
  const placements: Placement[] = [];
  for (const t of g.tensors) {
    const bytes = Math.max(4, t.op === 'kv_store' ? 4 : tensorBytes(t, rowBytes));
    const usage = t.role === 'weight' ? 'weights' : t.role === 'state' ? 'state' : t.role === 'input' ? 'input' : 'compute';
    const buffer = bt.allocate(bytes, usage);
    placements[t.id] = { buffer, offset: 0, nBytes: bytes };
    const d = c.data.get(t.id);
    if (d) buffer.set(0, d);
    else if (t.role === 'state') buffer.clear(0);
    if (d && t.role === 'weight' && typeof t.dtype === 'number' && device.prepareWeight) {
      (t as { dtype: TensorDesc['dtype'] }).dtype = device.prepareWeight(placements[t.id]!, t.dtype, t.shape);
    }
  }
  const backend = device.createBackend();
  for (const step of c.steps) {
    for (const [id, d] of step) placements[id]!.buffer.set(0, d);
    await backend.compute({ graph: g, placement: (id) => placements[id]! }, g.nodes);
  }
  const out = g.tensors[c.check ?? g.output]!;
  const bytes = placements[out.id]!.buffer.get(0, placements[out.id]!.nBytes);
  if (out.dtype === 'f16') { const h = new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2); return Float32Array.from(h); } // compare raw f16 bits
  return new Float32Array(bytes.buffer, bytes.byteOffset, nElements(out));
}

const i32 = (a: number[]) => new Uint8Array(Int32Array.from(a).buffer);
const f32b = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

interface Row { op: string; variant: string; device: string; maxAbs: number; bitExact: boolean }
const table: Row[] = [];

async function compare(op: string, variant: string, make: () => Case, fastBound?: number, exactBound = 0): Promise<void> {
  const c = make();
  const want = await runCase(ref, c);
  const devices: [string, Device, number][] = [['cpu 1 thread', cpu1, exactBound], ['cpu 2 threads', cpu2, exactBound], ['cpu simd128 2 threads', base2, exactBound]];
  if (fastBound !== undefined) devices.push(['cpu fast 2 threads', fast2, fastBound], ['cpu fast simd128 2 threads', baseFast2, fastBound]);
  for (const [name, d, bound] of devices) {
    const got = await runCase(d, c);
    assert.equal(got.length, want.length);
    let maxAbs = 0, scale = 0, bitExact = true;
    for (let i = 0; i < want.length; i++) {
      if (!Object.is(got[i], want[i])) bitExact = false;
      maxAbs = Math.max(maxAbs, Math.abs(got[i]! - want[i]!));
      scale = Math.max(scale, Math.abs(want[i]!));
    }
    table.push({ op, variant, device: name, maxAbs, bitExact });
    if (bound === 0) assert.ok(bitExact, `${op} ${variant} on ${name}: not bit-identical (max abs err ${maxAbs})`);
    else assert.ok(maxAbs <= bound * Math.max(1, scale), `${op} ${variant} on ${name}: max abs err ${maxAbs} > ${bound} x ${scale}`);
  }
}

function single(build: (b: GraphBuilder) => { out: TensorDesc; data: [TensorDesc, Uint8Array][]; inputs?: [TensorDesc, Uint8Array][] }): () => Case {
  return () => {
    const b = new GraphBuilder();
    const { out, data, inputs = [] } = build(b);
    const graph = b.finish({ tokens: -1, positions: -1, outputRows: -1 }, out, 1, 1);
    return { graph, data: new Map(data.map(([t, d]) => [t.id, d])), steps: [new Map(inputs.map(([t, d]) => [t.id, d]))] };
  };
}

test('mul_mat: every weight type x shapes x batch', async () => {
  for (const wt of WEIGHT_TYPES) {
    const blk = FLOATS.has(wt) ? 16 : K_QUANTS.has(wt) ? 256 : 32;
    const ks = blk === 16 ? [80, 128] : blk === 256 ? [256, 768] : [96, 128];
    for (const k of ks) for (const n of [13, 24]) for (const m of [1, 2, 5, 8]) {
      await compare('mul_mat', `${ggmlTypeName(wt)} k=${k} n=${n} m=${m}`, single((b) => {
        const w = b.leaf('w', 'weight', wt, [k, n]);
        const x = b.leaf('x', 'input', 'f32', [k, m]);
        return { out: b.mulMat(w, x), data: [[w, weightBytes(wt, k, n)], [x, f32b(randF32(k * m, 3))]] };
        // types without a known llama.cpp order run their WASM kernels in the default device too
      }), 1e-4, LLAMA_EXACT_MATMUL_TYPES.has(wt) ? 0 : 1e-4);
    }
  }
});

test('get_rows: every weight type', async () => {
  for (const wt of WEIGHT_TYPES) {
    const k = K_QUANTS.has(wt) ? 256 : 64;
    await compare('get_rows', ggmlTypeName(wt), single((b) => {
      const w = b.leaf('w', 'weight', wt, [k, 13]);
      const ids = b.leaf('ids', 'input', 'i32', [4]);
      return { out: b.getRows(w, ids), data: [[w, weightBytes(wt, k, 13)], [ids, i32([3, 0, 12, 3])]] };
    }));
  }
});

test('elementwise ops: add, mul (full and broadcast), scale, swiglu, geglu, softcap, view_cols', async () => {
  for (const [rows, cols] of [[37, 3], [64, 1], [1000, 2]] as const) {
    const n = rows * cols;
    const A = randF32(n, 12), B = randF32(n, 2), R = randF32(rows, 2);
    for (const op of ['add', 'mul'] as const) {
      await compare(op, `${rows}x${cols} full`, single((b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, cols]), c = b.leaf('b', 'input', 'f32', [rows, cols]);
        return { out: op === 'add' ? b.addT(a, c) : b.mul(a, c), data: [[a, f32b(A)], [c, f32b(B)]] };
      }));
      await compare(op, `${rows}x${cols} row broadcast`, single((b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, cols]), c = b.leaf('b', 'weight', 'f32', [rows]);
        return { out: op === 'add' ? b.addT(a, c) : b.mul(a, c), data: [[a, f32b(A)], [c, f32b(R)]] };
      }));
    }
    await compare('scale', `${rows}x${cols}`, single((b) => {
      const a = b.leaf('a', 'input', 'f32', [rows, cols]);
      return { out: b.scale(a, 0.1234567), data: [[a, f32b(A)]] };
    }));
    for (const op of ['swiglu', 'geglu'] as const) {
      await compare(op, `${rows}x${cols}`, single((b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, cols]), c = b.leaf('b', 'input', 'f32', [rows, cols]);
        return { out: op === 'swiglu' ? b.swiglu(a, c) : b.geglu(a, c), data: [[a, f32b(A)], [c, f32b(B)]] };
      }));
    }
    await compare('softcap', `${rows}x${cols}`, single((b) => {
      const a = b.leaf('a', 'input', 'f32', [rows, cols]);
      return { out: b.softcap(a, 5), data: [[a, f32b(A)]] };
    }));
    if (rows > 20) {
      await compare('view_cols', `${rows}x${cols} [7, 20)`, single((b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, cols]);
        return { out: b.viewCols(a, 7, 13), data: [[a, f32b(A)]] };
      }));
    }
  }
});

test('rms_norm: whole rows and per-head chunks', async () => {
  for (const [len, rows, rowLen] of [[64, 3, 64], [96, 5, 32], [1000, 1, 1000], [37, 2, 37]] as const) {
    const A = randF32(len * rows, 4);
    await compare('rms_norm', `${len}x${rows} rowLen ${rowLen}`, single((b) => {
      const a = b.leaf('a', 'input', 'f32', [len, rows]);
      return { out: b.rmsNorm(a, 1e-6, rowLen), data: [[a, f32b(A)]] };
    }));
  }
});

test('rope: normal and NeoX, partial dims, freq factors, large positions', async () => {
  for (const neox of [false, true]) for (const [headDim, nDims] of [[32, 32], [64, 32]] as const) for (const factors of [false, true]) {
    for (const pos of [[0, 1, 2], [5], [1000, 70000]]) {
      const nHead = 3, m = pos.length;
      const X = randF32(headDim * nHead * m, 2), F = Float32Array.from({ length: nDims / 2 }, () => 1 + 3 * rand());
      await compare('rope', `${neox ? 'neox' : 'normal'} hd=${headDim} dims=${nDims}${factors ? ' factors' : ''} pos=${pos}`, single((b) => {
        const x = b.leaf('x', 'input', 'f32', [headDim * nHead, m]);
        const p = b.leaf('pos', 'input', 'i32', [m]);
        const ff = factors ? b.leaf('ff', 'weight', 'f32', [nDims / 2]) : undefined;
        const data: [TensorDesc, Uint8Array][] = [[x, f32b(X)], [p, i32(pos)]];
        if (ff) data.push([ff, f32b(F)]);
        return { out: b.rope(x, p, { headDim, nDims, neox, freqBase: 10000, freqScale: 0.5 }, ff), data };
      }));
    }
  }
});

test('kv_store and attention: f16/f32 cache, prompt then decode steps, GQA, window, softcap', async () => {
  const variants = [
    { kv: 'f16', nHead: 4, nHeadKv: 2, hd: 32, window: 0, softcap: 0 },
    { kv: 'f16', nHead: 3, nHeadKv: 3, hd: 64, window: 0, softcap: 0 },
    { kv: 'f16', nHead: 4, nHeadKv: 1, hd: 32, window: 3, softcap: 0 },
    { kv: 'f16', nHead: 2, nHeadKv: 2, hd: 32, window: 0, softcap: 20 },
    { kv: 'f32', nHead: 4, nHeadKv: 2, hd: 32, window: 0, softcap: 0 },
  ] as const;
  for (const v of variants) for (const [prompt, decode] of [[5, 3], [1, 2], [19, 1]] as const) {
    const nCtx = 32;
    const make = (m: number, check: 'attn' | 'cache'): Case => {
      const b = new GraphBuilder();
      const q = b.leaf('q', 'input', 'f32', [v.hd * v.nHead, m]);
      const kx = b.leaf('kx', 'input', 'f32', [v.hd * v.nHeadKv, m]);
      const vx = b.leaf('vx', 'input', 'f32', [v.hd * v.nHeadKv, m]);
      const pos = b.leaf('pos', 'input', 'i32', [m]);
      const kc = b.leaf('kc', 'state', v.kv, [v.hd * v.nHeadKv, nCtx]);
      const vc = b.leaf('vc', 'state', v.kv, [v.hd * v.nHeadKv, nCtx]);
      const s1 = b.kvStore(kc, kx, pos), s2 = b.kvStore(vc, vx, pos);
      const out = b.attention(q, kc, vc, pos, { nHead: v.nHead, nHeadKv: v.nHeadKv, headDimK: v.hd, headDimV: v.hd, scale: 1 / Math.sqrt(v.hd), softcap: v.softcap, window: v.window }, [s1, s2]);
      const graph = b.finish({ tokens: -1, positions: pos.id, outputRows: -1 }, out, m, m);
      return { graph, data: new Map(), steps: [], check: check === 'cache' ? kc.id : undefined };
    };
    // the prompt as one batch (tinyBLAS order), checking the attention output and the stored cache
    for (const check of ['attn', 'cache'] as const) {
      await compare(check === 'attn' ? 'attention' : 'kv_store', `${v.kv} heads ${v.nHead}/${v.nHeadKv} hd ${v.hd}${v.window ? ` window ${v.window}` : ''}${v.softcap ? ` softcap ${v.softcap}` : ''} batch ${prompt}`, () => {
        const c = make(prompt, check);
        const qn = prompt * v.hd * v.nHead, kvn = prompt * v.hd * v.nHeadKv;
        const t = c.graph.tensors;
        c.steps = [new Map([[t[0]!.id, f32b(randF32(qn, 2))], [t[1]!.id, f32b(randF32(kvn, 2))], [t[2]!.id, f32b(randF32(kvn, 2))], [t[3]!.id, i32(Array.from({ length: prompt }, (_, i) => i))]])];
        return c;
      });
    }
    // one-token decode steps (ggml_vec_dot_f16 order) over a cache filled step by step
    await compare('attention', `${v.kv} heads ${v.nHead}/${v.nHeadKv} hd ${v.hd}${v.window ? ` window ${v.window}` : ''}${v.softcap ? ` softcap ${v.softcap}` : ''} ${prompt + decode} decode steps`, () => {
      const c = make(1, 'attn');
      const t = c.graph.tensors;
      for (let s = 0; s < prompt + decode; s++) {
        c.steps.push(new Map([[t[0]!.id, f32b(randF32(v.hd * v.nHead, 2))], [t[1]!.id, f32b(randF32(v.hd * v.nHeadKv, 2))], [t[2]!.id, f32b(randF32(v.hd * v.nHeadKv, 2))], [t[3]!.id, i32([s])]]));
      }
      return c;
    });
  }
});

test('max-abs-error table', () => {
  const lines = ['op | variant | device | max abs err | bit-exact', '---|---|---|---|---'];
  for (const r of table) lines.push(`${r.op} | ${r.variant} | ${r.device} | ${r.maxAbs.toExponential(2)} | ${r.bitExact ? 'yes' : 'no'}`);
  console.log(lines.join('\n'));
  assert.ok(table.length > 0);
});

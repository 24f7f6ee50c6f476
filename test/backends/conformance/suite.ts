// The device conformance suite (after ggml's test-backend-ops): every op a device claims, for every
// weight type and a spread of awkward shapes, computed through the device's real path (its buffer
// type, prepareWeight as at model load, claimGroups/compileGroup for group devices, its backend)
// and compared with the reference device, llama.cpp's numerics, as the oracle. One manifest entry
// per case: {device, op, types, shape, max_abs_err, nmse, threshold, pass}.
//
// A case is "claimed" when supportsOp holds for every node of its graph (and, for a device with
// claimGroups, its groups cover the nodes and compileGroup accepts them); unclaimed cases are not
// run and not listed. A device with staticShapes is tested at those token counts only.
//
// Thresholds are on NMSE (sum (got - want)^2 / sum want^2), the measure test-backend-ops uses, with
// its values: 5e-4 for mul_mat and attention (a device may quantize activations, reorder sums or
// use another exp/softmax) and 1e-7 for the rest; pure data movement (view_cols, kv_store) must be
// exact. The cpu device's measured errors are far below (NOTES.md, plugins).
import type { Device, Placement } from '../../../src/backends/backend.js';
import { DeviceError, tensorBytes } from '../../../src/backends/backend.js';
import { GraphBuilder, nElements, type Graph, type TensorDesc } from '../../../src/graph/graph.js';
import { GgmlType, ggmlTypeName, rowBytes } from '../../../src/gguf/ggml-types.js';
import { WEIGHT_TYPE_IDS } from '../../../src/backends/describe.js';
import { f16ToF32, f32ToBf16, f32ToF16, isQuantizableType, quantizer } from '../../../src/quant/index.js';

/** One manifest entry (field names are the contract of `npm run test:backend-ops`). */
export interface ManifestEntry {
  device: string;
  op: string;
  /** element types of the op's sources, ggml names for weights ('Q8_0') and 'f32' | 'f16' | 'i32' otherwise */
  types: string[];
  /** source shapes ne0 first, then the op's parameters when they matter, e.g. "[96,13] [96,5]" */
  shape: string;
  max_abs_err: number;
  /** null when the device produced a NaN/Inf the reference did not, or failed to run the case */
  nmse: number | null;
  threshold: number;
  pass: boolean;
}

/** Inputs of one case: leaf data, and per compute step the inputs to write (state persists). */
export interface Case {
  graph: Graph;
  data: Map<number, Uint8Array>;
  steps: Map<number, Uint8Array>[];
  /** tensor compared (default: the graph output); an f16 state tensor compares its values */
  check?: number;
}

export interface CaseSpec {
  op: string;
  types: string[];
  shape: string;
  threshold: number;
  make(): Case;
}

export const THRESHOLDS: Record<string, number> = {
  mul_mat: 5e-4,
  attention: 5e-4,
  get_rows: 1e-7, // quantized rows: a device may dequantize with an FMA (d * q + m in one rounding)
  view_cols: 0,
  kv_store: 0, // f32 copy or IEEE round-to-nearest to f16: one right answer
  add: 1e-7, mul: 1e-7, scale: 1e-7, rms_norm: 1e-7, rope: 1e-7, swiglu: 1e-7, geglu: 1e-7, softcap: 1e-7,
  view_blocks: 0, scale_rows: 0,
  silu: 1e-7, sigmoid: 1e-7, softplus: 1e-7, l2_norm: 1e-7,
  // the recurrent ops over several steps: a device may reorder the conv's and the delta rule's f32 sums
  ssm_conv: 1e-7, gated_delta_net: 1e-7,
  mul_mat_id: 5e-4, soft_max: 1e-7, moe_weights: 1e-7, moe_sum: 1e-7,
  top_k: 0, // expert ids: one right answer (compared as their bits)
};

const FLOATS = new Set<number>([GgmlType.F32, GgmlType.F16, GgmlType.BF16]);
const blockOf = (t: number) => (FLOATS.has(t) ? 16 : t >= GgmlType.Q2_K && t <= GgmlType.Q8_K || t === GgmlType.IQ4_XS ? 256 : 32);
/** weight types the suite can produce data for */
export const SUITE_WEIGHT_TYPES = WEIGHT_TYPE_IDS.filter((t) => FLOATS.has(t) || isQuantizableType(t));

// ---- deterministic data

function rng(seed: number): { f32(n: number, amp?: number): Float32Array; next(): number } {
  let s = seed >>> 0;
  const next = () => { s = (Math.imul(s, 1103515245) + 12345) >>> 0; return s / 2 ** 32; };
  return { next, f32(n, amp = 1) { const a = new Float32Array(n); for (let i = 0; i < n; i++) a[i] = (2 * next() - 1) * amp; return a; } };
}

function weightBytes(r: ReturnType<typeof rng>, t: number, k: number, rows: number): Uint8Array {
  const x = r.f32(k * rows);
  if (t === GgmlType.F32) return new Uint8Array(x.buffer);
  const rb = rowBytes(t, k);
  const out = new Uint8Array(rb * rows);
  if (t === GgmlType.F16 || t === GgmlType.BF16) {
    const h = new Uint16Array(out.buffer);
    for (let i = 0; i < x.length; i++) h[i] = t === GgmlType.F16 ? f32ToF16(x[i]!) : f32ToBf16(x[i]!);
    return out;
  }
  const q = quantizer(t);
  for (let i = 0; i < rows; i++) q(x, i * k, out, i * rb, k);
  return out;
}

const i32 = (a: number[]) => new Uint8Array(Int32Array.from(a).buffer);
const f32b = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
const typeName = (d: TensorDesc['dtype']) => (typeof d === 'number' ? ggmlTypeName(d) : d);
const dims = (ts: TensorDesc[]) => ts.map((t) => `[${t.shape.join(',')}]`).join(' ');

/** A one-op case: the node's sources are the leaves built by `build`. */
function single(nTok: number, build: (b: GraphBuilder) => { out: TensorDesc; data: [TensorDesc, Uint8Array][] }): Case {
  const b = new GraphBuilder();
  b.setGroup('blk.0');
  const { out, data } = build(b);
  const graph = b.finish({ tokens: -1, positions: -1, outputRows: -1 }, out, nTok, nTok);
  const d = new Map(data.map(([t, v]) => [t.id, v]));
  return { graph, data: d, steps: [new Map()] };
}

function spec(op: string, srcs: () => TensorDesc[], params: string, make: () => Case): CaseSpec {
  // the descriptor fields come from one build of the case (cheap: graphs only, data is made lazily below)
  const s = srcs();
  return { op, types: s.map((t) => typeName(t.dtype)), shape: dims(s) + (params ? ` (${params})` : ''), threshold: THRESHOLDS[op]!, make };
}

export interface SuiteOptions {
  /** 'full' for `npm run test:backend-ops`, 'small' for the form in `npm test` */
  size: 'full' | 'small';
  /** token counts to build graphs at (a device's staticShapes); default: a spread per op */
  tokenCounts?: readonly number[];
}

/** Every case of the suite, in a fixed order with fixed data (the same seeds every run). */
export function buildCases(o: SuiteOptions): CaseSpec[] {
  const full = o.size === 'full';
  const toks = (d: number[]) => (o.tokenCounts ? [...o.tokenCounts] : d);
  const cases: CaseSpec[] = [];
  let seed = 1;
  const add = (op: string, params: string, build: (nTok: number, r: ReturnType<typeof rng>) => Case, nTok: number) => {
    const s = seed++;
    const make = () => build(nTok, rng(s * 7919));
    cases.push(spec(op, () => { const c = make(); const t = c.graph.tensors[c.graph.nodes.find((id) => c.graph.tensors[id]!.op === op)!]!; return t.src.map((id) => c.graph.tensors[id]!).filter((x) => op !== 'attention' || x.op === 'none'); }, params, make));
  };

  // mul_mat: every weight type x row lengths x weight rows (odd, not a multiple of 8) x token counts
  for (const wt of SUITE_WEIGHT_TYPES) {
    const blk = blockOf(wt);
    const ks = full ? (blk === 16 ? [80, 128] : blk === 256 ? [256, 768] : [96, 128]) : [blk === 256 ? 256 : 96];
    const ns = full ? [13, 24] : [13];
    for (const k of ks) for (const n of ns) for (const m of toks(full ? [1, 2, 5, 8] : [1, 5])) {
      add('mul_mat', '', (nTok, r) => single(nTok, (b) => {
        const w = b.leaf('w', 'weight', wt, [k, n]);
        const x = b.leaf('x', 'input', 'f32', [k, nTok]);
        return { out: b.mulMat(w, x), data: [[w, weightBytes(r, wt, k, n)], [x, f32b(r.f32(k * nTok, 3))]] };
      }), m);
    }
  }
  // mul_mat_id: expert matrices of odd and repackable row counts, one input row per token or per slot,
  // experts chosen so that some get several rows of a batch, some one, some none
  const moeSmall: number[] = [GgmlType.F32, GgmlType.F16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q6_K];
  const moeTypes = full ? SUITE_WEIGHT_TYPES : SUITE_WEIGHT_TYPES.filter((t) => moeSmall.includes(t));
  for (const wt of moeTypes) {
    const k = blockOf(wt) === 256 ? 256 : 64;
    for (const n of full ? [13, 16] : [16]) for (const perSlot of [false, true]) for (const m of toks(full ? [1, 5] : [5])) {
      add('mul_mat_id', `${n} rows x 5 experts, top 3, ${perSlot ? 'a row per slot' : 'a row per token'}`, (nTok, r) => single(nTok, (b) => {
        const w = b.leaf('w', 'weight', wt, [k, n, 5]);
        const x = b.leaf('x', 'input', 'f32', perSlot ? [k, 3, nTok] : [k, nTok]);
        const ids = b.leaf('ids', 'input', 'i32', [3, nTok]);
        const idv = Array.from({ length: nTok }, (_, t) => [(t * 2) % 5, (t * 2 + 1) % 5, 4 - (t % 2)]).flat();
        return { out: b.mulMatId(w, x, ids), data: [[w, weightBytes(r, wt, k, n * 5)], [x, f32b(r.f32(k * nTok * (perSlot ? 3 : 1), 3))], [ids, i32(idv)]] };
      }), m);
    }
  }
  // the router's ops: softmax rows shorter and longer than 16 (v_expf chunks + glibc expf tail), top-k,
  // renormalised weights (with a scale), the weighted sum of expert outputs
  for (const nExp of full ? [6, 37, 128] : [6, 37]) for (const m of toks(full ? [1, 4] : [4])) {
    add('soft_max', `rows of ${nExp}`, (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('a', 'input', 'f32', [nExp, nTok]);
      return { out: b.softMax(a), data: [[a, f32b(r.f32(nExp * nTok, 4))]] };
    }), m);
    add('top_k', `top 4 of ${nExp}`, (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('a', 'input', 'f32', [nExp, nTok]);
      return { out: b.topK(a, 4), data: [[a, f32b(r.f32(nExp * nTok, 4))]] };
    }), m);
    add('moe_weights', `4 of ${nExp}, norm, scale 2.5`, (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('p', 'input', 'f32', [nExp, nTok]);
      const ids = b.leaf('ids', 'input', 'i32', [4, nTok]);
      return { out: b.moeWeights(a, ids, { norm: true, scale: 2.5 }), data: [[a, f32b(Float32Array.from(r.f32(nExp * nTok, 1), Math.abs))], [ids, i32(Array.from({ length: 4 * nTok }, (_, i) => (i * 7 + 1) % nExp))]] };
    }), m);
  }
  for (const m of toks(full ? [1, 4] : [4])) {
    add('moe_sum', '3 experts of 96', (nTok, r) => single(nTok, (b) => {
      const y = b.leaf('y', 'input', 'f32', [96, 3, nTok]);
      const w = b.leaf('w', 'input', 'f32', [3, nTok]);
      return { out: b.moeSum(y, w), data: [[y, f32b(r.f32(96 * 3 * nTok, 3))], [w, f32b(r.f32(3 * nTok, 1))]] };
    }), m);
  }
  // get_rows: every weight type
  for (const wt of SUITE_WEIGHT_TYPES) {
    const k = blockOf(wt) === 256 ? 256 : 64;
    for (const m of toks([4])) {
      add('get_rows', '', (nTok, r) => single(nTok, (b) => {
        const w = b.leaf('w', 'weight', wt, [k, 13]);
        const ids = b.leaf('ids', 'input', 'i32', [nTok]);
        return { out: b.getRows(w, ids), data: [[w, weightBytes(r, wt, k, 13)], [ids, i32(Array.from({ length: nTok }, (_, i) => (i * 5 + 3) % 13))]] };
      }), m);
    }
  }
  // elementwise: full and broadcast operands, odd row lengths
  const rowLens = full ? [37, 64, 1000] : [37, 64];
  for (const rows of rowLens) for (const m of toks(full ? [1, 3] : [3])) {
    for (const op of ['add', 'mul'] as const) {
      add(op, 'full', (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, nTok]), c = b.leaf('b', 'input', 'f32', [rows, nTok]);
        return { out: op === 'add' ? b.addT(a, c) : b.mul(a, c), data: [[a, f32b(r.f32(rows * nTok, 12))], [c, f32b(r.f32(rows * nTok, 2))]] };
      }), m);
      add(op, 'row broadcast', (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, nTok]), c = b.leaf('b', 'weight', 'f32', [rows]);
        return { out: op === 'add' ? b.addT(a, c) : b.mul(a, c), data: [[a, f32b(r.f32(rows * nTok, 12))], [c, f32b(r.f32(rows, 2))]] };
      }), m);
    }
    add('scale', 'scale 0.1234567', (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('a', 'input', 'f32', [rows, nTok]);
      return { out: b.scale(a, 0.1234567), data: [[a, f32b(r.f32(rows * nTok, 12))]] };
    }), m);
    for (const op of ['swiglu', 'geglu'] as const) {
      add(op, '', (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, nTok]), c = b.leaf('b', 'input', 'f32', [rows, nTok]);
        return { out: op === 'swiglu' ? b.swiglu(a, c) : b.geglu(a, c), data: [[a, f32b(r.f32(rows * nTok, 12))], [c, f32b(r.f32(rows * nTok, 2))]] };
      }), m);
    }
    add('softcap', 'cap 5', (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('a', 'input', 'f32', [rows, nTok]);
      return { out: b.softcap(a, 5), data: [[a, f32b(r.f32(rows * nTok, 12))]] };
    }), m);
    if (rows > 20) {
      add('view_cols', 'cols [7, 20)', (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [rows, nTok]);
        return { out: b.viewCols(a, 7, 13), data: [[a, f32b(r.f32(rows * nTok, 12))]] };
      }), m);
    }
  }
  // the recurrent layers' element-wise ops: SIMD rows and scalar tails (row lengths not a multiple of 16)
  for (const [len, rowLen] of (full ? [[64, 64], [96, 32], [37, 37], [74, 37]] : [[96, 32], [37, 37]]) as [number, number][]) {
    for (const m of toks(full ? [1, 3] : [3])) {
      add('silu', `rowLen ${rowLen}`, (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [len, nTok]);
        return { out: b.silu(a, rowLen), data: [[a, f32b(r.f32(len * nTok, 12))]] };
      }), m);
      add('l2_norm', `rowLen ${rowLen}`, (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [len, nTok]);
        return { out: b.l2Norm(a, 1e-6, rowLen), data: [[a, f32b(r.f32(len * nTok, 4))]] };
      }), m);
    }
  }
  for (const m of toks(full ? [1, 3] : [3])) {
    for (const op of ['sigmoid', 'softplus'] as const) {
      add(op, 'inputs within +-30', (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [37, nTok]);
        return { out: op === 'sigmoid' ? b.sigmoid(a) : b.softplus(a), data: [[a, f32b(r.f32(37 * nTok, 30))]] };
      }), m);
    }
    add('scale_rows', 'rows of 37 x a scalar each', (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('a', 'input', 'f32', [37, nTok]), sc = b.leaf('s', 'input', 'f32', [1, nTok]);
      return { out: b.scaleRows(a, sc), data: [[a, f32b(r.f32(37 * nTok, 12))], [sc, f32b(r.f32(nTok, 1))]] };
    }), m);
    add('view_blocks', '3 blocks of 5 every 12 from 2', (nTok, r) => single(nTok, (b) => {
      const a = b.leaf('a', 'input', 'f32', [40, nTok]);
      return { out: b.viewBlocks(a, 2, 5, 12, 3), data: [[a, f32b(r.f32(40 * nTok, 12))]] };
    }), m);
  }
  // ssm_conv and gated_delta_net: a prompt, then one-token steps, the state carried from step to step
  // (14 tokens: the cpu kernel's tiles of 4 tokens after the first kernel-1, and a partial one)
  for (const [channels, kernel] of (full ? [[37, 3], [64, 4]] : [[37, 3]]) as [number, number][]) {
    for (const m of toks(full ? [1, 5, 14] : [5])) {
      add('ssm_conv', `${channels} channels, width ${kernel}, 3 steps of ${m}`, (nTok, r) => {
        const c = single(nTok, (b) => {
          const st = b.leaf('conv', 'state', 'f32', [(kernel - 1) * channels]);
          const x = b.leaf('x', 'input', 'f32', [channels, nTok]), w = b.leaf('w', 'weight', 'f32', [kernel, channels]);
          return { out: b.ssmConv(st, x, w), data: [[w, f32b(r.f32(kernel * channels, 1))]] };
        });
        const x = c.graph.tensors.find((t) => t.name === 'x')!;
        c.steps = [0, 1, 2].map(() => new Map([[x.id, f32b(r.f32(channels * nTok, 3))]]));
        return c;
      }, m);
    }
  }
  for (const [S, hk, hv] of (full ? [[32, 2, 4], [16, 1, 1], [64, 2, 2], [80, 1, 2]] : [[32, 2, 4]]) as [number, number, number][]) {
    for (const m of toks(full ? [1, 5] : [5])) {
      add('gated_delta_net', `S ${S}, k-heads ${hk}, v-heads ${hv}, 3 steps of ${m}`, (nTok, r) => {
        const c = single(nTok, (b) => {
          const st = b.leaf('ssm', 'state', 'f32', [S * S * hv]);
          const [q, k, v, g, beta] = ([['q', S * hk], ['k', S * hk], ['v', S * hv], ['g', hv], ['beta', hv]] as const).map(([n, w]) => b.leaf(n, 'input', 'f32', [w, nTok]));
          return { out: b.gatedDeltaNet(st, q!, k!, v!, g!, beta!, { headDim: S, nHeadK: hk, nHeadV: hv }), data: [] };
        });
        const leaf = (n: string) => c.graph.tensors.find((t) => t.name === n)!.id;
        // q and k unit-length per head (as after l2_norm), g < 0 (a decay), beta in (0, 1)
        const unit = (n: number) => { const a = r.f32(n, 1); for (let h = 0; h < n; h += S) { let ss = 0; for (let i = h; i < h + S; i++) ss += a[i]! * a[i]!; for (let i = h; i < h + S; i++) a[i]! /= Math.sqrt(ss); } return a; };
        c.steps = [0, 1, 2].map(() => new Map([
          [leaf('q'), f32b(unit(S * hk * nTok))], [leaf('k'), f32b(unit(S * hk * nTok))], [leaf('v'), f32b(r.f32(S * hv * nTok, 2))],
          [leaf('g'), f32b(Float32Array.from(r.f32(hv * nTok, 1), (x) => -2 * Math.abs(x)))], [leaf('beta'), f32b(Float32Array.from(r.f32(hv * nTok, 1), (x) => 0.5 + 0.45 * x))],
        ]));
        return c;
      }, m);
    }
  }
  // rms_norm: whole rows and per-head chunks
  for (const [len, rowLen] of (full ? [[64, 64], [96, 32], [1000, 1000], [37, 37]] : [[96, 32], [37, 37]]) as [number, number][]) {
    for (const m of toks(full ? [1, 3] : [3])) {
      add('rms_norm', `rowLen ${rowLen}`, (nTok, r) => single(nTok, (b) => {
        const a = b.leaf('a', 'input', 'f32', [len, nTok]);
        return { out: b.rmsNorm(a, 1e-6, rowLen), data: [[a, f32b(r.f32(len * nTok, 4))]] };
      }), m);
    }
  }
  // rope: normal and NeoX, partial rotation, frequency factors, large positions
  for (const neox of [false, true]) for (const [headDim, nDims] of (full ? [[32, 32], [64, 32]] : [[64, 32]]) as [number, number][]) {
    for (const factors of full ? [false, true] : [true]) for (const m of toks([3])) for (const far of full ? [false, true] : [true]) {
      add('rope', `${neox ? 'neox' : 'normal'} headDim ${headDim} nDims ${nDims}${factors ? ' freq factors' : ''}${far ? ' pos from 70000' : ''}`, (nTok, r) => single(nTok, (b) => {
        const nHead = 3;
        const x = b.leaf('x', 'input', 'f32', [headDim * nHead, nTok]);
        const p = b.leaf('pos', 'input', 'i32', [nTok]);
        const ff = factors ? b.leaf('ff', 'weight', 'f32', [nDims / 2]) : undefined;
        const data: [TensorDesc, Uint8Array][] = [[x, f32b(r.f32(headDim * nHead * nTok, 2))], [p, i32(Array.from({ length: nTok }, (_, i) => (far ? 70000 : 0) + i * 7))]];
        if (ff) data.push([ff, f32b(Float32Array.from({ length: nDims / 2 }, () => 1 + 3 * r.next()))]);
        return { out: b.rope(x, p, { headDim, nDims, neox, freqBase: 10000, freqScale: 0.5 }, ff), data };
      }), m);
    }
  }
  // kv_store + attention: f16/f32 cache, GQA, sliding window, softcap; a prompt batch, then decode steps
  const variants = [
    { kv: 'f16', nHead: 4, nHeadKv: 2, hd: 32, window: 0, softcap: 0 },
    { kv: 'f16', nHead: 4, nHeadKv: 1, hd: 32, window: 3, softcap: 0 },
    { kv: 'f16', nHead: 2, nHeadKv: 2, hd: 32, window: 0, softcap: 20 },
    { kv: 'f32', nHead: 4, nHeadKv: 2, hd: 32, window: 0, softcap: 0 },
    { kv: 'f16', nHead: 3, nHeadKv: 3, hd: 64, window: 0, softcap: 0 },
  ] as const;
  for (const v of full ? variants : variants.slice(0, 2)) {
    const label = `heads ${v.nHead}/${v.nHeadKv} hd ${v.hd}${v.window ? ` window ${v.window}` : ''}${v.softcap ? ` softcap ${v.softcap}` : ''}`;
    const graphAt = (m: number, nCtx: number, check: 'attn' | 'cache'): Case => {
      const b = new GraphBuilder();
      b.setGroup('blk.0');
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
    const stepInputs = (c: Case, r: ReturnType<typeof rng>, m: number, p0: number) => {
      const t = c.graph.tensors;
      return new Map([[t[0]!.id, f32b(r.f32(m * v.hd * v.nHead, 2))], [t[1]!.id, f32b(r.f32(m * v.hd * v.nHeadKv, 2))], [t[2]!.id, f32b(r.f32(m * v.hd * v.nHeadKv, 2))], [t[3]!.id, i32(Array.from({ length: m }, (_, i) => p0 + i))]]);
    };
    for (const m of toks(full ? [1, 5, 19] : [5])) for (const check of ['attn', 'cache'] as const) {
      const nCtx = Math.max(32, m + 8);
      add(check === 'attn' ? 'attention' : 'kv_store', `${v.kv} cache ${label}, prompt of ${m}`, (nTok, r) => {
        const c = graphAt(nTok, nCtx, check);
        c.steps = [stepInputs(c, r, nTok, 0)];
        return c;
      }, m);
    }
    // one-token decode steps over a cache filled step by step (needs the 1-token shape)
    if (!o.tokenCounts || o.tokenCounts.includes(1)) {
      const steps = full ? 8 : 4;
      add('attention', `${v.kv} cache ${label}, ${steps} decode steps`, (_n, r) => {
        const c = graphAt(1, 32, 'attn');
        for (let s = 0; s < steps; s++) c.steps.push(stepInputs(c, r, 1, s));
        return c;
      }, 1);
    }
  }
  return cases;
}

// ---- running a case on a device

/** Can `device` run every node of the case (op claims, group claims, load-time compile)? */
export async function claims(device: Device, c: Case, weightBytes: (id: number) => Uint8Array): Promise<boolean> {
  const g = c.graph;
  if (device.staticShapes && !device.staticShapes.includes(g.nTokens)) return false;
  for (const id of g.nodes) if (!device.supportsOp(g.tensors[id]!, g)) return false;
  if (device.claimGroups) {
    const groups = device.claimGroups(g);
    const covered = new Set(groups.flatMap((x) => x.nodes));
    if (!g.nodes.every((id) => covered.has(id))) return false;
    for (const group of groups) {
      try {
        await device.compileGroup?.({ graph: g, group, nTokens: g.nTokens, weightBytes });
      } catch (e) {
        // the scheduler's fallback codes: the group stays on the next device, so the case is unclaimed
        if (e instanceof DeviceError && (e.code === 'COMPILE_FAILED' || e.code === 'OVER_BUDGET' || e.code === 'UNSUPPORTED')) return false;
        throw e;
      }
    }
  }
  return true;
}

/** Runs a case on a device (its buffers, prepareWeight, its backend); returns the checked tensor as f32. */
export async function runCase(device: Device, c: Case): Promise<Float32Array> {
  // a copy of the tensors: prepareWeight may give a weight the device's own layout id
  const g: Graph = { ...c.graph, tensors: c.graph.tensors.map((t) => ({ ...t })) };
  const bt = device.bufferType();
  const placements: Placement[] = [];
  const buffers = [];
  for (const t of g.tensors) {
    const bytes = Math.max(4, t.op === 'kv_store' ? 4 : tensorBytes(t, rowBytes));
    const usage = t.role === 'weight' ? 'weights' : t.role === 'state' ? 'state' : t.role === 'input' ? 'input' : 'compute';
    const buffer = bt.allocate(bytes, usage);
    buffers.push(buffer);
    placements[t.id] = { buffer, offset: 0, nBytes: bytes };
    const d = c.data.get(t.id);
    if (d) buffer.set(0, d);
    else if (t.role === 'state') buffer.clear(0);
    if (d && t.role === 'weight' && typeof t.dtype === 'number' && device.prepareWeight) {
      t.dtype = device.prepareWeight(placements[t.id]!, t.dtype, t.shape);
    }
  }
  const backend = device.createBackend();
  try {
    for (const step of c.steps) {
      for (const [id, d] of step) placements[id]!.buffer.set(0, d);
      const ctx = { graph: g, placement: (id: number) => placements[id]! };
      // the asynchronous path when the device has one (queue, then wait once), else compute
      if (backend.submit) await backend.submit(ctx, g.nodes).wait();
      else await backend.compute(ctx, g.nodes);
    }
    const out = g.tensors[c.check ?? g.output]!;
    const p = placements[out.id]!;
    const bytes = p.buffer.get(0, p.nBytes);
    if (out.dtype === 'f16') return Float32Array.from(new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1), f16ToF32);
    return new Float32Array(bytes.buffer, bytes.byteOffset, nElements(out));
  } finally {
    backend.close?.();
    for (const b of buffers) b.free();
  }
}

/** Max abs error and NMSE of `got` against `want` (null NMSE: a NaN/Inf the reference does not have). */
export function compareOutputs(got: Float32Array, want: Float32Array): { maxAbs: number; nmse: number | null } {
  if (got.length !== want.length) return { maxAbs: Infinity, nmse: null };
  let maxAbs = 0, err = 0, ref = 0;
  for (let i = 0; i < want.length; i++) {
    const a = got[i]!, b = want[i]!;
    if (Number.isNaN(b) && Number.isNaN(a)) continue;
    if (!Number.isFinite(a) || !Number.isFinite(b)) { if (!Object.is(a, b)) return { maxAbs: Infinity, nmse: null }; continue; }
    const d = a - b;
    maxAbs = Math.max(maxAbs, Math.abs(d));
    err += d * d;
    ref += b * b;
  }
  return { maxAbs, nmse: err === 0 ? 0 : ref === 0 ? null : err / ref };
}

/**
 * Runs every case `device` claims against `oracle`; one manifest entry per claimed case, in suite order.
 * `onEntry` sees each entry as it is made (progress output).
 */
export async function runConformance(device: Device, oracle: Device, cases: CaseSpec[], onEntry?: (e: ManifestEntry, error?: string) => void): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  for (const s of cases) {
    const c = s.make();
    const weightBytes = (id: number) => {
      const d = c.data.get(id);
      if (!d) throw new Error(`conformance: tensor ${id} has no data`);
      return d;
    };
    if (!(await claims(device, c, weightBytes))) continue;
    const want = await runCase(oracle, c);
    let got: Float32Array | undefined;
    let error: string | undefined;
    // a claimed case the device fails to run is a failed entry, not the end of the run
    try { got = await runCase(device, c); } catch (err) { error = `${(err as { code?: string }).code ? `[${(err as { code?: string }).code}] ` : ''}${(err as Error).message ?? String(err)}`; }
    const { maxAbs, nmse } = got ? compareOutputs(got, want) : { maxAbs: Infinity, nmse: null };
    const e: ManifestEntry = { device: device.name, op: s.op, types: s.types, shape: s.shape, max_abs_err: maxAbs, nmse, threshold: s.threshold, pass: nmse !== null && nmse <= s.threshold };
    if (!Number.isFinite(e.max_abs_err)) e.max_abs_err = Number.MAX_VALUE; // JSON has no Infinity
    out.push(e);
    onEntry?.(e, error);
  }
  return out;
}

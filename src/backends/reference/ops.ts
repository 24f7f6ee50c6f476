// Reference kernels: plain TypeScript, one function per op, reproducing bit for bit what
// llama.cpp's CPU backend computes in the build that made the parity fixtures (x86 AVX-512,
// NOTES.md has the list): the same kernels' float operation order, FMAs, libm functions,
// activation quantization and f16 roundings. Every faster backend is tested against these.
// tools/ggml-oracle compares them with llama.cpp tensor by tensor.

import { rowBytes } from '../../gguf/ggml-types.js';
import { dequantizeRow } from '../../quant/dequantize.js';
import { F16_TO_F32, f32ToF16 } from '../../quant/float16.js';
import { dotF16Order, dotF16Vec, reduceAdd16 } from './f16-dot.js';
import { fmaf } from '../../quant/rounding.js';
import { expf, logf, tanhf } from './libm.js';
import { ropeCacheRow, ropeThetaScale } from '../rope-cache.js';

export { mulMat } from './matmul.js';

/** out[i] = row ids[i] of W, dequantized. */
export function getRows(wType: number, w: Uint8Array, k: number, ids: Int32Array, nIds: number, out: Float32Array): void {
  const wRow = rowBytes(wType, k);
  for (let i = 0; i < nIds; i++) dequantizeRow(wType, w, ids[i]! * wRow, out, i * k, k);
}

export function rmsNorm(x: Float32Array, n: number, rowLen: number, eps: number, y: Float32Array): void {
  for (let r = 0; r < n; r += rowLen) {
    let sum = 0; // ggml sums the f32 squares in double
    for (let i = 0; i < rowLen; i++) { const v = x[r + i]!; sum += Math.fround(v * v); }
    const mean = Math.fround(sum / rowLen);
    const scale = Math.fround(1 / Math.fround(Math.sqrt(Math.fround(mean + eps))));
    for (let i = 0; i < rowLen; i++) y[r + i] = x[r + i]! * scale;
  }
}

/** a (op) b with b broadcast: b.length divides a's row length or equals a.length. */
export function binary(op: 'add' | 'mul', a: Float32Array, na: number, b: Float32Array, nb: number, y: Float32Array): void {
  if (op === 'add') for (let i = 0; i < na; i++) y[i] = a[i]! + b[i % nb]!;
  else for (let i = 0; i < na; i++) y[i] = a[i]! * b[i % nb]!;
}

export function scale(a: Float32Array, n: number, s: number, y: Float32Array): void {
  const sf = Math.fround(s);
  for (let i = 0; i < n; i++) y[i] = a[i]! * sf;
}

export function softcap(a: Float32Array, n: number, cap: number, y: Float32Array): void {
  const inv = Math.fround(1 / cap);
  const capF = Math.fround(cap);
  // llama.cpp: ggml_scale by 1/cap, ggml_tanh (glibc tanhf), ggml_scale by cap; all f32
  for (let i = 0; i < n; i++) y[i] = tanhf(Math.fround(a[i]! * inv)) * capF;
}

// ggml_v_expf (ggml-cpu vec.h, AVX-512 version): the exp ggml's x86 SIMD paths use in SiLU and in
// softmax, an f32 polynomial built from fused multiply-adds (max error ~1.5 ulp, so it differs
// from a correctly rounded exp in the last bit now and then). Reproduced op by op.
const EXP_R = 12582912; // 0x1.8p23
const EXP_LOG2E = 0x1715476 / 2 ** 24; // 0x1.715476p+0
const EXP_LN2_HI = 0x162e4 / 2 ** 17; // 0x1.62e4p-1
const EXP_LN2_LO = 0x17f7d1c / 2 ** 44; // 0x1.7f7d1cp-20
const EXP_C5 = 0x10e4020 / 2 ** 31; // 0x1.0e4020p-7
const EXP_C4 = 0x1573e2e / 2 ** 29; // 0x1.573e2ep-5
const EXP_C3 = 0x1555e66 / 2 ** 27; // 0x1.555e66p-3
const EXP_C2 = 0x1fffdb6 / 2 ** 26; // 0x1.fffdb6p-2
const EXP_C1 = 0x1ffffec / 2 ** 25; // 0x1.ffffecp-1
export function expfV(x: number): number {
  const z = fmaf(x, EXP_LOG2E, EXP_R);
  const n = Math.fround(z - EXP_R);
  const b = fmaf(-n, EXP_LN2_LO, fmaf(-n, EXP_LN2_HI, x));
  if (Math.abs(n) > 192) return n > 0 ? Infinity : 0;
  const u = Math.fround(b * b);
  const j = fmaf(fmaf(fmaf(EXP_C5, b, EXP_C4), u, fmaf(EXP_C3, b, EXP_C2)), u, fmaf(EXP_C1, b, 1));
  return Math.fround(j * 2 ** n); // _mm512_scalef_ps
}

/** ggml_vec_swiglu_f32 (AVX-512): silu(x) = x / (1 + v_expf(-x)), then times the gate, in f32. */
export function swiglu(a: Float32Array, b: Float32Array, n: number, y: Float32Array): void {
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    y[i] = Math.fround(x / Math.fround(1 + expfV(-x))) * b[i]!;
  }
}

/**
 * ggml_vec_silu_f32 per row of `rowLen` (AVX-512): 16 lanes at a time x / (1 + v_expf(-x)); a row's last
 * rowLen % 16 values through the scalar ggml_silu_f32, x / (1 + expf(-x)) with glibc's expf.
 */
export function silu(x: Float32Array, n: number, rowLen: number, y: Float32Array): void {
  const simd = rowLen & ~15;
  for (let r = 0; r < n; r += rowLen) {
    for (let i = r; i < r + rowLen; i++) {
      const v = x[i]!;
      y[i] = Math.fround(v / Math.fround(1 + (i - r < simd ? expfV(-v) : expf(-v))));
    }
  }
}

/** ggml's sigmoid (unary op, scalar): 1 / (1 + expf(-x)), glibc expf, in f32. */
export function sigmoid(x: Float32Array, n: number, y: Float32Array): void {
  for (let i = 0; i < n; i++) y[i] = Math.fround(1 / Math.fround(1 + expf(-x[i]!)));
}

/** ggml's softplus (unary op, scalar): x > 20 ? x : logf(1 + expf(x)), glibc expf/logf, in f32. */
export function softplus(x: Float32Array, n: number, y: Float32Array): void {
  for (let i = 0; i < n; i++) {
    const v = x[i]!;
    y[i] = v > 20 ? v : logf(Math.fround(1 + expf(v)));
  }
}

/**
 * ggml_compute_forward_l2_norm_f32 per chunk of `rowLen`: x / max(sqrt(sum x^2), eps), the squares
 * (f32 products) summed in double, the sum rounded to f32 before sqrtf.
 */
export function l2Norm(x: Float32Array, n: number, rowLen: number, eps: number, y: Float32Array): void {
  const epsF = Math.fround(eps);
  for (let r = 0; r < n; r += rowLen) {
    let sum = 0;
    for (let i = 0; i < rowLen; i++) { const v = x[r + i]!; sum += Math.fround(v * v); }
    const scale = Math.fround(1 / Math.max(Math.fround(Math.sqrt(Math.fround(sum))), epsF));
    for (let i = 0; i < rowLen; i++) y[r + i] = Math.fround(x[r + i]! * scale);
  }
}

/** y[r][c] = x[r][c] * s[r] for rows of rowLen (ggml_mul with src1 [1, rows]). */
export function scaleRows(x: Float32Array, n: number, rowLen: number, s: Float32Array, y: Float32Array): void {
  for (let i = 0; i < n; i++) y[i] = x[i]! * s[(i / rowLen) | 0]!;
}

/** Blocks of a row: out row = for b < count: src[offset + b*stride .. + block) (e.g. the q half of each head of [q | gate] heads). */
export function viewBlocks(x: Float32Array, rows: number, srcW: number, offset: number, block: number, stride: number, count: number, y: Float32Array): void {
  const w = block * count;
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < count; b++) {
      const so = r * srcW + offset + b * stride, yo = r * w + b * block;
      for (let i = 0; i < block; i++) y[yo + i] = x[so + i]!;
    }
  }
}

// ggml's CPU GELU: for |x| < 10 the input is rounded to f16 and looked up in a table of
// f16-rounded tanh-approximation results.
const GELU_COEF_A = Math.fround(0.044715);
const SQRT_2_OVER_PI = Math.fround(0.7978845608028654);
let geluTable: Float32Array | undefined;
function geluF16Table(): Float32Array {
  if (geluTable) return geluTable;
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const x = F16_TO_F32[h]!;
    // ggml_gelu_f32 in f32 as compiled: 0.5f*x*(1.0f + tanhf(SQRT_2_OVER_PI*x*(1.0f + GELU_COEF_A*x*x))),
    // with GCC fusing 1.0f + (A*x)*x into one FMA (checked against ggml_table_gelu_f16: all equal)
    const inner = Math.fround(Math.fround(SQRT_2_OVER_PI * x) * fmaf(Math.fround(GELU_COEF_A * x), x, 1));
    const g = Math.fround(Math.fround(0.5 * x) * Math.fround(1 + Math.fround(Math.tanh(inner))));
    t[h] = F16_TO_F32[f32ToF16(g)]!;
  }
  return (geluTable = t);
}

export function geglu(a: Float32Array, b: Float32Array, n: number, y: Float32Array): void {
  const table = geluF16Table();
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const g = x <= -10 ? 0 : x >= 10 ? x : table[f32ToF16(x)]!;
    y[i] = g * b[i]!;
  }
}

/**
 * RoPE over rows of nHeads*headDim. Normal mode rotates adjacent pairs (x[2i], x[2i+1]);
 * NeoX rotates (x[i], x[i + nDims/2]). theta follows ggml's f32 recurrence theta *= base^(-2/nDims).
 */
export function rope(x: Float32Array, nTok: number, rowLen: number, pos: Int32Array, headDim: number, nDims: number, neox: boolean, freqBase: number, freqScale: number, factors: Float32Array | null, y: Float32Array): void {
  const thetaScale = ropeThetaScale(freqBase, nDims);
  const half = nDims / 2;
  const cs = new Float32Array(nDims); // (cos, sin) per pair
  for (let t = 0; t < nTok; t++) {
    ropeCacheRow(pos[t]!, nDims, thetaScale, freqScale, factors, 1, cs, 0);
    const ro = t * rowLen;
    for (let h = ro; h < ro + rowLen; h += headDim) {
      for (let i = 0; i < half; i++) {
        const i0 = neox ? h + i : h + 2 * i;
        const i1 = neox ? h + i + half : h + 2 * i + 1;
        const x0 = x[i0]!, x1 = x[i1]!, cos = cs[2 * i]!, sin = cs[2 * i + 1]!;
        // ggml's rotate_pairs `x0*cos - x1*sin` as GCC contracts it: fma(x0, cos, -(x1*sin))
        y[i0] = fmaf(x0, cos, -Math.fround(x1 * sin));
        y[i1] = fmaf(x0, sin, Math.fround(x1 * cos));
      }
      for (let i = h + nDims; i < h + headDim; i++) y[i] = x[i]!; // dims past nDims pass through
    }
  }
}

export interface AttentionParams {
  nHead: number;
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
  scale: number;
  softcap: number;
  window: number;
}

/** Reads cache element i as f32 (cache is f16 bits in a Uint16Array, or f32). */
type Cache = Uint16Array | Float32Array;

/** Buffers attention() works in, sized for a cache of `slots` positions (reuse them to allocate nothing per call). */
export interface AttentionWorkspace { slots: number; scores: Float64Array; w: Float32Array; chunk: Float64Array; qh: Float32Array; kf: Float32Array; vf: Float32Array }
export function attentionWorkspace(p: AttentionParams, slots: number): AttentionWorkspace {
  const nKv = kvViewLength(slots - 1);
  return {
    slots, scores: new Float64Array(nKv), w: new Float32Array(nKv), chunk: new Float64Array(16), qh: new Float32Array(p.headDimK),
    kf: new Float32Array(slots * p.headDimK * p.nHeadKv), vf: new Float32Array(nKv * p.headDimV * p.nHeadKv),
  };
}
// The KV view llama.cpp attends over: the used cells padded to a multiple of 256 (at least 256;
// llama_kv_cache::get_n_kv). Masked slots weigh 0, but the view's length decides which part of
// V·softmax ggml_vec_dot_f16 sums in SIMD lanes. (Cells are slot = position here; llama.cpp's
// non-full SWA cache reuses cells once a context outgrows it, which this does not model.)
function kvViewLength(maxPos: number): number {
  return Math.max(256, Math.ceil((maxPos + 1) / 256) * 256);
}


/**
 * Attention of each query row over the cache slots 0..pos (causal), masked to the sliding
 * window when set. Numerics as ggml without flash attention (bit-exact with the fixtures' build):
 * Q rounded to f16 for an f16 cache, K·Q in tinyBLAS (batch) or ggml_vec_dot_f16 (one token)
 * order, softcap via glibc tanhf, scale, softmax with ggml_v_expf and f32 chunk sums added in
 * double, softmax weights rounded to f16, V·softmax over the padded KV view in the same dot order.
 * The f32-cache path keeps plain sums (not checked against ggml).
 */
export function attention(q: Float32Array, nTok: number, pos: Int32Array, k: Cache, v: Cache, p: AttentionParams, y: Float32Array, maxPos: number, ws?: AttentionWorkspace): void {
  if (!ws || ws.slots <= maxPos || ws.qh.length < p.headDimK) ws = attentionWorkspace(p, maxPos + 1);
  attentionRun(q, 0, nTok, pos, 0, k, v, p, y, maxPos, ws, nTok >= 2);
}

/**
 * Attention of several sequences sharing one cache (graph.ts: params.seqStride): the tokens of each sequence
 * (rows in one region of `stride` rows, wherever they sit in the batch) are computed exactly as attention()
 * computes them over a cache holding only that sequence (rows relative to the region's first), so a sequence's
 * result never depends on another's tokens: one token in the one-token (decode) dot order, several in the
 * batch order, as the single-sequence context evaluating them alone would.
 */
export function attentionSeqs(q: Float32Array, nTok: number, rows: Int32Array, stride: number, k: Cache, v: Cache, p: AttentionParams, y: Float32Array, ws?: AttentionWorkspace): void {
  for (let t0 = 0; t0 < nTok; t0++) {
    const base = rows[t0]! - (rows[t0]! % stride);
    let first = true;
    for (let t = 0; t < t0 && first; t++) if (rows[t]! - (rows[t]! % stride) === base) first = false;
    if (!first) continue; // its sequence was done with the sequence's first token
    let count = 0, maxRel = 0;
    for (let t = t0; t < nTok; t++) if (rows[t]! - (rows[t]! % stride) === base) { count++; maxRel = Math.max(maxRel, rows[t]! - base); }
    if (!ws || ws.slots <= maxRel || ws.qh.length < p.headDimK) ws = attentionWorkspace(p, maxRel + 1);
    for (let t = t0; t < nTok;) {
      if (rows[t]! - (rows[t]! % stride) !== base) { t++; continue; }
      let t1 = t + 1;
      while (t1 < nTok && rows[t1]! - (rows[t1]! % stride) === base) t1++;
      attentionRun(q, t, t1, rows, base, k, v, p, y, maxRel, ws, count >= 2);
      t = t1;
    }
  }
}

/** Query tokens [t0, t1) over cache rows row0.. (their positions: pos[t] - row0, at most maxPos); `batch`: the tinyBLAS dot order. */
function attentionRun(q: Float32Array, t0: number, t1: number, pos: Int32Array, row0: number, k: Cache, v: Cache, p: AttentionParams, y: Float32Array, maxPos: number, ws: AttentionWorkspace, batch: boolean): void {
  const { nHead, nHeadKv, headDimK: dk, headDimV: dv } = p;
  const f16 = k instanceof Uint16Array;
  const group = nHead / nHeadKv;
  const rowK = dk * nHeadKv;
  const rowV = dv * nHeadKv;
  const nKv = kvViewLength(maxPos);
  const { scores, w, chunk, qh, kf, vf } = ws;
  const kqScale = Math.fround(p.scale);
  const capF = Math.fround(p.softcap), invCap = Math.fround(1 / capF);
  // K·Q and V·softmax are f16 mul_mats: tinyBLAS for a batch of >= 2 tokens, ggml_vec_dot_f16 for one
  const dotKV = batch ? dotF16Order : dotF16Vec;
  // the cache as f32 values (f16-exact for an f16 cache); V rows past maxPos pad the view with zeros
  const k0 = row0 * rowK, v0 = row0 * rowV;
  for (let i = 0; i < (maxPos + 1) * rowK; i++) kf[i] = f16 ? F16_TO_F32[(k as Uint16Array)[k0 + i]!]! : k[k0 + i]!;
  for (let i = 0; i < (maxPos + 1) * rowV; i++) vf[i] = f16 ? F16_TO_F32[(v as Uint16Array)[v0 + i]!]! : v[v0 + i]!;
  vf.fill(0, (maxPos + 1) * rowV, nKv * rowV);
  for (let t = t0; t < t1; t++) {
    const p0 = pos[t]! - row0;
    const lo = p.window > 0 ? Math.max(0, p0 - p.window + 1) : 0;
    for (let h = 0; h < nHead; h++) {
      const kvh = Math.floor(h / group);
      const qo = t * dk * nHead + h * dk;
      for (let i = 0; i < dk; i++) qh[i] = f16 ? F16_TO_F32[f32ToF16(q[qo + i]!)]! : q[qo + i]!;
      let max = -Infinity;
      for (let j = lo; j <= p0; j++) {
        let sf = f16 ? dotKV(dk, kf, j * rowK + kvh * dk, 1, qh, 0) : dotF32(dk, kf, j * rowK + kvh * dk, qh);
        // softcap as llama.cpp builds it: ggml_scale by 1/cap (an f32 multiply), tanh, ggml_scale by cap
        if (p.softcap > 0) sf = Math.fround(tanhf(Math.fround(sf * invCap)) * capF);
        sf = Math.fround(sf * kqScale);
        scores[j] = sf;
        if (sf > max) max = sf;
      }
      // ggml_vec_soft_max_f32 (AVX-512): v_expf(x - max) over 16-slot chunks of the padded KV
      // view; each chunk's 16 values summed by _mm512_reduce_add_ps in f32, the chunk sums in
      // double. Masked slots are exp(-inf) = 0 and only pad the chunks.
      let sum = 0;
      for (let c = lo & ~15; c <= p0; c += 16) {
        chunk.fill(0);
        for (let j = Math.max(c, lo); j <= Math.min(c + 15, p0); j++) {
          const e = expfV(Math.fround(scores[j]! - max));
          scores[j] = e;
          chunk[j - c] = e;
        }
        sum += reduceAdd16(chunk);
      }
      const inv = Math.fround(1 / sum);
      w.fill(0, 0, nKv);
      for (let j = lo; j <= p0; j++) {
        const wj = Math.fround(scores[j]! * inv);
        w[j] = f16 ? F16_TO_F32[f32ToF16(wj)]! : wj;
      }
      const yo = t * dv * nHead + h * dv;
      const n = nKv; // llama.cpp pads the KV view (masked slots weigh 0)
      for (let i = 0; i < dv; i++) {
        y[yo + i] = f16 ? dotKV(n, vf, kvh * dv + i, rowV, w, 0) : dotF32Strided(p0 + 1, vf, kvh * dv + i, rowV, w);
      }
    }
  }
}

function dotF32(n: number, x: Float32Array, xo: number, y: Float32Array): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[xo + i]! * y[i]!;
  return Math.fround(s);
}
function dotF32Strided(n: number, x: Float32Array, xo: number, xs: number, y: Float32Array): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += x[xo + i * xs]! * y[i]!;
  return Math.fround(s);
}

/** Writes f32 rows into the cache at slot = position (f16 rounding for an f16 cache). */
export function kvStore(cache: Cache, x: Float32Array, rowLen: number, nTok: number, pos: Int32Array): void {
  for (let t = 0; t < nTok; t++) {
    const o = pos[t]! * rowLen;
    if (cache instanceof Uint16Array) for (let i = 0; i < rowLen; i++) cache[o + i] = f32ToF16(x[t * rowLen + i]!);
    else for (let i = 0; i < rowLen; i++) cache[o + i] = x[t * rowLen + i]!;
  }
}

/** Buffers flashAttention() works in (reuse them to allocate nothing per call). */
export interface FlashWorkspace { qh: Float32Array; kr: Float32Array; vkq: Float32Array }
export function flashWorkspace(p: AttentionParams): FlashWorkspace {
  return { qh: new Float32Array(p.headDimK), kr: new Float32Array(p.headDimK), vkq: new Float32Array(p.headDimV) };
}

/**
 * Attention with llama.cpp's flash attention (GGML_OP_FLASH_ATTN_EXT), as ggml-cpu's
 * ggml_compute_forward_flash_attn_ext_f16_one_chunk computes it, per query row and head:
 * Q rounded to f16 (the f16 K cache's dot type); s = K_j·Q by ggml_vec_dot_f16; s·scale (with a softcap the
 * scale is pre-divided by the cap, then cap·tanhf(s)); masked slots (outside [window start, own position])
 * skipped; online softmax in cache order with glibc expf: a new maximum rescales the f16 accumulator
 * (ggml_vec_scale_f16, rounded to f16), else vs = expf(s - M); VKQ = f16(fma(V_j, vs, VKQ)) per element
 * (ggml_vec_mad_f16: the AVX-512 FMA and the contracted scalar tail agree); S = S·ms + vs in two f32 roundings
 * (not contracted: the fused form fails the f32 fixtures); out = f32(VKQ) · f32(1/S). An f32 cache is cast to f16 first, as llama.cpp does before
 * ggml_flash_attn_ext. A row's result depends on nothing but its own range, so batches, decode steps and
 * several sequences (stride > 0: row r sees rows from r - r % stride) are all computed alike. llama.cpp takes
 * other orders for >= 64 query rows (a tiled f32 GEMM) and for one-row decodes over >= 512 cells with several
 * threads (split KV); the fixtures (<= 32 rows, 256 cells, 1 thread) reach neither: this is its one-chunk order.
 */
export function flashAttention(q: Float32Array, nTok: number, rows: Int32Array, stride: number, k: Cache, v: Cache, p: AttentionParams, y: Float32Array, ws: FlashWorkspace): void {
  const { nHead, nHeadKv, headDimK: dk, headDimV: dv } = p;
  const f16 = k instanceof Uint16Array;
  const group = nHead / nHeadKv, rowK = dk * nHeadKv, rowV = dv * nHeadKv;
  const capF = Math.fround(p.softcap);
  const scaleF = p.softcap > 0 ? Math.fround(Math.fround(p.scale) / capF) : Math.fround(p.scale);
  const { qh, kr, vkq } = ws;
  for (let t = 0; t < nTok; t++) {
    const r = rows[t]!;
    const base = stride > 0 ? r - (r % stride) : 0;
    const lo = p.window > 0 ? Math.max(base, r - p.window + 1) : base;
    for (let h = 0; h < nHead; h++) {
      const kvh = Math.floor(h / group);
      const qo = t * dk * nHead + h * dk;
      for (let i = 0; i < dk; i++) qh[i] = F16_TO_F32[f32ToF16(q[qo + i]!)]!;
      vkq.fill(0, 0, dv);
      let m = -Infinity, s = 0;
      for (let j = lo; j <= r; j++) {
        const ko = j * rowK + kvh * dk;
        for (let i = 0; i < dk; i++) kr[i] = f16 ? F16_TO_F32[(k as Uint16Array)[ko + i]!]! : F16_TO_F32[f32ToF16(k[ko + i]!)]!;
        let x = Math.fround(dotF16Vec(dk, kr, 0, 1, qh, 0) * scaleF);
        if (p.softcap > 0) x = Math.fround(capF * tanhf(x));
        let ms = 1, vs = 1;
        if (x > m) {
          ms = expf(Math.fround(m - x));
          m = x;
          for (let i = 0; i < dv; i++) vkq[i] = F16_TO_F32[f32ToF16(Math.fround(vkq[i]! * ms))]!;
        } else {
          vs = expf(Math.fround(x - m));
        }
        const vo = j * rowV + kvh * dv;
        for (let i = 0; i < dv; i++) {
          const vv = f16 ? F16_TO_F32[(v as Uint16Array)[vo + i]!]! : F16_TO_F32[f32ToF16(v[vo + i]!)]!;
          vkq[i] = F16_TO_F32[f32ToF16(fmaf(vv, vs, vkq[i]!))]!;
        }
        // not contracted in that build (measured: the fused form moves f32 fixtures' last bits)
        s = Math.fround(Math.fround(s * ms) + vs);
      }
      const inv = s === 0 ? 0 : Math.fround(1 / s);
      const yo = t * dv * nHead + h * dv;
      for (let i = 0; i < dv; i++) y[yo + i] = Math.fround(vkq[i]! * inv);
    }
  }
}

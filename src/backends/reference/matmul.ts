// mul_mat as llama.cpp's CPU backend computes it in the build that made the parity fixtures. Which ggml
// kernel runs for a weight type, row count and batch is src/backends/ggml-routing.ts; this file has each
// kernel's float order (src/quant/vec-dot.ts has the x86 vec_dot orders).

import { GgmlType, rowBytes } from '../../gguf/ggml-types.js';
import { Q4_0_BYTES, Q8_0_BYTES, Q4K_D, Q4K_DMIN, Q4K_QS, Q4K_SCALES, Q4_K_BYTES, Q8K_BSUMS, Q8K_D, Q8K_QS, Q8_K_BYTES, scaleMinK4 } from '../../quant/blocks.js';
import { F16_TO_F32, f32ToF16 } from '../../quant/float16.js';
import { fmaf, nearestInt } from '../../quant/rounding.js';
import { dotQ4_KInto, quantizeActivations, vecDot, vecDotType } from '../../quant/vec-dot.js';
import { dotF16Order, dotF16Vec, reduceAdd16 } from './f16-dot.js';
import { llamaRepacks, q4KGemmRows, usesTinyBlas } from '../ggml-routing.js';

const f = Math.fround;

/** Bytes of quantized activations mulMat needs for m rows of k (a caller may pass them in, e.g. per plan). */
export function mulMatScratchBytes(wType: number, k: number, m: number): number {
  return wType === GgmlType.F32 || wType === GgmlType.F16 ? 0 : rowBytes(vecDotType(wType), k) * m;
}

/**
 * y[i][j] = W[j] · x[i] for i < m activation rows of length k and j < n weight rows. `act`: room for the
 * quantized activations (mulMatScratchBytes); without it they are allocated per call. Rows from `single`
 * on are computed one at a time (the one-token kernel orders).
 */
export function mulMat(wType: number, w: Uint8Array, k: number, n: number, x: Float32Array, m: number, y: Float32Array, act?: Uint8Array, single = m): void {
  if (single < m) {
    // rows from `single` on as one-token evaluations would compute them (graph.ts: inp_batch_rows)
    if (single > 0) mulMat(wType, w, k, n, x, single, y, act);
    for (let r = Math.max(0, single); r < m; r++) mulMat(wType, w, k, n, x.subarray(r * k, (r + 1) * k), 1, y.subarray(r * n, (r + 1) * n), act);
    return;
  }
  if (wType === GgmlType.F32) return mulMatF32(w, k, n, x, m, y);
  if (wType === GgmlType.F16) return mulMatF16(w, k, n, x, m, y);
  const vt = vecDotType(wType);
  const aRow = rowBytes(vt, k);
  if (!act || act.length < aRow * m) act = new Uint8Array(aRow * m);
  for (let i = 0; i < m; i++) quantizeActivations(vt, x, i * k, act, i * aRow, k);
  const wRow = rowBytes(wType, k);
  if (wType === GgmlType.Q4_K && llamaRepacks(wType, n)) {
    const mGemm = q4KGemmRows(wType, n, m);
    for (let i = 0; i < mGemm; i++) q8KTieRule4x8(x, i * k, act, i * aRow, k);
    for (let i = 0; i < m; i++) {
      const dot = i < mGemm ? gemmQ4K : gemvQ4K;
      for (let j = 0; j < n; j++) y[i * n + j] = dot(k, w, j * wRow, act, i * aRow);
    }
    return;
  }
  if (wType === GgmlType.Q4_0 && llamaRepacks(wType, n)) {
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) y[i * n + j] = gemQ4_0(k, w, j * wRow, act, i * aRow);
    }
    return;
  }
  if (wType === GgmlType.Q4_K) {
    // (no boxed double per output: see dotQ4_KInto)
    for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) dotQ4_KInto(k, w, j * wRow, act, i * aRow, y, i * n + j);
    return;
  }
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) y[i * n + j] = vecDot(wType, k, w, j * wRow, act, i * aRow);
  }
}

// ---------------------------------------------------------------- repacked Q4_0 (block_q4_0x8)

/**
 * ggml_gemv_q4_0_8x8_q8_0 / ggml_gemm_q4_0_8x8_q8_0 (AVX2/AVX-512, "lut" kernels; GEMM and GEMV
 * do the same arithmetic per output): each 32-value block's exact integer dot, converted to f32,
 * fused-multiply-added with d = x.d*y.d into one accumulator. The 4-row activation quantizer
 * (ggml_quantize_mat_q8_0_4x8) rounds like the x86 quantize_row_q8_0.
 */
function gemQ4_0(k: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  let acc = 0;
  for (let b = 0; b < k / 32; b++, wo += Q4_0_BYTES, ao += Q8_0_BYTES) {
    let s = 0;
    for (let j = 0; j < 16; j++) {
      const q = w[wo + 2 + j]!;
      s += ((q & 0xf) - 8) * ((a[ao + 2 + j]! << 24) >> 24) + ((q >> 4) - 8) * ((a[ao + 18 + j]! << 24) >> 24);
    }
    acc = fmaf(f(s), f(f16At(w, wo) * f16At(a, ao)), acc);
  }
  return acc;
}

// ---------------------------------------------------------------- float weights

const lanes = new Float64Array(16);
const acc4 = new Float64Array(64);

/** tinyBLAS<16, __m512, float>: lane l accumulates elements l, l+16, ... by FMA, then reduce_add. */
function dotTinyF32(k: number, w: Float32Array, wo: number, x: Float32Array, xo: number): number {
  lanes.fill(0);
  for (let c = 0; c < k; c++) lanes[c & 15] = fmaf(w[wo + c]!, x[xo + c]!, lanes[c & 15]!);
  return reduceAdd16(lanes);
}

/** ggml_vec_dot_f32 (AVX-512): 4 accumulators x 16 lanes per 64 elements, (0+2)+(1+3), reduce_add, f32 tail. */
function dotVecF32(k: number, w: Float32Array, wo: number, x: Float32Array, xo: number): number {
  acc4.fill(0);
  const np = k & ~63;
  for (let c = 0; c < np; c++) acc4[c & 63] = fmaf(w[wo + c]!, x[xo + c]!, acc4[c & 63]!);
  for (let l = 0; l < 16; l++) lanes[l] = f(f(acc4[l]! + acc4[32 + l]!) + f(acc4[16 + l]! + acc4[48 + l]!));
  let s = reduceAdd16(lanes);
  for (let c = np; c < k; c++) s = f(s + f(w[wo + c]! * x[xo + c]!));
  return s;
}

function mulMatF32(w: Uint8Array, k: number, n: number, x: Float32Array, m: number, y: Float32Array): void {
  const wf = new Float32Array(w.buffer, w.byteOffset, k * n);
  const tiny = usesTinyBlas(m, k, n);
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) y[i * n + j] = tiny ? dotTinyF32(k, wf, j * k, x, i * k) : dotVecF32(k, wf, j * k, x, i * k);
  }
}

function mulMatF16(w: Uint8Array, k: number, n: number, x: Float32Array, m: number, y: Float32Array): void {
  const wh = new Uint16Array(w.buffer, w.byteOffset, k * n);
  const wf = new Float32Array(k);
  const xh = new Float32Array(k * m); // activations rounded to f16 (the F16 vec_dot_type)
  for (let i = 0; i < k * m; i++) xh[i] = F16_TO_F32[f32ToF16(x[i]!)]!;
  const tiny = usesTinyBlas(m, k, n);
  for (let j = 0; j < n; j++) {
    for (let c = 0; c < k; c++) wf[c] = F16_TO_F32[wh[j * k + c]!]!;
    for (let i = 0; i < m; i++) y[i * n + j] = tiny ? dotF16Order(k, wf, 0, 1, xh, i * k) : dotF16Vec(k, wf, 0, 1, xh, i * k);
  }
}

// ---------------------------------------------------------------- repacked Q4_K (block_q4_Kx8)

function q8kD(a: Uint8Array, ao: number): number {
  return new DataView(a.buffer, a.byteOffset).getFloat32(ao + Q8K_D, true);
}
function bsum(a: Uint8Array, ao: number, j: number): number {
  const o = ao + Q8K_BSUMS + 2 * j;
  return ((a[o]! | (a[o + 1]! << 8)) << 16) >> 16;
}
function f16At(w: Uint8Array, o: number): number {
  return F16_TO_F32[w[o]! | (w[o + 1]! << 8)]!;
}

/**
 * ggml_quantize_mat_q8_K_4x8 (the GEMM rows' quantizer) equals quantize_row_q8_K except for the
 * sign of the scale when a block holds both +amax and -amax: the reference takes the sign of the
 * first such value, the 4x8 kernel takes + whenever +amax occurs (iscale = -127/amax). Redo
 * those (rare) blocks with the 4x8 choice.
 */
function q8KTieRule4x8(x: Float32Array, xo: number, a: Uint8Array, ao: number, k: number): void {
  for (let b = 0; b < k / 256; b++, xo += 256, ao += Q8_K_BYTES) {
    let amax = 0, first = 0;
    for (let j = 0; j < 256; j++) { const v = x[xo + j]!; if (Math.abs(v) > amax) { amax = Math.abs(v); first = v; } }
    if (amax === 0 || first > 0) continue;
    let hasPos = false;
    for (let j = 0; j < 256 && !hasPos; j++) hasPos = x[xo + j] === amax;
    if (!hasPos) continue;
    const iscale = f(-127 / amax);
    for (let j = 0; j < 256; j++) a[ao + Q8K_QS + j] = Math.max(-128, Math.min(127, nearestInt(f(iscale * x[xo + j]!)))) & 0xff;
    for (let g = 0; g < 16; g++) {
      let sum = 0;
      for (let l = 0; l < 16; l++) sum += (a[ao + Q8K_QS + 16 * g + l]! << 24) >> 24;
      a[ao + Q8K_BSUMS + 2 * g] = sum & 0xff;
      a[ao + Q8K_BSUMS + 2 * g + 1] = (sum >> 8) & 0xff;
    }
    new DataView(a.buffer, a.byteOffset).setFloat32(ao + Q8K_D, f(1 / iscale), true);
  }
}

/** Integer dot of 32-value sub-block j (its scale applied) and its min term, for one super-block. */
function subBlock(w: Uint8Array, wo: number, a: Uint8Array, ao: number, j: number): [number, number] {
  const sm = scaleMinK4(j, w, wo + Q4K_SCALES);
  const q = wo + Q4K_QS + 32 * (j >> 1), shift = 4 * (j & 1), q8 = ao + Q8K_QS + 32 * j;
  let s = 0;
  for (let l = 0; l < 32; l++) s += ((w[q + l]! >> shift) & 0xf) * ((a[q8 + l]! << 24) >> 24);
  return [(sm & 0xff) * s, (sm >> 8) * (bsum(a, ao, 2 * j) + bsum(a, ao, 2 * j + 1))];
}

/**
 * ggml_gemv_q4_K_8x8_q8_K (AVX2): per super-block the whole integer sum (and the mins' sum) is
 * converted to f32 and fused-multiply-added with d = x.d*y.d (dmin*y.d); result acc - acc_min.
 */
function gemvQ4K(k: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  let acc = 0, accm = 0;
  for (let b = 0; b < k / 256; b++, wo += Q4_K_BYTES, ao += Q8_K_BYTES) {
    const yd = q8kD(a, ao);
    let s = 0, mn = 0;
    for (let j = 0; j < 8; j++) { const [sj, mj] = subBlock(w, wo, a, ao, j); s += sj; mn += mj; }
    acc = fmaf(f(s), f(f16At(w, wo + Q4K_D) * yd), acc);
    accm = fmaf(f(mn), f(f16At(w, wo + Q4K_DMIN) * yd), accm);
  }
  return f(acc - accm);
}

/**
 * ggml_gemm_q4_K_8x8_q8_K (AVX-512/AVX2, 4 activation rows at a time): the same, but the FMAs
 * happen once per pair of sub-blocks (64 values), four times per super-block.
 */
function gemmQ4K(k: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  let acc = 0, accm = 0;
  for (let b = 0; b < k / 256; b++, wo += Q4_K_BYTES, ao += Q8_K_BYTES) {
    const yd = q8kD(a, ao);
    const dd = f(f16At(w, wo + Q4K_D) * yd), dm = f(f16At(w, wo + Q4K_DMIN) * yd);
    for (let sb = 0; sb < 4; sb++) {
      const [s0, m0] = subBlock(w, wo, a, ao, 2 * sb);
      const [s1, m1] = subBlock(w, wo, a, ao, 2 * sb + 1);
      acc = fmaf(f(s0 + s1), dd, acc);
      accm = fmaf(f(m0 + m1), dm, accm);
    }
  }
  return f(acc - accm);
}

// The activation side of ggml's CPU matmul: which type the activations are converted to for a
// given weight type (type_traits_cpu[].vec_dot_type), that conversion, and the row dot product
// ggml_vec_dot_<weight>_<vec>. Integer sums are exact; what matters is the f32 order, and every
// f32 operation is Math.fround'ed (`f`) or fused (`fmaf`) as the C code does it.
// Two flavours:
// - 'x86' (default): for Q4_K, Q6_K and Q8_0 the kernels llama.cpp's x86 AVX2/AVX-512 build runs
//   (8 int32 lanes per block, one f32 FMA accumulator per lane, hsum_float_8), bit-exact with the
//   build that made the parity fixtures (checked through tools/ggml-oracle); Q5_K and Q3_K likewise
//   (checked against the q5_k, q5_k_m and q3_k parity fixtures, test/parity/exact.test.ts). Other types use the
//   generic formulas below, which agree with their SIMD versions to float rounding.
// - 'generic': ggml's *_generic scalar kernels, checked bit-exact (test/quant/golden.test.ts)
//   against a build without FMA (the baseline x86-64 CPU variant).

import { GgmlType, ggmlTypeName } from '../gguf/ggml-types.js';
import {
  IQ4_NL_BYTES, IQ4_XS_BYTES, IQ4XS_QS, IQ4XS_SCALES_H, IQ4XS_SCALES_L, KVALUES_IQ4NL, Q2_K_BYTES, Q2K_D, Q2K_DMIN,
  Q2K_QS, Q2K_SCALES, Q3_K_BYTES, Q3K_D, Q3K_HMASK, Q3K_QS, Q3K_SCALES, Q4_0_BYTES, Q4_1_BYTES, Q4_K_BYTES, Q4K_D,
  Q4K_DMIN, Q4K_QS, Q4K_SCALES, Q5_0_BYTES, Q5_1_BYTES, Q5_K_BYTES, Q5K_D, Q5K_DMIN, Q5K_QH, Q5K_QS, Q5K_SCALES,
  Q6_K_BYTES, Q6K_D, Q6K_QH, Q6K_QL, Q6K_SCALES, Q8_0_BYTES, Q8_1_BYTES, Q8_K_BYTES, Q8K_BSUMS, Q8K_D, Q8K_QS, QK, QK_K,
  scaleMinK4, scaleQ3K,
} from './blocks.js';
import { DataViewCache, checkBlocks, readF16, readU16, readU32, writeU16 } from './bytes.js';
import { F16_TO_F32, bf16ToF32, f32ToF16 } from './float16.js';
import { activationQuantizer } from './activations.js';
import { fmaf, nearestInt } from './rounding.js';

const f = Math.fround;

// ---------------------------------------------------------------- activation types

const VEC_DOT_TYPE = new Map<number, number>([
  [GgmlType.F32, GgmlType.F32],
  [GgmlType.F16, GgmlType.F16],
  [GgmlType.BF16, GgmlType.BF16],
  [GgmlType.Q4_0, GgmlType.Q8_0],
  [GgmlType.Q5_0, GgmlType.Q8_0],
  [GgmlType.Q8_0, GgmlType.Q8_0],
  [GgmlType.IQ4_NL, GgmlType.Q8_0],
  [GgmlType.Q4_1, GgmlType.Q8_1],
  [GgmlType.Q5_1, GgmlType.Q8_1],
  [GgmlType.Q2_K, GgmlType.Q8_K],
  [GgmlType.Q3_K, GgmlType.Q8_K],
  [GgmlType.Q4_K, GgmlType.Q8_K],
  [GgmlType.Q5_K, GgmlType.Q8_K],
  [GgmlType.Q6_K, GgmlType.Q8_K],
  [GgmlType.IQ4_XS, GgmlType.Q8_K],
]);

/** The type ggml's CPU backend converts activations to before a matmul with `weightType`. */
export function vecDotType(weightType: number): number {
  const t = VEC_DOT_TYPE.get(weightType);
  if (t === undefined) throw new Error(`vecDot: unsupported weight type ${ggmlTypeName(weightType)} (${weightType})`);
  return t;
}

/**
 * How Q8_0/Q8_1 activations are rounded. ggml's CPU backend has per-architecture versions:
 * - 'x86' (default): the AVX/AVX2/AVX512 quantize_row_q8_0/q8_1, which llama.cpp uses on x86
 *   and which produced the parity fixtures: id = 127/amax and ties to even.
 * - 'ref': quantize_row_q8_0_ref/q8_1_ref (the generic scalar path): id = 1/(amax/127) and
 *   roundf (ties away from zero).
 * They agree except on exact ties and when the two ways of computing id differ in the last
 * bit. Q8_K has a single version (the reference) on x86, so both flavours use it.
 */
export type ActivationFlavor = 'x86' | 'ref';

const ACTIVATION_TYPES = new Set<number>([GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q8_1, GgmlType.Q8_K]);

/** The x86 SIMD quantize_row_q8_0 (withSum false) / quantize_row_q8_1 (withSum true). */
function quantQ8x86(x: Float32Array, xo: number, y: Uint8Array, yo: number, n: number, withSum: boolean): void {
  const bytes = withSum ? Q8_1_BYTES : Q8_0_BYTES;
  const qs = withSum ? 4 : 2;
  const nb = checkBlocks(withSum ? 'Q8_1' : 'Q8_0', n, QK);
  for (let i = 0; i < nb; i++, xo += QK, yo += bytes) {
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[xo + j]!));
    const d = f(amax / 127);
    const dh = f32ToF16(d);
    writeU16(y, yo, dh);
    const id = amax !== 0 ? f(127 / amax) : 0;
    let sum = 0;
    for (let j = 0; j < QK; j++) {
      const q = nearestInt(f(x[xo + j]! * id));
      y[yo + qs + j] = q & 0xff;
      sum += q;
    }
    if (withSum) writeU16(y, yo + 2, f32ToF16(f(d * sum)));
  }
}

/**
 * Convert n f32 activations to `vecType` (one of vecDotType's results), as ggml's from_float
 * does: Q8_0/Q8_1 (see ActivationFlavor), quantize_row_q8_K, f16/bf16 rounding, or a copy.
 */
export function quantizeActivations(vecType: number, src: Float32Array, srcOffset: number, dst: Uint8Array, dstOffset: number, n: number,
  flavor: ActivationFlavor = 'x86'): void {
  if (!ACTIVATION_TYPES.has(vecType)) throw new Error(`quantizeActivations: ${ggmlTypeName(vecType)} is not an activation type`);
  if (flavor === 'x86' && (vecType === GgmlType.Q8_0 || vecType === GgmlType.Q8_1)) {
    quantQ8x86(src, srcOffset, dst, dstOffset, n, vecType === GgmlType.Q8_1);
    return;
  }
  activationQuantizer(vecType)!(src, srcOffset, dst, dstOffset, n);
}

// ---------------------------------------------------------------- float rows

const wView = new DataViewCache();
const aView = new DataViewCache();

/** ggml_vec_dot_f32 (scalar): each product rounded to f32, summed in double. */
function dotF32(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const dw = wView.of(w), da = aView.of(a);
  const bw = w.byteOffset + wo, ba = a.byteOffset + ao;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += f(dw.getFloat32(bw + 4 * i, true) * da.getFloat32(ba + 4 * i, true));
  return f(sum);
}

/** ggml_vec_dot_f16 (scalar): f16*f16 is exact in f32; summed in double, returned as f32. */
function dotF16(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const x = F16_TO_F32[w[wo + 2 * i]! | (w[wo + 2 * i + 1]! << 8)]!;
    const y = F16_TO_F32[a[ao + 2 * i]! | (a[ao + 2 * i + 1]! << 8)]!;
    sum += x * y;
  }
  return f(sum);
}

/** ggml_vec_dot_bf16 (scalar): bf16*bf16 is exact in f32; summed in double. */
function dotBF16(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += bf16ToF32(w[wo + 2 * i]! | (w[wo + 2 * i + 1]! << 8)) * bf16ToF32(a[ao + 2 * i]! | (a[ao + 2 * i + 1]! << 8));
  }
  return f(sum);
}

// ---------------------------------------------------------------- 32-value blocks x Q8_0 / Q8_1

function dotQ4_0(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q4_0', n, QK);
  let sumf = 0;
  for (let ib = 0; ib < nb; ib++, wo += Q4_0_BYTES, ao += Q8_0_BYTES) {
    let sumi = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[wo + 2 + j]!;
      sumi += ((b & 0xf) - 8) * ((a[ao + 2 + j]! << 24) >> 24) + ((b >> 4) - 8) * ((a[ao + 18 + j]! << 24) >> 24);
    }
    sumf = f(sumf + f(f(sumi * readF16(w, wo)) * readF16(a, ao)));
  }
  return sumf;
}

function dotQ4_1(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q4_1', n, QK);
  let sumf = 0;
  for (let ib = 0; ib < nb; ib++, wo += Q4_1_BYTES, ao += Q8_1_BYTES) {
    let sumi = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[wo + 4 + j]!;
      sumi += (b & 0xf) * ((a[ao + 4 + j]! << 24) >> 24) + (b >> 4) * ((a[ao + 20 + j]! << 24) >> 24);
    }
    // The weight's min m times sum(y) is folded in through the activation block's s = d*sum(q).
    const dd = f(readF16(w, wo) * readF16(a, ao));
    sumf = f(sumf + f(f(dd * sumi) + f(readF16(w, wo + 2) * readF16(a, ao + 2))));
  }
  return sumf;
}

function dotQ5_0(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q5_0', n, QK);
  let sumf = 0;
  for (let ib = 0; ib < nb; ib++, wo += Q5_0_BYTES, ao += Q8_0_BYTES) {
    const qh = readU32(w, wo + 2);
    let sumi = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[wo + 6 + j]!;
      const x0 = ((b & 0xf) | (((qh >>> j) << 4) & 0x10)) - 16;
      const x1 = ((b >> 4) | ((qh >>> (j + 12)) & 0x10)) - 16;
      sumi += x0 * ((a[ao + 2 + j]! << 24) >> 24) + x1 * ((a[ao + 18 + j]! << 24) >> 24);
    }
    sumf = f(sumf + f(f(readF16(w, wo) * readF16(a, ao)) * sumi));
  }
  return sumf;
}

function dotQ5_1(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q5_1', n, QK);
  let sumf = 0;
  for (let ib = 0; ib < nb; ib++, wo += Q5_1_BYTES, ao += Q8_1_BYTES) {
    const qh = readU32(w, wo + 4);
    let sumi = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[wo + 8 + j]!;
      const x0 = (b & 0xf) | (((qh >>> j) << 4) & 0x10);
      const x1 = (b >> 4) | ((qh >>> (j + 12)) & 0x10);
      sumi += x0 * ((a[ao + 4 + j]! << 24) >> 24) + x1 * ((a[ao + 20 + j]! << 24) >> 24);
    }
    const dd = f(readF16(w, wo) * readF16(a, ao));
    sumf = f(sumf + f(f(dd * sumi) + f(readF16(w, wo + 2) * readF16(a, ao + 2))));
  }
  return sumf;
}

// ggml's generic C order, kept as the bit-exact oracle of ggml_vec_dot_q8_0_q8_0_generic.
function dotQ8_0Generic(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q8_0', n, QK);
  let sumf = 0;
  for (let ib = 0; ib < nb; ib++, wo += Q8_0_BYTES, ao += Q8_0_BYTES) {
    let sumi = 0;
    for (let j = 2; j < 34; j++) sumi += ((w[wo + j]! << 24) >> 24) * ((a[ao + j]! << 24) >> 24);
    sumf = f(sumf + f(sumi * f(readF16(w, wo) * readF16(a, ao))));
  }
  return sumf;
}

// ggml_vec_dot_q8_0_q8_0 on x86 (AVX2/AVX-512 VNNI), and llamafile's tinyBLAS_Q0_AVX for Q8_0,
// which does the same arithmetic per output: 8 int32 lanes per block (lane l = values 4l..4l+3),
// each converted to f32 and fused-multiply-added by d = x.d*y.d into its own accumulator across
// blocks, then hsum_float_8.
const q8Lanes = new Float64Array(8);
function dotQ8_0(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q8_0', n, QK);
  q8Lanes.fill(0);
  for (let ib = 0; ib < nb; ib++, wo += Q8_0_BYTES, ao += Q8_0_BYTES) {
    const d = f(readF16(w, wo) * readF16(a, ao));
    for (let l = 0; l < 8; l++) {
      let s = 0;
      for (let t = 2 + 4 * l; t < 6 + 4 * l; t++) s += ((w[wo + t]! << 24) >> 24) * ((a[ao + t]! << 24) >> 24);
      q8Lanes[l] = fmaf(d, s, q8Lanes[l]!);
    }
  }
  return hsumFloat8(q8Lanes);
}

function dotIQ4_NL(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('IQ4_NL', n, QK);
  let sumf = 0;
  for (let ib = 0; ib < nb; ib++, wo += IQ4_NL_BYTES, ao += Q8_0_BYTES) {
    const d = f(readF16(a, ao) * readF16(w, wo));
    let sumi = 0;
    for (let j = 0; j < 16; j++) {
      const b = w[wo + 2 + j]!;
      sumi += ((a[ao + 2 + j]! << 24) >> 24) * KVALUES_IQ4NL[b & 0xf]! + ((a[ao + 18 + j]! << 24) >> 24) * KVALUES_IQ4NL[b >> 4]!;
    }
    sumf = f(sumf + f(d * sumi));
  }
  return sumf;
}

// ---------------------------------------------------------------- K-quants x Q8_K

// Per-call scratch: 8 integer lanes per super-block and 8 f32 lane sums across super-blocks.
const aux32 = new Int32Array(8);
const laneSums = new Float32Array(8);
const q3Scales = new Int32Array(16);

/** Fold this super-block's integer lanes into the f32 lane sums: sums[l] += d * aux32[l]. */
function addLanes(d: number): void {
  for (let l = 0; l < 8; l++) laneSums[l] = laneSums[l]! + f(d * aux32[l]!);
}

/** Sum the 8 lanes into sumf, in order, in f32. */
function finishLanes(sumf: number): number {
  for (let l = 0; l < 8; l++) sumf = f(sumf + laneSums[l]!);
  return sumf;
}

function q8kD(a: Uint8Array, ao: number): number {
  return aView.of(a).getFloat32(a.byteOffset + ao + Q8K_D, true);
}
// dotQ4_KInto reads a Q8_K block's f32 d through this scratch word inline: q8kD's result came back boxed there
// (one heap number per dot, found with the sampling heap profiler), which broke the cpu device's
// allocation-free decode in exact numerics for Q4_K matrices of rows % 8 != 0 (qwen35's ssm_alpha/ssm_beta)
const q8kDBits = new Int32Array(1);
const q8kDF32 = new Float32Array(q8kDBits.buffer);

function q8kBsum(a: Uint8Array, ao: number, j: number): number {
  return (readU16(a, ao + Q8K_BSUMS + 2 * j) << 16) >> 16;
}

function dotQ2_K(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q2_K', n, QK_K);
  let sumf = 0;
  for (let i = 0; i < nb; i++, wo += Q2_K_BYTES, ao += Q8_K_BYTES) {
    // The mins only need the activation sums of each 16 values, which Q8_K precomputes.
    let summs = 0;
    for (let j = 0; j < 16; j++) summs += q8kBsum(a, ao, j) * (w[wo + Q2K_SCALES + j]! >> 4);
    const yd = q8kD(a, ao);
    const dall = f(yd * readF16(w, wo + Q2K_D));
    const dmin = f(yd * readF16(w, wo + Q2K_DMIN));
    let isum = 0, is = 0, q8 = ao + Q8K_QS;
    for (let half = 0; half < 2; half++) {
      const q2 = wo + Q2K_QS + 32 * half;
      for (let shift = 0; shift < 8; shift += 2) {
        let s = 0;
        for (let l = 0; l < 16; l++) s += ((a[q8 + l]! << 24) >> 24) * ((w[q2 + l]! >> shift) & 3);
        isum += (w[wo + Q2K_SCALES + is++]! & 0xf) * s;
        s = 0;
        for (let l = 16; l < 32; l++) s += ((a[q8 + l]! << 24) >> 24) * ((w[q2 + l]! >> shift) & 3);
        isum += (w[wo + Q2K_SCALES + is++]! & 0xf) * s;
        q8 += 32;
      }
    }
    sumf = f(sumf + f(f(dall * isum) - f(dmin * summs)));
  }
  return sumf;
}

function dotQ3_KGeneric(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q3_K', n, QK_K);
  laneSums.fill(0);
  for (let i = 0; i < nb; i++, wo += Q3_K_BYTES, ao += Q8_K_BYTES) {
    aux32.fill(0);
    for (let j = 0; j < 16; j++) q3Scales[j] = scaleQ3K(j, w, wo + Q3K_SCALES);
    // Value k (0..255): group g = k>>5 picks the 2-bit field (shift 2*(g&3)) of byte
    // qs[32*(g>>2) + (k&31)] and hmask bit g of byte k&31; scale index k>>4.
    for (let g = 0; g < 8; g++) {
      const q = wo + Q3K_QS + 32 * (g >> 2), shift = 2 * (g & 3), q8 = ao + Q8K_QS + 32 * g;
      const s0 = q3Scales[2 * g]!, s1 = q3Scales[2 * g + 1]!;
      const hm = wo + Q3K_HMASK;
      for (let m = 0; m < 16; m++) {
        const v = ((w[q + m]! >> shift) & 3) - 4 + (((w[hm + m]! >> g) & 1) << 2);
        aux32[m & 7] += s0 * (v * ((a[q8 + m]! << 24) >> 24));
      }
      for (let m = 16; m < 32; m++) {
        const v = ((w[q + m]! >> shift) & 3) - 4 + (((w[hm + m]! >> g) & 1) << 2);
        aux32[m & 7] += s1 * (v * ((a[q8 + m]! << 24) >> 24));
      }
    }
    addLanes(f(readF16(w, wo + Q3K_D) * q8kD(a, ao)));
  }
  return finishLanes(0);
}

// ggml's generic C order (8 f32 lane sums), kept as the bit-exact oracle of ggml_vec_dot_*_generic.
function dotQ4_KGeneric(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q4_K', n, QK_K);
  laneSums.fill(0);
  let sumf = 0;
  for (let i = 0; i < nb; i++, wo += Q4_K_BYTES, ao += Q8_K_BYTES) {
    aux32.fill(0);
    let sumi = 0; // sum over groups of min * (activation sum of the group)
    for (let j = 0; j < 8; j++) {
      const sm = scaleMinK4(j, w, wo + Q4K_SCALES);
      const scale = sm & 0xff;
      sumi += (sm >> 8) * (q8kBsum(a, ao, 2 * j) + q8kBsum(a, ao, 2 * j + 1));
      const q = wo + Q4K_QS + 32 * (j >> 1);
      const shift = 4 * (j & 1);
      const q8 = ao + Q8K_QS + 32 * j;
      for (let l = 0; l < 32; l++) {
        aux32[l & 7] += scale * (((w[q + l]! >> shift) & 0xf) * ((a[q8 + l]! << 24) >> 24));
      }
    }
    const yd = q8kD(a, ao);
    addLanes(f(readF16(w, wo + Q4K_D) * yd));
    sumf = f(sumf - f(f(readF16(w, wo + Q4K_DMIN) * yd) * sumi));
  }
  return finishLanes(sumf);
}

function dotQ6_KGeneric(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q6_K', n, QK_K);
  laneSums.fill(0);
  for (let i = 0; i < nb; i++, wo += Q6_K_BYTES, ao += Q8_K_BYTES) {
    aux32.fill(0);
    for (let half = 0; half < 2; half++) {
      const ql = wo + Q6K_QL + 64 * half, qh = wo + Q6K_QH + 32 * half;
      const q8 = ao + Q8K_QS + 128 * half;
      const sc = wo + Q6K_SCALES + 8 * half;
      // Quarter r (values 32r..32r+31 of this half): nibble from ql[l + 32*(r&1)] (low for
      // r<2, high otherwise), top bits (qh[l] >> 2r) & 3; scale per 16 values.
      for (let r = 0; r < 4; r++) {
        const qlo = ql + 32 * (r & 1), nshift = r < 2 ? 0 : 4, hshift = 2 * r;
        const s0 = (w[sc + 2 * r]! << 24) >> 24, s1 = (w[sc + 2 * r + 1]! << 24) >> 24;
        const q8r = q8 + 32 * r;
        for (let l = 0; l < 16; l++) {
          const v = (((w[qlo + l]! >> nshift) & 0xf) | (((w[qh + l]! >> hshift) & 3) << 4)) - 32;
          aux32[l & 7] += s0 * (v * ((a[q8r + l]! << 24) >> 24));
        }
        for (let l = 16; l < 32; l++) {
          const v = (((w[qlo + l]! >> nshift) & 0xf) | (((w[qh + l]! >> hshift) & 3) << 4)) - 32;
          aux32[l & 7] += s1 * (v * ((a[q8r + l]! << 24) >> 24));
        }
      }
    }
    addLanes(f(readF16(w, wo + Q6K_D) * q8kD(a, ao)));
  }
  return finishLanes(0);
}

// ggml_vec_dot_q4_K_q8_K / ggml_vec_dot_q6_K_q8_K as compiled for x86 with AVX2 (also what the
// AVX-512 CPU variants run: these two have no AVX-512 path). The integer products are exact; the
// float order is: 8 int32 lanes per super-block (lane l holds values 4l..4l+3 of every 32-value
// chunk), each lane converted to f32 and fused-multiply-added into its own f32 accumulator by
// d = y.d * x.d, then hsum_float_8. Q4_K's mins go through 4 more f32 lanes. This is the kernel
// llama.cpp runs for K-quant weights that are not repacked (Q6_K always; Q4_K only for
// weights it keeps in a plain CPU buffer, e.g. tied token embeddings).
const laneAcc = new Float64Array(8);
const minAcc = new Float64Array(4);
const laneInt = new Int32Array(8);

/** hsum_float_8: (hi128 + lo128), then [0]+[2], [1]+[3], then their sum, all in f32. */
function hsumFloat8(v: Float64Array): number {
  const r0 = f(v[0]! + v[4]!), r1 = f(v[1]! + v[5]!), r2 = f(v[2]! + v[6]!), r3 = f(v[3]! + v[7]!);
  return f(f(r0 + r2) + f(r1 + r3));
}

function dotQ4_K(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  dotQ4_KInto(n, w, wo, a, ao, dotOut, 0);
  return dotOut[0]!;
}
const dotOut = new Float32Array(1);

/**
 * dotQ4_K writing its f32 result to y[yo]: a returned double is boxed (allocated) at every call V8 does not
 * inline, so a matmul that must allocate nothing per call (the cpu device's exact-numerics fallback) uses this.
 */
export function dotQ4_KInto(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number, y: Float32Array, yo: number): void {
  const nb = checkBlocks('Q4_K', n, QK_K);
  laneAcc.fill(0);
  minAcc.fill(0);
  for (let i = 0; i < nb; i++, wo += Q4_K_BYTES, ao += Q8_K_BYTES) {
    const od = ao + Q8K_D;
    q8kDBits[0] = a[od]! | (a[od + 1]! << 8) | (a[od + 2]! << 16) | (a[od + 3]! << 24);
    const yd = q8kDF32[0]!;
    const d = f(yd * readF16(w, wo + Q4K_D));
    const dmin = f(-yd * readF16(w, wo + Q4K_DMIN));
    laneInt.fill(0);
    for (let j = 0; j < 8; j++) {
      const sm = scaleMinK4(j, w, wo + Q4K_SCALES);
      const scale = sm & 0xff;
      const q = wo + Q4K_QS + 32 * (j >> 1), shift = 4 * (j & 1), q8 = ao + Q8K_QS + 32 * j;
      for (let l = 0; l < 32; l++) laneInt[l >> 2] += scale * (((w[q + l]! >> shift) & 0xf) * ((a[q8 + l]! << 24) >> 24));
    }
    // mins: lane k = m[2k]*(bsums of group 2k) + m[2k+1]*(bsums of group 2k+1)
    for (let k = 0; k < 4; k++) {
      let p = 0;
      for (let j = 2 * k; j < 2 * k + 2; j++) p += (scaleMinK4(j, w, wo + Q4K_SCALES) >> 8) * (q8kBsum(a, ao, 2 * j) + q8kBsum(a, ao, 2 * j + 1));
      minAcc[k] = fmaf(dmin, f(p), minAcc[k]!);
    }
    for (let l = 0; l < 8; l++) laneAcc[l] = fmaf(d, f(laneInt[l]!), laneAcc[l]!);
  }
  const m = f(f(minAcc[0]! + minAcc[2]!) + f(minAcc[1]! + minAcc[3]!));
  y[yo] = hsumFloat8(laneAcc) + m;
}

function dotQ5_KGeneric(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q5_K', n, QK_K);
  laneSums.fill(0);
  let sumf = 0;
  for (let i = 0; i < nb; i++, wo += Q5_K_BYTES, ao += Q8_K_BYTES) {
    aux32.fill(0);
    let sumi = 0;
    for (let j = 0; j < 8; j++) {
      const sm = scaleMinK4(j, w, wo + Q5K_SCALES);
      const scale = sm & 0xff;
      sumi += (sm >> 8) * (q8kBsum(a, ao, 2 * j) + q8kBsum(a, ao, 2 * j + 1));
      const q = wo + Q5K_QS + 32 * (j >> 1);
      const shift = 4 * (j & 1);
      const q8 = ao + Q8K_QS + 32 * j, qh = wo + Q5K_QH;
      for (let l = 0; l < 32; l++) {
        const v = ((w[q + l]! >> shift) & 0xf) | (((w[qh + l]! >> j) & 1) << 4);
        aux32[l & 7] += scale * (v * ((a[q8 + l]! << 24) >> 24));
      }
    }
    const yd = q8kD(a, ao);
    addLanes(f(readF16(w, wo + Q5K_D) * yd));
    sumf = f(sumf - f(f(readF16(w, wo + Q5K_DMIN) * yd) * sumi));
  }
  return finishLanes(sumf);
}

// ggml_vec_dot_q5_K_q8_K / _q3_K_q8_K as compiled for x86 with AVX2 (neither is repacked on x86): the
// Q4_K/Q6_K lane order (lane l = values 4l..4l+3 of every 32, one fmaf per lane and super-block by
// d = y.d * x.d, hsum_float_8). Q5_K's mins: one scalar `summs += dmin * m` per super-block, contracted
// to an fmaf by GCC (-std=gnu11: -ffp-contract=fast), added after the hsum. Q3_K: (x - 4) * a per lane.
function dotQ5_K(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q5_K', n, QK_K);
  laneAcc.fill(0);
  let summs = 0;
  for (let i = 0; i < nb; i++, wo += Q5_K_BYTES, ao += Q8_K_BYTES) {
    const yd = q8kD(a, ao);
    const d = f(yd * readF16(w, wo + Q5K_D));
    const dmin = f(-yd * readF16(w, wo + Q5K_DMIN));
    laneInt.fill(0);
    let mins = 0;
    for (let j = 0; j < 8; j++) {
      const sm = scaleMinK4(j, w, wo + Q5K_SCALES);
      const scale = sm & 0xff;
      mins += (sm >> 8) * (q8kBsum(a, ao, 2 * j) + q8kBsum(a, ao, 2 * j + 1));
      const q = wo + Q5K_QS + 32 * (j >> 1), shift = 4 * (j & 1), q8 = ao + Q8K_QS + 32 * j, qh = wo + Q5K_QH;
      for (let l = 0; l < 32; l++) {
        const v = ((w[q + l]! >> shift) & 0xf) | (((w[qh + l]! >> j) & 1) << 4);
        laneInt[l >> 2] += scale * (v * ((a[q8 + l]! << 24) >> 24));
      }
    }
    summs = fmaf(dmin, f(mins), summs);
    for (let l = 0; l < 8; l++) laneAcc[l] = fmaf(d, f(laneInt[l]!), laneAcc[l]!);
  }
  return f(hsumFloat8(laneAcc) + summs);
}

function dotQ3_K(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q3_K', n, QK_K);
  laneAcc.fill(0);
  for (let i = 0; i < nb; i++, wo += Q3_K_BYTES, ao += Q8_K_BYTES) {
    const d = f(q8kD(a, ao) * readF16(w, wo + Q3K_D));
    laneInt.fill(0);
    for (let j = 0; j < 16; j++) q3Scales[j] = scaleQ3K(j, w, wo + Q3K_SCALES);
    const hm = wo + Q3K_HMASK;
    for (let g = 0; g < 8; g++) {
      const q = wo + Q3K_QS + 32 * (g >> 2), shift = 2 * (g & 3), q8 = ao + Q8K_QS + 32 * g;
      for (let m = 0; m < 32; m++) {
        const v = ((w[q + m]! >> shift) & 3) - 4 + (((w[hm + m]! >> g) & 1) << 2);
        laneInt[m >> 2] += q3Scales[2 * g + (m >> 4)]! * (v * ((a[q8 + m]! << 24) >> 24));
      }
    }
    for (let l = 0; l < 8; l++) laneAcc[l] = fmaf(d, f(laneInt[l]!), laneAcc[l]!);
  }
  return hsumFloat8(laneAcc);
}

function dotQ6_K(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('Q6_K', n, QK_K);
  laneAcc.fill(0);
  for (let i = 0; i < nb; i++, wo += Q6_K_BYTES, ao += Q8_K_BYTES) {
    const d = f(q8kD(a, ao) * readF16(w, wo + Q6K_D));
    laneInt.fill(0);
    for (let half = 0; half < 2; half++) {
      const ql = wo + Q6K_QL + 64 * half, qh = wo + Q6K_QH + 32 * half;
      const q8 = ao + Q8K_QS + 128 * half;
      const sc = wo + Q6K_SCALES + 8 * half;
      // Quarter r (values 32r..32r+31 of this half): nibble from ql[l + 32*(r&1)] (low for
      // r<2, high otherwise), top bits (qh[l] >> 2r) & 3; the unsigned 6-bit value (0..63) is
      // multiplied here and its -32 offset subtracted below through the activation's bsums.
      for (let r = 0; r < 4; r++) {
        const qlo = ql + 32 * (r & 1), nshift = r < 2 ? 0 : 4, hshift = 2 * r;
        const s0 = (w[sc + 2 * r]! << 24) >> 24, s1 = (w[sc + 2 * r + 1]! << 24) >> 24;
        const q8r = q8 + 32 * r;
        for (let l = 0; l < 32; l++) {
          const v = ((w[qlo + l]! >> nshift) & 0xf) | (((w[qh + l]! >> hshift) & 3) << 4);
          laneInt[l >> 2] += (l < 16 ? s0 : s1) * (v * ((a[q8r + l]! << 24) >> 24));
        }
      }
    }
    // lane l subtracts 32 * (bsum[2l]*scale[2l] + bsum[2l+1]*scale[2l+1])
    for (let l = 0; l < 8; l++) {
      const s0 = (w[wo + Q6K_SCALES + 2 * l]! << 24) >> 24, s1 = (w[wo + Q6K_SCALES + 2 * l + 1]! << 24) >> 24;
      const sub = 32 * (q8kBsum(a, ao, 2 * l) * s0 + q8kBsum(a, ao, 2 * l + 1) * s1);
      laneAcc[l] = fmaf(d, f(laneInt[l]! - sub), laneAcc[l]!);
    }
  }
  return hsumFloat8(laneAcc);
}

function dotIQ4_XS(n: number, w: Uint8Array, wo: number, a: Uint8Array, ao: number): number {
  const nb = checkBlocks('IQ4_XS', n, QK_K);
  let sumf = 0;
  for (let i = 0; i < nb; i++, wo += IQ4_XS_BYTES, ao += Q8_K_BYTES) {
    const d4d8 = f(readF16(w, wo) * q8kD(a, ao));
    const sh = readU16(w, wo + IQ4XS_SCALES_H);
    for (let ib = 0; ib < 8; ib++) {
      const ls = ((w[wo + IQ4XS_SCALES_L + (ib >> 1)]! >> (4 * (ib & 1))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
      const dl = f(d4d8 * (ls - 32));
      const q = wo + IQ4XS_QS + 16 * ib, q8 = ao + Q8K_QS + 32 * ib;
      let sumi = 0;
      for (let j = 0; j < 16; j++) {
        const b = w[q + j]!;
        sumi += ((a[q8 + j]! << 24) >> 24) * KVALUES_IQ4NL[b & 0xf]! + ((a[q8 + 16 + j]! << 24) >> 24) * KVALUES_IQ4NL[b >> 4]!;
      }
      sumf = f(sumf + f(dl * sumi));
    }
  }
  return sumf;
}

export type VecDotFn = (n: number, w: Uint8Array, wOffset: number, a: Uint8Array, aOffset: number) => number;

const table = new Map<number, VecDotFn>([
  [GgmlType.F32, dotF32],
  [GgmlType.F16, dotF16],
  [GgmlType.BF16, dotBF16],
  [GgmlType.Q4_0, dotQ4_0],
  [GgmlType.Q4_1, dotQ4_1],
  [GgmlType.Q5_0, dotQ5_0],
  [GgmlType.Q5_1, dotQ5_1],
  [GgmlType.Q8_0, dotQ8_0],
  [GgmlType.IQ4_NL, dotIQ4_NL],
  [GgmlType.Q2_K, dotQ2_K],
  [GgmlType.Q3_K, dotQ3_K],
  [GgmlType.Q4_K, dotQ4_K],
  [GgmlType.Q5_K, dotQ5_K],
  [GgmlType.Q6_K, dotQ6_K],
  [GgmlType.IQ4_XS, dotIQ4_XS],
]);

/** The specialised dot kernel for a weight type; hoist it out of a matmul's row loop. */
export function vecDotFn(weightType: number): VecDotFn {
  const fn = table.get(weightType);
  if (!fn) throw new Error(`vecDot: unsupported weight type ${ggmlTypeName(weightType)} (${weightType})`);
  return fn;
}

/**
 * Dot product of one weight row (n values of `weightType` at w[wOffset]) with one activation
 * row already converted by quantizeActivations(vecDotType(weightType), ...) at a[aOffset].
 */
export function vecDot(weightType: number, n: number, w: Uint8Array, wOffset: number, a: Uint8Array, aOffset: number, flavor: 'x86' | 'generic' = 'x86'): number {
  if (flavor === 'generic') {
    if (weightType === GgmlType.Q4_K) return dotQ4_KGeneric(n, w, wOffset, a, aOffset);
    if (weightType === GgmlType.Q6_K) return dotQ6_KGeneric(n, w, wOffset, a, aOffset);
    if (weightType === GgmlType.Q8_0) return dotQ8_0Generic(n, w, wOffset, a, aOffset);
    if (weightType === GgmlType.Q5_K) return dotQ5_KGeneric(n, w, wOffset, a, aOffset);
    if (weightType === GgmlType.Q3_K) return dotQ3_KGeneric(n, w, wOffset, a, aOffset);
  }
  return vecDotFn(weightType)(n, w, wOffset, a, aOffset);
}

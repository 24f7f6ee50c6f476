// Half-precision (IEEE binary16) and brain-float (bf16) conversions, bit-compatible with ggml.
//
// f32 -> f16 rounds to nearest, ties to even, like x86 F16C and ggml's software
// GGML_FP32_TO_FP16: subnormal halves are produced (not flushed), overflow gives ±inf.
// NaN becomes the canonical quiet half 0x7E00 (with the sign), as ggml's software path does;
// F16C would keep the top payload bits instead, which no model data depends on.
//
// f32 -> bf16 follows ggml_compute_fp32_to_bf16: round to nearest even on the upper 16 bits,
// NaN forced quiet by setting bit 6 of the half (payload otherwise truncated), subnormals kept.

// One shared scratch word to move between a float and its bits without allocating.
const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** Bits of the f32 nearest to x (x is first rounded to f32). */
export function f32Bits(x: number): number {
  scratchF32[0] = x;
  return scratchU32[0]!;
}

/** The f32 whose bits are `bits` (uint32). */
export function f32FromBits(bits: number): number {
  scratchU32[0] = bits >>> 0;
  return scratchF32[0]!;
}

/** Decode one binary16 (uint16 bits) to its exact value. */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 5.960464477539063e-8; // mant * 2^-24 (subnormal or zero)
  if (exp === 31) return mant === 0 ? sign * Infinity : NaN;
  return sign * (1024 + mant) * 2 ** (exp - 25); // (1 + mant/1024) * 2^(exp-15)
}

/** Encode x (rounded to f32 first, as the C code holds a float) to binary16 bits, RNE. */
export function f32ToF16(x: number): number {
  return f16FromF32Bits(f32Bits(x));
}

/** f32ToF16 from the f32's bits (as int32 or uint32): integer in, integer out, so a hot caller boxes nothing. */
export function f16FromF32Bits(w: number): number {
  w >>>= 0;
  const sign = (w >>> 16) & 0x8000;
  const exp = (w >>> 23) & 0xff;
  const mant = w & 0x7fffff;
  if (exp === 0xff) return sign | (mant !== 0 ? 0x7e00 : 0x7c00);
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 31) return sign | 0x7c00; // |x| >= 65536: overflow
  if (e >= 1) {
    // Normal half: keep 10 mantissa bits, round on the 13 dropped ones. A carry out of the
    // mantissa correctly bumps the exponent (up to 0x7C00 = inf for values >= 65520).
    let half = (e << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && (half & 1) !== 0)) half++;
    return sign | half;
  }
  if (exp === 0) return sign; // f32 zero or subnormal: far below half's smallest subnormal
  // Subnormal half: value = m * 2^(exp-150), unit 2^-24, so q = m >> (126 - exp).
  const m = mant | 0x800000;
  const shift = 126 - exp; // >= 14
  if (shift > 24) return sign; // < 2^-25 (half an ulp) rounds to zero; == 2^-25 ties to even 0
  let half = m >>> shift;
  const rest = m & ((1 << shift) - 1);
  const halfway = 1 << (shift - 1);
  if (rest > halfway || (rest === halfway && (half & 1) !== 0)) half++;
  return sign | half;
}

/** Decode bf16 bits to f32: the bf16 is the upper half of an f32. */
export function bf16ToF32(h: number): number {
  scratchU32[0] = (h & 0xffff) << 16;
  return scratchF32[0]!;
}

/** Encode x (rounded to f32 first) to bf16 bits, as ggml_compute_fp32_to_bf16. */
export function f32ToBf16(x: number): number {
  const u = f32Bits(x);
  if ((u & 0x7fffffff) >>> 0 > 0x7f800000) return ((u >>> 16) | 64) & 0xffff; // NaN: force quiet
  // u + 0x7fff + lsb stays below 2^32 for every non-NaN u, so the uint32 shift is exact.
  return (u + 0x7fff + ((u >>> 16) & 1)) >>> 16;
}

/** f16 bits -> f32, precomputed for all 65536 patterns (what ggml's CPU table holds). */
export const F16_TO_F32: Float32Array = (() => {
  const t = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) t[h] = f16ToF32(h);
  return t;
})();

/** x rounded to the nearest f16 value, returned as a number (f32 -> f16 -> f32). */
export function roundToF16(x: number): number {
  return F16_TO_F32[f32ToF16(x)]!;
}

// The three float -> integer roundings ggml's quantizers use. They differ only on ties
// (x.5), which do occur (e.g. 2.5 from a scale of exactly 1), so each call site keeps its own.

/**
 * ggml's nearest_int: adding 1.5*2^23 in f32 leaves the integer in the low mantissa bits,
 * rounded to nearest with ties to even. Same result as x86 _mm256_round_ps(_MM_ROUND_NEAREST).
 * x must be an f32 value with |x| < 2^22.
 */
export function nearestInt(x: number): number {
  return Math.fround(x + 12582912) - 12582912;
}

/** C roundf: round half away from zero (exact for any f32 x). */
export function roundf(x: number): number {
  return x < 0 ? -Math.floor(-x + 0.5) : Math.floor(x + 0.5);
}

/** C's (int) conversion of a float: truncate toward zero. */
export function truncInt(x: number): number {
  return x < 0 ? Math.ceil(x) : Math.floor(x);
}

// Scratch for fmaf's tie check: the bits of a double.
const fmaF64 = new Float64Array(1);
const fmaU32 = new Uint32Array(fmaF64.buffer);

/**
 * C fmaf(a, b, c) for f32 a, b, c: a*b + c rounded once to f32, as the FMA instructions ggml's
 * x86 kernels use (_mm256_fmadd_ps, _mm512_fmadd_ps). a*b is exact in double; the double sum
 * p + c is then rounded twice (to double, then to f32), which is wrong only when the double sum
 * lands exactly halfway between two f32 values and the first rounding lost something: that case
 * is detected (TwoSum error term) and rounded in the direction of the lost part.
 */
export function fmaf(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  const r = Math.fround(s);
  if (r === s) return r;
  fmaF64[0] = s;
  // halfway between two f32 normals: the 29 mantissa bits below f32 precision are 1000...0
  if ((fmaU32[0]! & 0x1fffffff) !== 0x10000000) return r;
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb); // exact: p + c = s + err
  if (err === 0) return r;
  // r is the tie-to-even choice; the exact value lies on err's side of s
  const other = 2 * s - r; // the other neighbour (exact: s is their midpoint)
  return err > 0 ? Math.max(r, other) : Math.min(r, other);
}

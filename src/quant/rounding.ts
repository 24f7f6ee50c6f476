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

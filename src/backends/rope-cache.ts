// ggml's rope cache (ggml_rope_cache_init / rope_yarn without YaRN ramp): for one position, cos and sin of
// each rotated pair's angle. theta follows ggml's f32 recurrence theta *= base^(-2/nDims), divided by the
// pair's frequency factor (rope_freqs) and times freqScale; cos/sin are glibc's cosf/sinf as ggml calls
// them (not correctly rounded: the bits matter), times the attention factor mscale. The reference's rope
// calls it; the cpu kernels have the same loop in WASM (kernels/rope.ts rope_cache, with glibc's sinf/cosf
// in kernels/common/libm.ts), checked bit for bit against this one (test/backends/cpu/kernels.test.ts).
import { cosf, sinf } from './reference/libm.js';

/** -2/nDims power of the base, as ggml computes it in f32 */
export function ropeThetaScale(freqBase: number, nDims: number): number {
  return Math.fround(Math.pow(freqBase, -2 / nDims));
}

/**
 * out[o + 2j] = cos, out[o + 2j + 1] = sin of pair j < nDims/2 at position pos. freqScale multiplies as
 * given (the caller decides whether it is an f32).
 */
export function ropeCacheRow(pos: number, nDims: number, thetaScale: number, freqScale: number, factors: ArrayLike<number> | null | undefined,
  mscale: number, out: Float32Array, o: number): void {
  const ms = Math.fround(mscale);
  let theta = Math.fround(pos);
  for (let j = 0; j < nDims / 2; j++) {
    const th = Math.fround((factors ? Math.fround(theta / factors[j]!) : theta) * freqScale);
    out[o + 2 * j] = cosf(th) * ms;
    out[o + 2 * j + 1] = sinf(th) * ms;
    theta = Math.fround(theta * thetaScale);
  }
}

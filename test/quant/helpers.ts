// Shared helpers for the quant tests (not a test file itself).

/** Deterministic N(0, sigma^2) samples (Box-Muller over an LCG), as f32. */
export function gaussian(n: number, sigma: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = sigma * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  return out;
}

/**
 * Inputs for the golden vectors, built from integer arithmetic only (no Math.log/cos), so they
 * are bit-identical on every engine:
 * - 'smooth': roughly N(0, 0.03^2) (sum of four uniforms), a few exact zeros;
 * - 'act': the same shape at unit scale, a different seed;
 * - 'ties': multiples of 1/4 in [-2, 2], which put many scaled values exactly on .5.
 */
export function goldenInput(kind: 'smooth' | 'act' | 'ties', n: number): Float32Array {
  let s = kind === 'act' ? 2 : 1;
  const u = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 4294967296;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    if (kind === 'ties') out[i] = (((i * 37) % 17) - 8) * 0.25;
    else {
      const g = u() + u() + u() + u() - 2;
      out[i] = i % 61 === 0 ? 0 : g * (kind === 'act' ? 1 : 0.05);
    }
  }
  return out;
}

/** Deterministic pseudo-random bytes; every `blockBytes` block gets f16 scale 0x14xx (~2^-10). */
export function goldenBytes(len: number, blockBytes: number): Uint8Array {
  let s = 3;
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) out[i] = (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  for (let b = 0; b < len; b += blockBytes) out[b + 1] = 0x14;
  return out;
}

// Shared helpers for the quant tests (not a test file itself).

/** Deterministic N(0, sigma^2) samples (Box-Muller over an LCG), as f32. */
export function gaussian(n: number, sigma: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const u = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) + 0.5) / 4294967296;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = sigma * Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  return out;
}

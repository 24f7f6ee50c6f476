// Node only. Node 20 (V8 11.3) keeps relaxed SIMD behind --experimental-wasm-relaxed-simd, and its
// baseline compiler (Liftoff) computes i32x4.relaxed_dot_i8x16_i7x16_add_s wrong until a function tiers
// up. Entry points (the CLI, the bench scripts, the test runner's flags) call this before the first
// kernel compiles: it turns relaxed SIMD on and has wasm compiled by the optimizing tier only. Engines
// that validate relaxed SIMD already are left alone. The runtime self-tests the relaxed build either way
// and falls back to the SIMD128 build when the check fails.
import { setFlagsFromString } from 'node:v8';
import { relaxedSimdAvailable } from './wasm.js';

export function enableRelaxedSimd(): void {
  if (relaxedSimdAvailable()) return;
  try {
    setFlagsFromString('--experimental-wasm-relaxed-simd');
    setFlagsFromString('--no-liftoff');
  } catch {
    // flags unknown to this engine: the SIMD128 build runs
  }
}

// Helpers for the CPU kernel tests (the oracle itself is src/quant: quantizeActivations and vecDot,
// ggml's generic CPU semantics): block geometry, a deterministic PRNG and random weight rows.
import { GgmlType } from '../../../src/gguf/ggml-types.js';

import { f32ToBf16, f32ToF16 } from '../../../src/quant/index.js';

export const BLOCK: Record<number, [number, number]> = {
  [GgmlType.Q4_0]: [32, 18], [GgmlType.Q4_1]: [32, 20], [GgmlType.Q5_0]: [32, 22], [GgmlType.Q5_1]: [32, 24],
  [GgmlType.Q8_0]: [32, 34], [GgmlType.Q8_1]: [32, 36], [GgmlType.Q2_K]: [256, 84], [GgmlType.Q3_K]: [256, 110],
  [GgmlType.Q4_K]: [256, 144], [GgmlType.Q5_K]: [256, 176], [GgmlType.Q6_K]: [256, 210], [GgmlType.Q8_K]: [256, 292],
  [GgmlType.F16]: [1, 2], [GgmlType.F32]: [1, 4], [GgmlType.BF16]: [1, 2],
  [GgmlType.IQ4_NL]: [32, 18], [GgmlType.IQ4_XS]: [256, 136],
};

/** deterministic PRNG */
export function rng(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => { s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0; return s / 4294967296; };
}

/** Random weight rows of a type: random bytes with sane f16 / f32 scale fields. */
export function randomWeights(type: number, rows: number, cols: number, rnd: () => number): Uint8Array {
  const [bs, bb] = BLOCK[type]!;
  const nb = cols / bs;
  const out = new Uint8Array(rows * nb * bb);
  for (let i = 0; i < out.length; i++) out[i] = Math.floor(rnd() * 256);
  const dv = new DataView(out.buffer);
  const sh = (o: number, v: number) => dv.setUint16(o, f32ToF16(v), true);
  for (let b = 0; b < rows * nb; b++) {
    const o = b * bb;
    switch (type) {
      case GgmlType.F32: dv.setFloat32(o, rnd() * 2 - 1, true); break;
      case GgmlType.F16: sh(o, rnd() * 2 - 1); break;
      case GgmlType.BF16: dv.setUint16(o, f32ToBf16(rnd() * 2 - 1), true); break;
      case GgmlType.IQ4_NL: case GgmlType.IQ4_XS: sh(o, (rnd() - 0.3) * 0.01); break;
      case GgmlType.Q4_0: case GgmlType.Q5_0: case GgmlType.Q8_0: sh(o, (rnd() - 0.3) * 0.02); break;
      case GgmlType.Q4_1: case GgmlType.Q5_1: sh(o, rnd() * 0.02); sh(o + 2, -rnd() * 0.1); break;
      case GgmlType.Q2_K: sh(o + 80, rnd() * 0.01); sh(o + 82, rnd() * 0.01); break;
      case GgmlType.Q3_K: sh(o + 108, (rnd() - 0.3) * 0.01); break;
      case GgmlType.Q4_K: case GgmlType.Q5_K: sh(o, rnd() * 0.01); sh(o + 2, rnd() * 0.01); break;
      case GgmlType.Q6_K: sh(o + 208, (rnd() - 0.3) * 0.01); break;
    }
  }
  return out;
}

// Plain-TS references for the CPU kernel tests: ggml's dequantize_row_* per type (scalar, written from
// ggml's generic C), its activation quantizers, f16 conversion, and a random block generator.
import { GgmlType } from '../../../src/gguf/ggml-types.js';

const f32buf = new Float32Array(1);
const u32buf = new Uint32Array(f32buf.buffer);

export function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
/** round to nearest even f16 bits */
export function f32ToF16(f: number): number {
  f32buf[0] = f;
  const x = u32buf[0]!;
  const sign = (x >>> 16) & 0x8000;
  const e = (x >>> 23) & 0xff;
  let m = x & 0x7fffff;
  if (e === 0xff) return sign | (m ? 0x7e00 : 0x7c00);
  let ex = e - 127 + 15;
  if (ex >= 31) return sign | 0x7c00;
  if (ex <= 0) {
    if (ex < -10) return sign;
    m |= 0x800000;
    const shift = 14 - ex;
    let r = m >>> shift;
    const rem = m & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && r & 1)) r++;
    return sign | r;
  }
  let r = (ex << 10) | (m >>> 13);
  const rem = m & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && r & 1)) r++;
  return sign | r;
}
const fr = Math.fround;

export const BLOCK: Record<number, [number, number]> = {
  [GgmlType.Q4_0]: [32, 18], [GgmlType.Q4_1]: [32, 20], [GgmlType.Q5_0]: [32, 22], [GgmlType.Q5_1]: [32, 24],
  [GgmlType.Q8_0]: [32, 34], [GgmlType.Q8_1]: [32, 36], [GgmlType.Q2_K]: [256, 84], [GgmlType.Q3_K]: [256, 110],
  [GgmlType.Q4_K]: [256, 144], [GgmlType.Q5_K]: [256, 176], [GgmlType.Q6_K]: [256, 210], [GgmlType.Q8_K]: [256, 292],
  [GgmlType.F16]: [1, 2], [GgmlType.F32]: [1, 4],
};

function scaleMinK4(j: number, q: Uint8Array, o: number): [number, number] {
  if (j < 4) return [q[o + j]! & 63, q[o + j + 4]! & 63];
  return [(q[o + j + 4]! & 0xf) | ((q[o + j - 4]! >> 6) << 4), (q[o + j + 4]! >> 4) | ((q[o + j]! >> 6) << 4)];
}

/** ggml dequantize_row_<type> of n values of src at byte offset off */
export function dequantize(type: number, src: Uint8Array, off: number, n: number): Float32Array {
  const y = new Float32Array(n);
  const dv = new DataView(src.buffer, src.byteOffset, src.byteLength);
  const h = (o: number) => f16ToF32(dv.getUint16(o, true));
  const [bs, bb] = BLOCK[type]!;
  for (let b = 0; b < n / bs; b++) {
    const o = off + b * bb, yo = b * bs;
    switch (type) {
      case GgmlType.F32: y[yo] = dv.getFloat32(o, true); break;
      case GgmlType.F16: y[yo] = h(o); break;
      case GgmlType.Q4_0: { const d = h(o); for (let j = 0; j < 16; j++) { const q = src[o + 2 + j]!; y[yo + j] = ((q & 15) - 8) * d; y[yo + j + 16] = ((q >> 4) - 8) * d; } break; }
      case GgmlType.Q4_1: { const d = h(o), m = h(o + 2); for (let j = 0; j < 16; j++) { const q = src[o + 4 + j]!; y[yo + j] = fr((q & 15) * d) + m; y[yo + j + 16] = fr((q >> 4) * d) + m; } break; }
      case GgmlType.Q5_0: case GgmlType.Q5_1: {
        const one = type === GgmlType.Q5_1;
        const d = h(o), m = one ? h(o + 2) : 0, qh = dv.getUint32(o + (one ? 4 : 2), true), qs = o + (one ? 8 : 6);
        for (let j = 0; j < 16; j++) {
          const q = src[qs + j]!;
          const x0 = (q & 15) | (((qh >>> j) << 4) & 0x10), x1 = (q >> 4) | ((qh >>> (j + 12)) & 0x10);
          if (one) { y[yo + j] = fr(x0 * d) + m; y[yo + j + 16] = fr(x1 * d) + m; } else { y[yo + j] = (x0 - 16) * d; y[yo + j + 16] = (x1 - 16) * d; }
        }
        break;
      }
      case GgmlType.Q8_0: { const d = h(o); for (let j = 0; j < 32; j++) y[yo + j] = ((src[o + 2 + j]! << 24) >> 24) * d; break; }
      case GgmlType.Q8_1: { const d = h(o); for (let j = 0; j < 32; j++) y[yo + j] = ((src[o + 4 + j]! << 24) >> 24) * d; break; }
      case GgmlType.Q8_K: { const d = dv.getFloat32(o, true); for (let j = 0; j < 256; j++) y[yo + j] = ((src[o + 4 + j]! << 24) >> 24) * d; break; }
      case GgmlType.Q2_K: {
        const d = h(o + 80), dmin = h(o + 82);
        let q = o + 16, is = 0, k = yo;
        for (let n0 = 0; n0 < 256; n0 += 128) {
          let shift = 0;
          for (let j = 0; j < 4; j++) {
            let sc = src[o + is++]!; let dl = fr(d * (sc & 0xf)), ml = fr(dmin * (sc >> 4));
            for (let l = 0; l < 16; l++) y[k++] = dl * ((src[q + l]! >> shift) & 3) - ml;
            sc = src[o + is++]!; dl = fr(d * (sc & 0xf)); ml = fr(dmin * (sc >> 4));
            for (let l = 0; l < 16; l++) y[k++] = dl * ((src[q + l + 16]! >> shift) & 3) - ml;
            shift += 2;
          }
          q += 32;
        }
        break;
      }
      case GgmlType.Q3_K: {
        const d = h(o + 108);
        const s = o + 96;
        const sc = (j: number) => {
          const lo = j < 8 ? src[s + j]! & 0xf : src[s + j - 8]! >> 4;
          const hi = (src[s + 8 + (j & 3)]! >> (2 * (j >> 2))) & 3;
          return (lo | (hi << 4)) - 32;
        };
        let q = o + 32, is = 0, m = 1, k = yo;
        for (let n0 = 0; n0 < 256; n0 += 128) {
          let shift = 0;
          for (let j = 0; j < 4; j++) {
            let dl = fr(d * sc(is++));
            for (let l = 0; l < 16; l++) y[k++] = dl * (((src[q + l]! >> shift) & 3) - (src[o + l]! & m ? 0 : 4));
            dl = fr(d * sc(is++));
            for (let l = 0; l < 16; l++) y[k++] = dl * (((src[q + l + 16]! >> shift) & 3) - (src[o + l + 16]! & m ? 0 : 4));
            shift += 2; m <<= 1;
          }
          q += 32;
        }
        break;
      }
      case GgmlType.Q4_K: case GgmlType.Q5_K: {
        const five = type === GgmlType.Q5_K;
        const d = h(o), dmin = h(o + 2);
        let q = o + (five ? 48 : 16), is = 0, k = yo, u1 = 1, u2 = 2;
        for (let j = 0; j < 256; j += 64) {
          const [s1, m1] = scaleMinK4(is, src, o + 4), [s2, m2] = scaleMinK4(is + 1, src, o + 4);
          const d1 = fr(d * s1), mm1 = fr(dmin * m1), d2 = fr(d * s2), mm2 = fr(dmin * m2);
          for (let l = 0; l < 32; l++) y[k++] = d1 * ((src[q + l]! & 0xf) + (five && src[o + 16 + l]! & u1 ? 16 : 0)) - mm1;
          for (let l = 0; l < 32; l++) y[k++] = d2 * ((src[q + l]! >> 4) + (five && src[o + 16 + l]! & u2 ? 16 : 0)) - mm2;
          q += 32; is += 2; u1 <<= 2; u2 <<= 2;
        }
        break;
      }
      case GgmlType.Q6_K: {
        const d = h(o + 208);
        let ql = o, qh = o + 128, sc = o + 192, k = yo;
        for (let n0 = 0; n0 < 256; n0 += 128) {
          for (let l = 0; l < 32; l++) {
            const is = l >> 4;
            const q1 = ((src[ql + l]! & 0xf) | (((src[qh + l]! >> 0) & 3) << 4)) - 32;
            const q2 = ((src[ql + l + 32]! & 0xf) | (((src[qh + l]! >> 2) & 3) << 4)) - 32;
            const q3 = ((src[ql + l]! >> 4) | (((src[qh + l]! >> 4) & 3) << 4)) - 32;
            const q4 = ((src[ql + l + 32]! >> 4) | (((src[qh + l]! >> 6) & 3) << 4)) - 32;
            const s = (i: number) => (src[sc + i]! << 24) >> 24;
            y[k + l] = fr(d * s(is)) * q1; y[k + l + 32] = fr(d * s(is + 2)) * q2;
            y[k + l + 64] = fr(d * s(is + 4)) * q3; y[k + l + 96] = fr(d * s(is + 6)) * q4;
          }
          k += 128; ql += 64; qh += 32; sc += 8;
        }
        break;
      }
      default: throw new Error(`no reference dequantizer for type ${type}`);
    }
  }
  return y;
}

/** Activation quantizers with the runtime's semantics (x86 ggml-cpu: Q8_0/Q8_1 scale 127/amax and nearest-even; Q8_K as quantize_row_q8_K_ref). */
export function quantizeAct(type: number, x: Float32Array, n: number): Uint8Array {
  const [bs, bb] = BLOCK[type]!;
  const out = new Uint8Array((n / bs) * bb);
  const dv = new DataView(out.buffer);
  const rne = (v: number) => { const f = Math.floor(v), r = v - f; return r > 0.5 ? f + 1 : r < 0.5 ? f : (f % 2 === 0 ? f : f + 1); };
  for (let b = 0; b < n / bs; b++) {
    const o = b * bb, xo = b * bs;
    if (type === GgmlType.Q8_K) {
      let amax = 0, max = 0;
      for (let j = 0; j < 256; j++) { const ax = Math.abs(x[xo + j]!); if (ax > amax) { amax = ax; max = x[xo + j]!; } }
      if (amax === 0) continue;
      const iscale = fr(-127 / max);
      for (let j = 0; j < 256; j++) out[o + 4 + j] = Math.min(127, rne(fr(iscale * x[xo + j]!))) & 0xff;
      for (let j = 0; j < 16; j++) { let s = 0; for (let l = 0; l < 16; l++) s += (out[o + 4 + j * 16 + l]! << 24) >> 24; dv.setInt16(o + 260 + 2 * j, s, true); }
      dv.setFloat32(o, fr(1 / iscale), true);
    } else {
      let amax = 0;
      for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[xo + j]!));
      const d = fr(amax / 127), id = amax ? fr(127 / amax) : 0;
      dv.setUint16(o, f32ToF16(d), true);
      const qo = type === GgmlType.Q8_1 ? 4 : 2;
      let sum = 0;
      for (let j = 0; j < 32; j++) { const q = rne(fr(x[xo + j]! * id)); out[o + qo + j] = q & 0xff; sum += q; }
      if (type === GgmlType.Q8_1) dv.setUint16(o + 2, f32ToF16(fr(d * sum)), true);
    }
  }
  return out;
}

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

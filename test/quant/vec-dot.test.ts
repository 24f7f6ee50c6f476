import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/gguf/ggml-types.js';
import { dequantizeRow } from '../../src/quant/dequantize.js';
import { quantizeRow } from '../../src/quant/quantize.js';
import { bf16ToF32, f16ToF32, f32ToBf16, roundToF16 } from '../../src/quant/float16.js';
import { quantizeActivations, vecDot, vecDotFn, vecDotType } from '../../src/quant/vec-dot.js';
import { gaussian } from './helpers.js';

const T = GgmlType;

test('vecDotType follows ggml-cpu type_traits_cpu', () => {
  const want: [number, number][] = [
    [T.F32, T.F32], [T.F16, T.F16], [T.BF16, T.BF16],
    [T.Q4_0, T.Q8_0], [T.Q5_0, T.Q8_0], [T.Q8_0, T.Q8_0], [T.IQ4_NL, T.Q8_0],
    [T.Q4_1, T.Q8_1], [T.Q5_1, T.Q8_1],
    [T.Q2_K, T.Q8_K], [T.Q3_K, T.Q8_K], [T.Q4_K, T.Q8_K], [T.Q5_K, T.Q8_K], [T.Q6_K, T.Q8_K], [T.IQ4_XS, T.Q8_K],
  ];
  for (const [w, v] of want) assert.equal(vecDotType(w), v, ggmlTypeName(w));
  assert.throws(() => vecDotType(T.IQ2_XXS), /unsupported weight type IQ2_XXS/);
  assert.throws(() => vecDot(T.Q8_K, 256, new Uint8Array(292), 0, new Uint8Array(292), 0), /unsupported weight type Q8_K/);
});

test('quantizeActivations: f16/bf16 round each value, f32 copies, q8 types match quantizeRow', () => {
  const x = gaussian(256, 2, 5);
  const h = new Uint8Array(512 + 1);
  quantizeActivations(T.F16, x, 0, h, 1, 256);
  for (let i = 0; i < 256; i++) assert.equal(f16ToF32(h[1 + 2 * i]! | (h[2 + 2 * i]! << 8)), roundToF16(x[i]!));
  quantizeActivations(T.BF16, x, 0, h, 1, 256);
  for (let i = 0; i < 256; i++) assert.equal(h[1 + 2 * i]! | (h[2 + 2 * i]! << 8), f32ToBf16(x[i]!));
  const g = new Uint8Array(1024 + 3);
  quantizeActivations(T.F32, x, 0, g, 3, 256);
  const back = new Float32Array(256);
  dequantizeRow(T.F32, g, 3, back, 0, 256);
  assert.deepEqual(back, x);
  for (const vt of [T.Q8_0, T.Q8_1, T.Q8_K]) {
    const a = new Uint8Array(rowBytes(vt, 256)), b = new Uint8Array(rowBytes(vt, 256));
    quantizeActivations(vt, x, 0, a, 0, 256, 'ref');
    quantizeRow(vt, x, 0, b, 0, 256);
    assert.deepEqual(a, b, ggmlTypeName(vt));
  }
  // Q8_K has one flavour on x86: the reference.
  const k1 = new Uint8Array(292), k2 = new Uint8Array(292);
  quantizeActivations(T.Q8_K, x, 0, k1, 0, 256);
  quantizeRow(T.Q8_K, x, 0, k2, 0, 256);
  assert.deepEqual(k1, k2);
  assert.throws(() => quantizeActivations(T.Q4_0, x, 0, h, 0, 256), /not an activation type/);
});

/** Random but valid IQ4_XS row (we have no quantizer for it): small f16 d, random bits. */
test("x86 Q8_0/Q8_1 activations: id = 127/amax, ties to even; 'ref' uses roundf", () => {
  const x = new Float32Array(32);
  x.set([127, 2.5, -2.5, 0.5, 1.5, -0.5, 3.5, -127]);
  const x86 = new Uint8Array(34), ref = new Uint8Array(34);
  quantizeActivations(T.Q8_0, x, 0, x86, 0, 32);
  quantizeActivations(T.Q8_0, x, 0, ref, 0, 32, 'ref');
  const q = (b: Uint8Array, o: number) => Array.from(b.subarray(o, o + 8), (v) => (v << 24) >> 24);
  assert.deepEqual(q(x86, 2), [127, 2, -2, 0, 2, 0, 4, -127]);
  assert.deepEqual(q(ref, 2), [127, 3, -3, 1, 2, -1, 4, -127]);
  assert.equal(x86[0]! | (x86[1]! << 8), 0x3c00);
  const s1 = new Uint8Array(36);
  quantizeActivations(T.Q8_1, x, 0, s1, 0, 32);
  assert.deepEqual(q(s1, 4), [127, 2, -2, 0, 2, 0, 4, -127]);
  assert.equal(f16ToF32(s1[2]! | (s1[3]! << 8)), 6); // d * sum = 1 * (2 - 2 + 2 + 4)
  // On ordinary data the two flavours differ only rarely, and then by one step.
  const g = gaussian(32 * 256, 1, 21);
  const a = new Uint8Array(34 * 256), b = new Uint8Array(34 * 256);
  quantizeActivations(T.Q8_0, g, 0, a, 0, g.length);
  quantizeActivations(T.Q8_0, g, 0, b, 0, g.length, 'ref');
  let diff = 0;
  for (let i = 0; i < a.length; i++) {
    if (i % 34 < 2) { assert.equal(a[i], b[i]); continue; }
    const da = (a[i]! << 24) >> 24, db = (b[i]! << 24) >> 24;
    if (da !== db) { diff++; assert.equal(Math.abs(da - db), 1); }
  }
  assert.ok(diff < g.length / 1000, `${diff} differing quants`);
});

function randomIQ4XS(nBlocks: number, seed: number): Uint8Array {
  let s = seed;
  const r = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 24;
  const b = new Uint8Array(136 * nBlocks);
  for (let i = 0; i < b.length; i++) b[i] = r();
  for (let k = 0; k < nBlocks; k++) { b[136 * k] = r(); b[136 * k + 1] = 0x14; } // d ~ 2^-10
  return b;
}

test('vecDot equals the dot of the dequantized rows, for every weight type', () => {
  const n = 1024;
  const w = gaussian(n, 0.03, 11);
  const x = gaussian(n, 1, 12);
  const types = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.IQ4_NL, T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K, T.IQ4_XS];
  for (const wt of types) {
    const vt = vecDotType(wt);
    // Rows at odd offsets: kernels must not assume any alignment.
    const wq = new Uint8Array(rowBytes(wt, n) + 1);
    if (wt === T.IQ4_XS) wq.set(randomIQ4XS(n / 256, 3), 1); else quantizeRow(wt, w, 0, wq, 1, n);
    const aq = new Uint8Array(rowBytes(vt, n) + 3);
    quantizeActivations(vt, x, 0, aq, 3, n);
    const wd = new Float32Array(n), ad = new Float32Array(n);
    dequantizeRow(wt, wq, 1, wd, 0, n);
    dequantizeRow(vt, aq, 3, ad, 0, n);
    let ref = 0, mag = 0;
    if (vt === T.Q8_1) {
      // Q4_1/Q5_1 use the block's stored s = f16(d * sum q) for the min term, not sum(a) itself.
      const mOff = 2, bytes = wt === T.Q4_1 ? 20 : 24;
      for (let b = 0; b < n / 32; b++) {
        const m = f16ToF32(wq[1 + b * bytes + mOff]! | (wq[2 + b * bytes + mOff]! << 8));
        const s = f16ToF32(aq[3 + b * 36 + 2]! | (aq[4 + b * 36 + 2]! << 8));
        for (let j = 0; j < 32; j++) { const i = 32 * b + j; ref += (wd[i]! - m) * ad[i]!; mag += Math.abs(wd[i]! * ad[i]!); }
        ref += m * s;
      }
    } else {
      for (let i = 0; i < n; i++) { ref += wd[i]! * ad[i]!; mag += Math.abs(wd[i]! * ad[i]!); }
    }
    const got = vecDot(wt, n, wq, 1, aq, 3);
    assert.ok(Number.isFinite(got), ggmlTypeName(wt));
    assert.equal(got, Math.fround(got), `${ggmlTypeName(wt)}: result is not an f32`);
    assert.ok(Math.abs(got - ref) <= 2e-6 * mag, `${ggmlTypeName(wt)}: vecDot ${got} vs dequantized dot ${ref} (scale ${mag})`);
    assert.equal(vecDotFn(wt)(n, wq, 1, aq, 3), got);
  }
});

function u16(b: Uint8Array, o: number, v: number): void { b[o] = v & 0xff; b[o + 1] = v >> 8; }

test('Q4_0 x Q8_0 by hand: sumi * d_w * d_a per block', () => {
  const w = new Uint8Array(18), a = new Uint8Array(34);
  u16(w, 0, 0x3800); // 0.5
  w.fill(0x9a, 2); // low nibble 10 -> +2, high nibble 9 -> +1
  u16(a, 0, 0x3c00);
  for (let j = 0; j < 32; j++) a[2 + j] = j < 16 ? 3 : 0xff; // 3 for the low half, -1 for the high half
  // sumi = 16 * (2*3) + 16 * (1*-1) = 80; 80 * 0.5 * 1 = 40
  assert.equal(vecDot(T.Q4_0, 32, w, 0, a, 0), 40);
});

test('Q8_0 blocks accumulate in f32: 2^24 + 1 rounds back to 2^24', () => {
  const w = new Uint8Array(68), a = new Uint8Array(68);
  // Block 0: d_w = d_a = 32, all qs 64 x 8 -> sumi = 16384, times 1024 = 2^24.
  u16(w, 0, 0x5000); u16(a, 0, 0x5000);
  w.fill(64, 2, 34); a.fill(8, 2, 34);
  // Block 1: d = 1, one product 1 x 1 -> +1.
  u16(w, 34, 0x3c00); u16(a, 34, 0x3c00);
  w[36] = 1; a[36] = 1;
  assert.equal(vecDot(T.Q8_0, 64, w, 0, a, 0), 16777216);
  // ggml_vec_dot_f16 instead sums in double and rounds once: 2^24 + 1 + 1 stays 2^24 + 2.
  const hw = new Uint8Array(6), ha = new Uint8Array(6);
  for (const h of [hw, ha]) { u16(h, 0, 0x6c00); u16(h, 2, 0x3c00); u16(h, 4, 0x3c00); } // 4096, 1, 1
  assert.equal(vecDot(T.F16, 3, hw, 0, ha, 0), 16777218);
});

test('Q4_1 x Q8_1 by hand: d_w*d_a*sumi + m*s', () => {
  const w = new Uint8Array(20), a = new Uint8Array(36);
  u16(w, 0, 0x3c00); u16(w, 2, 0xc000); // d 1, m -2
  w.fill(0x21, 4); // low 1, high 2
  const x = new Float32Array(32).fill(1); // q8_1: d = 1/127, qs 127, s = f16(32*127 * d) = 32
  quantizeRow(T.Q8_1, x, 0, a, 0, 32);
  const d = f16ToF32(a[0]! | (a[1]! << 8));
  const s = f16ToF32(a[2]! | (a[3]! << 8));
  const sumi = 16 * 1 * 127 + 16 * 2 * 127;
  const want = Math.fround(Math.fround(Math.fround(1 * d) * sumi) + Math.fround(-2 * s));
  assert.equal(vecDot(T.Q4_1, 32, w, 0, a, 0), want);
  assert.ok(Math.abs(want - (16 * 1 + 16 * 2 - 64)) < 0.01);
});

test('BF16 dot product', () => {
  const w = new Uint8Array(4), a = new Uint8Array(4);
  u16(w, 0, f32ToBf16(1.5)); u16(w, 2, f32ToBf16(-2));
  u16(a, 0, f32ToBf16(4)); u16(a, 2, f32ToBf16(0.25));
  assert.equal(vecDot(T.BF16, 2, w, 0, a, 0), 1.5 * 4 - 2 * 0.25);
  assert.equal(bf16ToF32(f32ToBf16(1.5)), 1.5);
});

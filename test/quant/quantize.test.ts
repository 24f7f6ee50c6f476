import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GgmlType, ggmlTypeName, rowBytes } from '../../src/gguf/ggml-types.js';
import { dequantizeRow } from '../../src/quant/dequantize.js';
import { isQuantizableType, quantizeRow } from '../../src/quant/quantize.js';
import * as B from '../../src/quant/blocks.js';
import { f16ToF32 } from '../../src/quant/float16.js';
import { gaussian } from './helpers.js';

/** Quantize x into a buffer at an odd byte offset; returns [buffer, offset]. */
function quant(type: number, x: Float32Array): [Uint8Array, number] {
  const dst = new Uint8Array(rowBytes(type, x.length) + 5).fill(0xa5);
  quantizeRow(type, x, 0, dst, 3, x.length);
  assert.equal(dst[2], 0xa5);
  assert.equal(dst[3 + rowBytes(type, x.length)], 0xa5, 'wrote past the row');
  return [dst, 3];
}

function roundTrip(type: number, x: Float32Array): Float32Array {
  const [q, o] = quant(type, x);
  const y = new Float32Array(x.length);
  dequantizeRow(type, q, o, y, 0, x.length);
  return y;
}

const u16 = (b: Uint8Array, o: number) => b[o]! | (b[o + 1]! << 8);
const i8 = (v: number) => (v << 24) >> 24;

test('Q4_0: hand-computed block (d = 1, levels by truncating x + 8.5)', () => {
  const x = Float32Array.from({ length: 32 }, (_, j) => (j - 16) * 0.5);
  const [q, o] = quant(GgmlType.Q4_0, x);
  // max |x| is x[0] = -8, so d = -8 / -8 = 1 and level = min(15, trunc(x + 8.5)).
  const lv = [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 15];
  assert.equal(u16(q, o), 0x3c00);
  for (let j = 0; j < 16; j++) assert.equal(q[o + 2 + j], lv[j]! | (lv[j + 16]! << 4), `byte ${j}`);
});

test('Q4_1: hand-computed block (d = 0.25, m = 1)', () => {
  const x = Float32Array.from({ length: 32 }, (_, j) => (j % 16) * 0.25 + 1);
  const [q, o] = quant(GgmlType.Q4_1, x);
  assert.equal(u16(q, o), 0x3400);
  assert.equal(u16(q, o + 2), 0x3c00);
  for (let j = 0; j < 16; j++) assert.equal(q[o + 4 + j], j * 0x11);
});

test('Q5_0 and Q5_1: hand-computed blocks, 5th bits in qh', () => {
  const x0 = Float32Array.from({ length: 32 }, (_, j) => j - 16); // d = -16/-16 = 1, level j
  const [q, o] = quant(GgmlType.Q5_0, x0);
  assert.equal(u16(q, o), 0x3c00);
  assert.deepEqual([...q.subarray(o + 2, o + 6)], [0, 0, 0xff, 0xff]); // values 16..31 have bit 4
  for (let j = 0; j < 16; j++) assert.equal(q[o + 6 + j], j | (j << 4));
  const x1 = Float32Array.from({ length: 32 }, (_, j) => j * 0.5); // min 0, d = 15.5/31 = 0.5
  const [r, p] = quant(GgmlType.Q5_1, x1);
  assert.equal(u16(r, p), 0x3800);
  assert.equal(u16(r, p + 2), 0);
  assert.deepEqual([...r.subarray(p + 4, p + 8)], [0, 0, 0xff, 0xff]);
  for (let j = 0; j < 16; j++) assert.equal(r[p + 8 + j], j | (j << 4));
});

test('Q8_0 / Q8_1: roundf (half away from zero), Q8_1 s = d * sum', () => {
  const x = new Float32Array(32);
  x.set([127, 2.5, -2.5, 0.5, 1.5, -0.5, 0.49999997, 126.5, -127]);
  const want = [127, 3, -3, 1, 2, -1, 0, 127, -127];
  const [q, o] = quant(GgmlType.Q8_0, x);
  assert.equal(u16(q, o), 0x3c00); // d = 127 / 127
  for (let j = 0; j < 32; j++) assert.equal(i8(q[o + 2 + j]!), want[j] ?? 0, `q[${j}]`);
  const [r, p] = quant(GgmlType.Q8_1, x);
  assert.equal(u16(r, p), 0x3c00);
  assert.equal(f16ToF32(u16(r, p + 2)), want.reduce((a, b) => a + b, 0));
  for (let j = 0; j < 32; j++) assert.equal(i8(r[p + 4 + j]!), want[j] ?? 0);
});

test('Q8_K: nearest_int ties to even, scale -127/max (negative for positive max), bsums', () => {
  const x = new Float32Array(256);
  x.set([127, 2.5, -2.5, 0.5, 1.5, 3.5, -0.5]);
  x[255] = -1;
  const [q, o] = quant(GgmlType.Q8_K, x);
  const dv = new DataView(q.buffer, q.byteOffset);
  assert.equal(dv.getFloat32(o + B.Q8K_D, true), -1); // iscale = -127/127 = -1, d = 1/iscale
  const want = [-127, -2, 2, 0, -2, -4, 0];
  for (let j = 0; j < 256; j++) assert.equal(i8(q[o + B.Q8K_QS + j]!), j === 255 ? 1 : want[j] ?? 0, `q[${j}]`);
  const bsum = (j: number) => (u16(q, o + B.Q8K_BSUMS + 2 * j) << 16) >> 16;
  assert.equal(bsum(0), -127 - 2 + 2 + 0 - 2 - 4 + 0);
  assert.equal(bsum(15), 1);
  for (let j = 1; j < 15; j++) assert.equal(bsum(j), 0);
});

test('IQ4_NL: data on the level grid is encoded exactly', () => {
  const kv = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];
  const x = Float32Array.from({ length: 32 }, (_, j) => kv[(j * 7) % 16]! * 0.5);
  const [q, o] = quant(GgmlType.IQ4_NL, x);
  assert.equal(u16(q, o), 0x3800); // d = max / -127 = 0.5, then the least-squares refit keeps 0.5
  for (let j = 0; j < 16; j++) assert.equal(q[o + 2 + j], ((j * 7) % 16) | ((((j + 16) * 7) % 16) << 4));
});

/** Values s_g * level for 256 values with group size gs and the given per-group level function. */
function onGrid(gs: number, scale: (g: number) => number, level: (k: number) => number): Float32Array {
  return Float32Array.from({ length: 256 }, (_, k) => scale(Math.floor(k / gs)) * level(k));
}

test('K-quants: data exactly on a representable grid round-trips exactly', () => {
  // Each group's scale is an integer multiple of a power-of-two super-scale, so d and the
  // group scales are exact and every value can be reproduced. Every group contains the extreme
  // level that fixes its scale (0 and max for min-scale types, the most negative for symmetric).
  const cases: [number, Float32Array][] = [
    // Q2_K: d = 2^-8, group scales k in 1..15, levels 0..3, no min.
    [GgmlType.Q2_K, onGrid(16, (g) => (1 + (g % 15)) * 2 ** -8, (k) => [0, 3, 1, 2][k % 4]!)],
    // Q3_K: d = -2^-10 (stored sign), group scales 1..32, levels -4..3.
    [GgmlType.Q3_K, onGrid(16, (g) => [32, 1, 7, 19, 5, 30, 2, 11, 16, 3, 25, 9, 13, 4, 21, 6][g]! * 2 ** -10, (k) => (k % 8) - 4)],
    // Q4_K: d = 2^-10, group scales up to 63, levels 0..15.
    [GgmlType.Q4_K, onGrid(32, (g) => [63, 1, 17, 40, 5, 33, 62, 9][g]! * 2 ** -10, (k) => (k * 5) % 16)],
    // Q5_K: levels 0..31.
    [GgmlType.Q5_K, onGrid(32, (g) => [3, 63, 12, 50, 7, 21, 44, 1][g]! * 2 ** -12, (k) => (k * 3) % 32)],
    // Q6_K: d = -2^-12, group scales 1..128, levels -32..31.
    [GgmlType.Q6_K, onGrid(16, (g) => [128, 1, 64, 100, 3, 77, 50, 9, 127, 31, 12, 5, 88, 40, 2, 19][g]! * 2 ** -12, (k) => (k % 16 === 0 ? -32 : ((k * 9) % 64) - 32))],
  ];
  for (const [type, x] of cases) {
    const y = roundTrip(type, x);
    for (let k = 0; k < 256; k++) assert.equal(y[k], x[k], `${ggmlTypeName(type)} value ${k}`);
  }
});

test('round-trip error on gaussian data is within each type\'s expected bound', () => {
  // Relative RMS error bounds, a little above what ggml's reference quantizers reach on N(0,1).
  const bounds: [number, number][] = [
    [GgmlType.F32, 0], [GgmlType.F16, 5e-4], [GgmlType.BF16, 4e-3],
    [GgmlType.Q8_0, 0.007], [GgmlType.Q8_1, 0.007], [GgmlType.Q8_K, 0.008],
    [GgmlType.Q5_0, 0.05], [GgmlType.Q5_1, 0.045], [GgmlType.Q4_0, 0.1], [GgmlType.Q4_1, 0.09], [GgmlType.IQ4_NL, 0.09], [GgmlType.IQ4_XS, 0.09],
    [GgmlType.Q6_K, 0.022], [GgmlType.Q5_K, 0.045], [GgmlType.Q4_K, 0.085], [GgmlType.Q3_K, 0.17], [GgmlType.Q2_K, 0.33],
  ];
  const x = gaussian(2048, 0.03, 7);
  for (const [type, bound] of bounds) {
    const y = roundTrip(type, x);
    let e2 = 0, s2 = 0;
    for (let i = 0; i < x.length; i++) { e2 += (y[i]! - x[i]!) ** 2; s2 += x[i]! ** 2; }
    const rel = Math.sqrt(e2 / s2);
    assert.ok(rel <= bound, `${ggmlTypeName(type)}: relative RMS error ${rel} > ${bound}`);
    if (type !== GgmlType.F32) assert.ok(rel > 0, `${ggmlTypeName(type)}: suspiciously lossless`);
  }
});

test('all-zero and constant rows', () => {
  for (const type of [0, 1, 30, 2, 3, 6, 7, 8, 9, 15, 10, 11, 12, 13, 14, 20, 23]) {
    const z = roundTrip(type, new Float32Array(256));
    for (let i = 0; i < 256; i++) assert.equal(Math.abs(z[i]!), 0, `${ggmlTypeName(type)} zero row value ${i}`);
    const c = roundTrip(type, new Float32Array(256).fill(0.75));
    for (let i = 0; i < 256; i++) assert.ok(Math.abs(c[i]! - 0.75) < 0.75 * 0.07, `${ggmlTypeName(type)} constant row value ${i} = ${c[i]}`);
  }
});

test('Q4_0 / Q5_0 / Q8_0 are idempotent on their own decoded output', () => {
  for (const [type, bytes] of [[GgmlType.Q4_0, B.Q4_0_BYTES], [GgmlType.Q5_0, B.Q5_0_BYTES], [GgmlType.Q8_0, B.Q8_0_BYTES]] as const) {
    const x = gaussian(256, 1, 99);
    // Make the extreme value of every block the most negative level, so d is recovered exactly.
    for (let b = 0; b < 8; b++) x[32 * b + 5] = -4;
    if (type === GgmlType.Q8_0) for (let b = 0; b < 8; b++) x[32 * b + 5] = 4;
    const [q1, o1] = quant(type, x);
    const y = new Float32Array(256);
    dequantizeRow(type, q1, o1, y, 0, 256);
    const [q2, o2] = quant(type, y);
    assert.deepEqual(q2.subarray(o2, o2 + 8 * bytes), q1.subarray(o1, o1 + 8 * bytes), ggmlTypeName(type));
  }
});

test('offsets, errors, isQuantizableType', () => {
  const x = gaussian(64 + 7, 1, 3);
  const a = new Uint8Array(rowBytes(GgmlType.Q8_0, 64));
  quantizeRow(GgmlType.Q8_0, x, 7, a, 0, 64);
  const b = new Uint8Array(rowBytes(GgmlType.Q8_0, 64));
  quantizeRow(GgmlType.Q8_0, x.slice(7), 0, b, 0, 64);
  assert.deepEqual(a, b);
  assert.ok(isQuantizableType(GgmlType.Q4_K));
  assert.ok(isQuantizableType(GgmlType.IQ4_XS));
  assert.ok(!isQuantizableType(GgmlType.IQ2_XXS));
  assert.throws(() => quantizeRow(GgmlType.IQ2_XS, x, 0, a, 0, 256), /unsupported ggml type IQ2_XS/);
  assert.throws(() => quantizeRow(GgmlType.Q4_K, x, 0, a, 0, 64), /multiple of the block size 256/);
});

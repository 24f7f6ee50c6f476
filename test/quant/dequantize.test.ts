// Hand-built blocks with known values: the bytes are written out here from the block layouts,
// and the expected floats are worked out by hand (not by another decoder).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GgmlType, ggmlTypeInfo } from '../../src/gguf/ggml-types.js';
import { dequantizeRow, isSupportedType } from '../../src/quant/dequantize.js';
import * as B from '../../src/quant/blocks.js';

const H_HALF = 0x3800; // f16 0.5
const H_ONE = 0x3c00; // f16 1
const H_TWO = 0x4000; // f16 2
const H_QUARTER = 0x3400; // f16 0.25

function u16(b: Uint8Array, o: number, v: number): void { b[o] = v & 0xff; b[o + 1] = v >> 8; }

/** Decode `n` values from `block` placed at an odd offset inside a larger buffer (unaligned). */
function decode(type: number, block: Uint8Array, n: number): Float32Array {
  const buf = new Uint8Array(block.length + 7);
  buf.set(block, 3);
  const out = new Float32Array(n + 2).fill(NaN);
  dequantizeRow(type, buf, 3, out, 1, n);
  assert.ok(Number.isNaN(out[0]!) && Number.isNaN(out[n + 1]!), 'wrote outside [dstOffset, dstOffset+n)');
  return out.subarray(1, n + 1);
}

test('block byte sizes agree with the ggml type table', () => {
  const sizes: [number, number, number][] = [
    [GgmlType.Q4_0, B.Q4_0_BYTES, 32], [GgmlType.Q4_1, B.Q4_1_BYTES, 32], [GgmlType.Q5_0, B.Q5_0_BYTES, 32],
    [GgmlType.Q5_1, B.Q5_1_BYTES, 32], [GgmlType.Q8_0, B.Q8_0_BYTES, 32], [GgmlType.Q8_1, B.Q8_1_BYTES, 32],
    [GgmlType.IQ4_NL, B.IQ4_NL_BYTES, 32], [GgmlType.Q2_K, B.Q2_K_BYTES, 256], [GgmlType.Q3_K, B.Q3_K_BYTES, 256],
    [GgmlType.Q4_K, B.Q4_K_BYTES, 256], [GgmlType.Q5_K, B.Q5_K_BYTES, 256], [GgmlType.Q6_K, B.Q6_K_BYTES, 256],
    [GgmlType.Q8_K, B.Q8_K_BYTES, 256], [GgmlType.IQ4_XS, B.IQ4_XS_BYTES, 256],
  ];
  for (const [t, bytes, bs] of sizes) {
    assert.equal(ggmlTypeInfo(t)!.typeSize, bytes, ggmlTypeInfo(t)!.name);
    assert.equal(ggmlTypeInfo(t)!.blockSize, bs, ggmlTypeInfo(t)!.name);
  }
});

test('isSupportedType and errors', () => {
  for (const t of [0, 1, 30, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 20, 23]) assert.ok(isSupportedType(t), String(t));
  for (const t of [16, 17, 18, 19, 21, 22, 24, 29, 34, 39, 999]) assert.ok(!isSupportedType(t), String(t));
  assert.throws(() => dequantizeRow(GgmlType.IQ2_XXS, new Uint8Array(66), 0, new Float32Array(256), 0, 256), /unsupported ggml type IQ2_XXS/);
  assert.throws(() => dequantizeRow(GgmlType.Q4_0, new Uint8Array(18), 0, new Float32Array(32), 0, 31), /multiple of the block size 32/);
});

test('F32 at an unaligned offset, F16, BF16', () => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setFloat32(0, 1.5, true);
  new DataView(b.buffer).setFloat32(4, -2.25, true);
  assert.deepEqual([...decode(GgmlType.F32, b, 2)], [1.5, -2.25]);
  const h = new Uint8Array(6);
  u16(h, 0, H_HALF); u16(h, 2, 0xc000); u16(h, 4, 0x0001);
  assert.deepEqual([...decode(GgmlType.F16, h, 3)], [0.5, -2, 2 ** -24]);
  const bf = new Uint8Array(4);
  u16(bf, 0, 0x3f80); u16(bf, 2, 0xc0a0);
  assert.deepEqual([...decode(GgmlType.BF16, bf, 2)], [1, -5]);
});

test('Q4_0: d=0.5, value j = (nibble - 8) * d, low nibbles first', () => {
  const b = new Uint8Array(18);
  u16(b, 0, H_HALF);
  for (let j = 0; j < 16; j++) b[2 + j] = j | ((15 - j) << 4);
  const y = decode(GgmlType.Q4_0, b, 32);
  for (let j = 0; j < 16; j++) {
    assert.equal(y[j], (j - 8) * 0.5);
    assert.equal(y[16 + j], (7 - j) * 0.5);
  }
  assert.equal(y[0], -4);
  assert.equal(y[31], -4);
});

test('Q4_1: value = nibble * d + m', () => {
  const b = new Uint8Array(20);
  u16(b, 0, H_QUARTER); u16(b, 2, 0xbc00); // d = 0.25, m = -1
  for (let j = 0; j < 16; j++) b[4 + j] = 15 | (j << 4);
  const y = decode(GgmlType.Q4_1, b, 32);
  for (let j = 0; j < 16; j++) {
    assert.equal(y[j], 15 * 0.25 - 1);
    assert.equal(y[16 + j], j * 0.25 - 1);
  }
});

test('Q5_0: 5th bit from qh (bit j for value j, bit 16+j for value 16+j)', () => {
  const b = new Uint8Array(22);
  u16(b, 0, H_ONE);
  // qh: set bit 0 (value 0) and bit 17 (value 17).
  b[2] = 0x01; b[4] = 0x02;
  b[6] = 0x3f; // value 0: nibble 15 | 16 -> 31 - 16 = 15; value 16: nibble 3, no high bit -> 3 - 16
  b[7] = 0x50; // value 1: nibble 0 -> -16; value 17: nibble 5 | 16 -> 21 - 16 = 5
  const y = decode(GgmlType.Q5_0, b, 32);
  assert.equal(y[0], 15);
  assert.equal(y[16], -13);
  assert.equal(y[1], -16);
  assert.equal(y[17], 5);
  assert.equal(y[2], -16); // zero bytes: nibble 0, no high bit
});

test('Q5_1: 5th bit and min', () => {
  const b = new Uint8Array(24);
  u16(b, 0, H_HALF); u16(b, 2, H_TWO); // d 0.5, m 2
  b[4 + 3] = 0x80; // qh bit 31 -> value 31
  b[8 + 15] = 0xf1; // value 15: 1; value 31: 15 | 16 = 31
  const y = decode(GgmlType.Q5_1, b, 32);
  assert.equal(y[15], 1 * 0.5 + 2);
  assert.equal(y[31], 31 * 0.5 + 2);
  assert.equal(y[0], 2);
});

test('Q8_0 and Q8_1: signed bytes times d', () => {
  const b = new Uint8Array(34);
  u16(b, 0, H_QUARTER);
  for (let j = 0; j < 32; j++) b[2 + j] = (j * 8 - 128) & 0xff;
  const y = decode(GgmlType.Q8_0, b, 32);
  for (let j = 0; j < 32; j++) assert.equal(y[j], (j * 8 - 128) * 0.25);
  const c = new Uint8Array(36);
  u16(c, 0, H_TWO); u16(c, 2, 0x7bff);
  c[4] = 0xff; c[35] = 127;
  const z = decode(GgmlType.Q8_1, c, 32);
  assert.equal(z[0], -2);
  assert.equal(z[31], 254);
});

test('IQ4_NL: nibbles index the non-linear table', () => {
  const b = new Uint8Array(18);
  u16(b, 0, H_HALF);
  for (let j = 0; j < 16; j++) b[2 + j] = j | (j << 4);
  const y = decode(GgmlType.IQ4_NL, b, 32);
  const kv = [-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113];
  for (let j = 0; j < 16; j++) { assert.equal(y[j], kv[j]! * 0.5); assert.equal(y[16 + j], kv[j]! * 0.5); }
});

test('Q2_K: 2-bit levels with 4-bit scale and min per 16 values', () => {
  const b = new Uint8Array(84);
  u16(b, B.Q2K_D, H_HALF); u16(b, B.Q2K_DMIN, H_QUARTER);
  b[B.Q2K_SCALES + 0] = 0x32; // group 0 (values 0..15): scale 2, min 3
  b[B.Q2K_SCALES + 1] = 0x01; // group 1 (values 16..31): scale 1, min 0
  b[B.Q2K_SCALES + 2] = 0x14; // group 2 (values 32..47, bits 2-3 of bytes 0..15): scale 4, min 1
  b[B.Q2K_SCALES + 9] = 0x0f; // group 9 (values 144..159: 2nd half, bits 0-1 of bytes 48..63): scale 15
  b[B.Q2K_QS + 0] = 0b00_00_10_11; // value 0 -> 3, value 32 -> 2
  b[B.Q2K_QS + 17] = 0b01; // value 17 -> 1
  b[B.Q2K_QS + 32 + 16] = 0b11; // value 144 -> 3
  const y = decode(GgmlType.Q2_K, b, 256);
  assert.equal(y[0], 0.5 * 2 * 3 - 0.25 * 3);
  assert.equal(y[1], -0.75);
  assert.equal(y[17], 0.5);
  assert.equal(y[32], 0.5 * 4 * 2 - 0.25);
  assert.equal(y[144], 0.5 * 15 * 3);
  assert.equal(y[255], 0);
});

test('Q3_K: 6-bit signed scales, 2 low bits + hmask bit (clear = minus 4)', () => {
  const b = new Uint8Array(110);
  u16(b, B.Q3K_D, H_HALF);
  // All 16 scales = 32 (i.e. 0 after bias) except: scale 0 = 33 (+1), scale 9 = 32-3 (-3), scale 15 = 63 (+31).
  // Packing: low nibbles in bytes 0..7 (j<8 low, j>=8 high), top bits in bytes 8..11 at 2*(j/4).
  const sc = new Array<number>(16).fill(32);
  sc[0] = 33; sc[9] = 29; sc[15] = 63;
  for (let j = 0; j < 16; j++) {
    const lo = sc[j]! & 0xf, hi = sc[j]! >> 4;
    if (j < 8) b[B.Q3K_SCALES + j] |= lo; else b[B.Q3K_SCALES + j - 8] |= lo << 4;
    b[B.Q3K_SCALES + 8 + (j % 4)] |= hi << (2 * Math.floor(j / 4));
  }
  // Value 0: low bits 3, hmask bit set -> 3; value 1: low bits 1, hmask clear -> 1 - 4 = -3.
  b[B.Q3K_QS + 0] = 3; b[B.Q3K_QS + 1] = 1;
  b[B.Q3K_HMASK + 0] = 0x01;
  // Value 144 = 2nd half, group 4 (bit 4 of hmask), position 16 -> group of scale 9:
  // low bits from qs[32 + 16] bits 0-1 = 2, hmask[16] bit 4 set -> 2.
  b[B.Q3K_QS + 32 + 16] = 2; b[B.Q3K_HMASK + 16] = 0x10;
  // Value 255: group 7 (bits 6-7 of qs[32+31], hmask bit 7), scale 15: low 0, hmask clear -> -4.
  const y = decode(GgmlType.Q3_K, b, 256);
  assert.equal(y[0], 0.5 * 1 * 3);
  assert.equal(y[1], 0.5 * 1 * -3);
  assert.equal(y[144], 0.5 * -3 * 2);
  assert.equal(y[255], 0.5 * 31 * -4);
  assert.ok(Object.is(y[100], -0)); // scale 0 (after bias) times level -4: ggml's float gives -0 too
});

/** Pack 8 (scale, min) 6-bit pairs as Q4_K/Q5_K do. */
function packScaleMin(b: Uint8Array, o: number, sc: number[], mn: number[]): void {
  for (let j = 0; j < 8; j++) {
    if (j < 4) { b[o + j] = sc[j]!; b[o + j + 4] = mn[j]!; }
    else {
      b[o + j + 4] = (sc[j]! & 0xf) | ((mn[j]! & 0xf) << 4);
      b[o + j - 4] |= (sc[j]! >> 4) << 6;
      b[o + j] |= (mn[j]! >> 4) << 6;
    }
  }
}

test('Q4_K: 6-bit scale/min pairs per 32 values (both packings), nibbles by 64-chunks', () => {
  const b = new Uint8Array(144);
  u16(b, B.Q4K_D, H_HALF); u16(b, B.Q4K_DMIN, H_QUARTER);
  const sc = [1, 2, 3, 63, 40, 5, 17, 48];
  const mn = [0, 1, 63, 2, 33, 0, 50, 7];
  packScaleMin(b, B.Q4K_SCALES, sc, mn);
  for (let c = 0; c < 4; c++) for (let l = 0; l < 32; l++) b[B.Q4K_QS + 32 * c + l] = ((l + c) & 0xf) | (((l * 3 + c) & 0xf) << 4);
  const y = decode(GgmlType.Q4_K, b, 256);
  for (let k = 0; k < 256; k++) {
    const c = k >> 6, hiNib = (k >> 5) & 1, l = k & 31, g = k >> 5;
    const q = hiNib ? (l * 3 + c) & 0xf : (l + c) & 0xf;
    assert.equal(y[k], 0.5 * sc[g]! * q - 0.25 * mn[g]!, `value ${k}`);
  }
});

test('Q5_K: as Q4_K plus a 5th bit per value from qh', () => {
  const b = new Uint8Array(176);
  u16(b, B.Q5K_D, H_QUARTER); u16(b, B.Q5K_DMIN, H_HALF);
  const sc = [10, 20, 30, 40, 50, 60, 61, 62];
  const mn = [1, 2, 3, 4, 5, 6, 7, 63];
  packScaleMin(b, B.Q5K_SCALES, sc, mn);
  for (let l = 0; l < 32; l++) b[B.Q5K_QH + l] = (l * 37) & 0xff;
  for (let c = 0; c < 4; c++) for (let l = 0; l < 32; l++) b[B.Q5K_QS + 32 * c + l] = ((l ^ c) & 0xf) | (((l + 5 * c) & 0xf) << 4);
  const y = decode(GgmlType.Q5_K, b, 256);
  for (let k = 0; k < 256; k++) {
    const c = k >> 6, hiNib = (k >> 5) & 1, l = k & 31, g = k >> 5;
    const lowBits = hiNib ? (l + 5 * c) & 0xf : (l ^ c) & 0xf;
    const high = ((l * 37) & 0xff) >> g & 1;
    assert.equal(y[k], 0.25 * sc[g]! * (lowBits + 16 * high) - 0.5 * mn[g]!, `value ${k}`);
  }
});

test('Q6_K: 4+2 bit levels minus 32, int8 scale per 16 values, subnormal d', () => {
  const b = new Uint8Array(210);
  u16(b, B.Q6K_D, 0x0001); // d = 2^-24, a subnormal half (common in real Q6_K files)
  for (let j = 0; j < 16; j++) b[B.Q6K_SCALES + j] = (j * 17 - 128) & 0xff;
  // Value 0: ql[0] low nibble 5, qh[0] bits 0-1 = 2 -> 5 | 32 = 37 - 32 = 5.
  // Value 64: ql[0] high nibble 0xA, qh[0] bits 4-5 = 3 -> 10 | 48 = 58 - 32 = 26.
  // Value 32: ql[32] low 0, qh[0] bits 2-3 = 0 -> -32.  Value 96: ql[32] high 0xF, qh bits 6-7 = 1 -> 31 - 32 = -1.
  b[B.Q6K_QL + 0] = 0xa5; b[B.Q6K_QL + 32] = 0xf0; b[B.Q6K_QH + 0] = 0b01_11_00_10;
  // Value 200 = 2nd half, position 72 = quarter 2 (high nibble of ql[64 + 8]), qh[32 + 8] bits 4-5.
  b[B.Q6K_QL + 64 + 8] = 0x70; b[B.Q6K_QH + 32 + 8] = 0b00_01_00_00;
  const y = decode(GgmlType.Q6_K, b, 256);
  const sc = (g: number) => g * 17 - 128;
  const d = 2 ** -24;
  assert.equal(y[0], Math.fround(d * sc(0) * 5));
  assert.equal(y[64], Math.fround(d * sc(4) * 26));
  assert.equal(y[32], Math.fround(d * sc(2) * -32));
  assert.equal(y[96], Math.fround(d * sc(6) * -1));
  assert.equal(y[200], Math.fround(d * sc(12) * (7 + 16 - 32)));
  assert.equal(y[1], Math.fround(d * sc(0) * -32)); // all-zero bits decode to -32
});

test('Q8_K: f32 scale (unaligned) times int8', () => {
  const b = new Uint8Array(292);
  new DataView(b.buffer).setFloat32(B.Q8K_D, 0.1, true);
  b[B.Q8K_QS] = 0x81; b[B.Q8K_QS + 255] = 100;
  const y = decode(GgmlType.Q8_K, b, 256);
  assert.equal(y[0], Math.fround(Math.fround(0.1) * -127));
  assert.equal(y[255], Math.fround(Math.fround(0.1) * 100));
  assert.equal(y[1], 0);
});

test('IQ4_XS: 6-bit scales (bias 32) from scales_l/scales_h, IQ4_NL levels', () => {
  const b = new Uint8Array(136);
  u16(b, B.IQ4XS_D, H_HALF);
  // sub-block 0 scale 33 (+1): low nibble 1, high bits 2; sub-block 7 scale 0 (-32): all zero bits.
  // sub-block 3 scale 47 (+15): low 0xf, high 2.
  b[B.IQ4XS_SCALES_L + 0] = 0x01; b[B.IQ4XS_SCALES_L + 1] = 0xf0;
  u16(b, B.IQ4XS_SCALES_H, (2 << 0) | (2 << 6));
  b[B.IQ4XS_QS + 0] = 0xf0; // value 0: level 0 (-127), value 16: level 15 (113)
  b[B.IQ4XS_QS + 16 * 3 + 1] = 0x08; // sub-block 3, value 97: level 8 (1)
  b[B.IQ4XS_QS + 16 * 7 + 15] = 0xff; // sub-block 7, values 239 and 255: level 15
  const y = decode(GgmlType.IQ4_XS, b, 256);
  assert.equal(y[0], 0.5 * 1 * -127);
  assert.equal(y[16], 0.5 * 1 * 113);
  assert.equal(y[97], 0.5 * 15 * 1);
  assert.equal(y[255], 0.5 * -32 * 113);
  assert.equal(y[239], 0.5 * -32 * 113);
  assert.equal(y[32], 0.5 * (0 - 32) * -127); // sub-block 1: scale bits all zero -> -32, level 0
});

test('multi-block rows decode each block in sequence', () => {
  const b = new Uint8Array(36);
  u16(b, 0, H_ONE); u16(b, 18, H_TWO);
  b.fill(0x99, 2, 18); b.fill(0x11, 20, 36);
  const y = decode(GgmlType.Q4_0, b, 64);
  assert.equal(y[0], 1);
  assert.equal(y[31], 1);
  assert.equal(y[32], -14);
  assert.equal(y[63], -14);
});

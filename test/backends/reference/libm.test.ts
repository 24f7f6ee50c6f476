// The libm functions the reference backend reproduces (src/backends/reference/libm.ts) against
// values recorded from glibc 2.36 on x86-64 with FMA (the sinf/cosf FMA build, fdlibm tanhf).
// Most vectors are arguments where glibc is NOT correctly rounded, so a plain Math.cos/Math.tanh
// rounded to f32 fails them; the RoPE ones are angles the parity fixtures use.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cosf, expm1f, sinf, tanhf } from '../../../src/backends/reference/libm.js';
import { fmaf } from '../../../src/quant/rounding.js';

const b = new Uint32Array(1);
const fl = new Float32Array(b.buffer);
const fromBits = (u: number) => { b[0] = u; return fl[0]!; };
const bitsOf = (x: number) => { fl[0] = x; return b[0]!; };
const hex = (u: number) => '0x' + u.toString(16).padStart(8, '0');

// [x, cosf(x), sinf(x)] bits
const SINCOS: [number, number, number][] = [
  [0x3f888d77, 0x3ef74079, 0x3f602bc6], [0x3eacba15, 0x3f7191ea, 0x3ea9781a], [0x3e26fe29, 0x3f7c9a79, 0x3e2640ed],
  [0x41d7f833, 0xbe93b579, 0x3f751d86], [0x3e65e904, 0x3f799318, 0x3e63fbc4], [0x408c5c43, 0xbea40859, 0xbf7281a0],
  [0x3f599996, 0x3f28f4ab, 0x3f4053e7], [0x3f047150, 0x3f5e7f5c, 0x3efd39df], [0x3ec6a2cb, 0x3f6cf986, 0x3ec1b0bd],
  [0x41a0c1a6, 0x3ea3df78, 0x3f728888], [0x3f22ac8f, 0x3f4e07db, 0x3f17f1fc], [0x3e4dc4aa, 0x3f7ad94e, 0x3e4c62e0],
  // |x| >= 120: the large-argument reduction
  [0x42f00000, 0x3f506e2a, 0x3f14a2ef], [0x43030000, 0x3f158eb5, 0xbf4fc53d], [0x43480000, 0x3ef970aa, 0xbf5f9069],
  [0x437f0000, 0xbf5cbfee, 0xbf01a2e2], [0x447a2000, 0x3dc6dffc, 0x3f7eca46], [0xc4425000, 0xbe94753a, 0x3f75008e],
];
// [x, tanhf(x)] bits
const TANH: [number, number][] = [
  [0x3b727bb3, 0x3b727b6b], [0x3f0d21ff, 0x3f0061e8], [0xbf7645a2, 0xbf3ec34e], [0x3ca3d70a, 0x3ca3d173],
  [0xbecccccd, 0xbec288ac], [0x3f666666, 0x3f375f4c], [0x3fd9999a, 0x3f6f76f8], [0xc0533333, 0xbf7f4df0],
  [0x41080000, 0x3f7fffff], [0x41c80000, 0x3f800000],
];

test('cosf/sinf equal glibc (x86-64 FMA build) bit for bit', () => {
  for (const [x, c, s] of SINCOS) {
    assert.equal(hex(bitsOf(cosf(fromBits(x)))), hex(c), `cosf(${fromBits(x)})`);
    assert.equal(hex(bitsOf(sinf(fromBits(x)))), hex(s), `sinf(${fromBits(x)})`);
  }
  assert.equal(cosf(0), 1);
  assert.equal(sinf(0), 0);
  assert.ok(Number.isNaN(cosf(Infinity)));
});

test('tanhf equals glibc 2.36 (fdlibm) bit for bit', () => {
  for (const [x, t] of TANH) assert.equal(hex(bitsOf(tanhf(fromBits(x)))), hex(t), `tanhf(${fromBits(x)})`);
  assert.equal(tanhf(0), 0);
  assert.equal(tanhf(-Infinity), -1);
  assert.equal(expm1f(0), 0);
});

test('fmaf rounds once', () => {
  // 1 + 2^-24 is halfway between 1 and 1 + 2^-23; the tiny third term decides the direction
  const a = Math.fround(1 + 2 ** -12), tiny = 2 ** -60;
  // a*a = 1 + 2^-11 + 2^-24 exactly; + tiny must round up, not to even
  assert.equal(fmaf(a, a, tiny), Math.fround(1 + 2 ** -11 + 2 ** -23));
  assert.equal(fmaf(a, a, -tiny), Math.fround(1 + 2 ** -11));
  assert.equal(fmaf(2, 3, 4), 10);
});

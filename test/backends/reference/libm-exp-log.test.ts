// glibc's expf and logf as the reference backend reproduces them (src/backends/reference/libm.ts: the x86-64
// FMA builds), against values recorded from glibc 2.36 on x86-64 (ctypes, libm.so.6). The first 16 of each
// are arguments where glibc is NOT correctly rounded (Math.exp/Math.log rounded to f32 give another value),
// then special and boundary cases. ggml's sigmoid, softplus and the Gated DeltaNet decay call them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expf, logf } from '../../../src/backends/reference/libm.js';
import { sigmoid, softplus } from '../../../src/backends/reference/ops.js';

const b = new Uint32Array(1);
const fl = new Float32Array(b.buffer);
const fromBits = (u: number) => { b[0] = u; return fl[0]!; };
const bitsOf = (x: number) => { fl[0] = x; return b[0]!; };
const hex = (u: number) => '0x' + u.toString(16).padStart(8, '0');

// [x, expf(x)] bits
const EXP: [number, number][] = [
  [0xc0ca9121, 0x3ae98639], [0x41140c77, 0x4623111c], [0xc16961c4, 0x34f85d75], [0xc0cf7058, 0x3ac88b80], [0xc18362d3, 0x339e455f],
  [0x3fdcbfd0, 0x40b3878e], [0x41868934, 0x4b9977cb], [0xc19358de, 0x322c313c], [0xc12cc40a, 0x37ab7d66], [0x415e086b, 0x4981d1b0],
  [0x412f3479, 0x475e8bbe], [0x3eca7879, 0x3fbe1637], [0x4198c0a1, 0x4d3b003b], [0x4006fb41, 0x4103d9e9], [0x41013339, 0x4548d253],
  [0x410fb822, 0x45f8d133],
  [0x00000000, 0x3f800000], [0xbfc00000, 0x3e647c3c], [0x42af0000, 0x7e96bab3], [0xc2ce0000, 0x00000001], [0x3a83126f, 0x3f8020c9],
];
// [x, logf(x)] bits
const LOG: [number, number][] = [
  [0x3f8affa3, 0x3da8d2df], [0x3fa1636f, 0x3e6d58b5], [0x3fa3b2c1, 0x3e7be600], [0x3f89392c, 0x3d8e7fae], [0x3f88b1f5, 0x3d8699c3],
  [0x3f8b6da5, 0x3daf2539], [0x3f82192e, 0x3c8534bf], [0x3f82a538, 0x3ca79434], [0x3f84742f, 0x3d0c1973], [0x3fd0929c, 0x3ef9fcdf],
  [0x3f824c2e, 0x3c91bda5], [0x3f8aca02, 0x3da5bc1c], [0x3f93c768, 0x3e1322bb], [0x3f8ad52e, 0x3da660f0], [0x3f80f1bd, 0x3bf0d9d9],
  [0x3f83fbff, 0x3cfb1c58],
  [0x3f800000, 0x00000000], [0x3f000000, 0xbf317218], [0x40000000, 0x3f317218], [0x000116c2, 0xc2b834f2], [0x477fe000, 0x41317018],
];

test('expf: glibc 2.36 bit for bit, including its 16 recorded misroundings', () => {
  for (const [x, want] of EXP) assert.equal(hex(bitsOf(expf(fromBits(x)))), hex(want), `expf(${fromBits(x)})`);
  assert.ok(EXP.slice(0, 16).every(([x, want]) => bitsOf(Math.fround(Math.exp(fromBits(x)))) !== want), 'the vectors discriminate');
  assert.equal(expf(-Infinity), 0);
  assert.equal(expf(Infinity), Infinity);
  assert.equal(expf(89), Infinity);
  assert.equal(expf(-104), 0);
  assert.ok(Number.isNaN(expf(NaN)));
});

test('logf: glibc 2.36 bit for bit, including its 16 recorded misroundings and a subnormal', () => {
  for (const [x, want] of LOG) assert.equal(hex(bitsOf(logf(fromBits(x)))), hex(want), `logf(${fromBits(x)})`);
  assert.ok(LOG.slice(0, 16).every(([x, want]) => bitsOf(Math.fround(Math.log(fromBits(x)))) !== want), 'the vectors discriminate');
  assert.equal(logf(0), -Infinity);
  assert.equal(logf(Infinity), Infinity);
  assert.ok(Number.isNaN(logf(-1)));
});

test('sigmoid and softplus as ggml composes them from expf/logf (f32 steps), softplus passing x > 20 through', () => {
  const x = Float32Array.from([-30, -3.5, -0.25, 0, 0.75, 4, 19.5, 20, 20.5, 60]);
  const s = new Float32Array(x.length), p = new Float32Array(x.length);
  sigmoid(x, x.length, s);
  softplus(x, x.length, p);
  for (let i = 0; i < x.length; i++) {
    assert.equal(s[i], Math.fround(1 / Math.fround(1 + expf(-x[i]!))));
    assert.equal(p[i], x[i]! > 20 ? x[i] : logf(Math.fround(1 + expf(x[i]!))));
    assert.ok(Math.abs(s[i]! - 1 / (1 + Math.exp(-x[i]!))) < 1e-7);
    assert.ok(Math.abs(p[i]! - Math.log1p(Math.exp(x[i]!))) <= 2e-6 * Math.max(1, p[i]!));
  }
});

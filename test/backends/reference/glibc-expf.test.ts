// The allocation-free double fma behind glibc's expf port (src/backends/reference/glibc-expf.ts: Dekker
// product + round-to-odd sum) against exact integer arithmetic (fmaExact, BigInt), on random operands over
// the magnitudes expf feeds it and on the operands of expf's own FMA chain for inputs near f32 rounding
// boundaries (the inputs that take the exact path). glibcExpfInto must store exactly glibcExpf's value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fmaDouble, fmaExact, glibcExpf, glibcExpfInto } from '../../../src/backends/reference/glibc-expf.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
}

test('fmaDouble equals the exactly rounded a*b + c on 300,000 random operands', () => {
  const r = rng(7);
  let diffs = 0, first = '';
  for (let i = 0; i < 300000; i++) {
    const mag = (lo: number, hi: number) => (r() < 0.5 ? -1 : 1) * (1 + r()) * 2 ** Math.floor(lo + r() * (hi - lo));
    const a = mag(-30, 30), b = mag(-30, 30);
    // c near -a*b half the time: the cancellations where a separate multiply and add would be wrong
    const c = r() < 0.5 ? -(a * b) * (1 + (r() - 0.5) * 2 ** -Math.floor(r() * 50)) : mag(-60, 60);
    const got = fmaDouble(a, b, c), want = fmaExact(a, b, c);
    if (!Object.is(got, want)) { diffs++; first ||= `fma(${a}, ${b}, ${c}) = ${got}, exactly ${want}`; }
  }
  assert.equal(diffs, 0, first);
});

test('glibcExpfInto stores glibcExpf(x) for 200,000 floats in [-104, 0]', () => {
  const r = rng(11);
  const y = new Float32Array(1);
  let diffs = 0, first = '';
  for (let i = 0; i < 200000; i++) {
    const x = Math.fround(-104 * r());
    glibcExpfInto(x, y, 0);
    const want = glibcExpf(x);
    if (y[0] !== want) { diffs++; first ||= `expf(${x}): ${y[0]} vs ${want}`; }
  }
  assert.equal(diffs, 0, first);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { F16_TO_F32, bf16ToF32, f16ToF32, f32Bits, f32FromBits, f32ToBf16, f32ToF16, roundToF16 } from '../../src/quant/float16.js';

const hex = (v: number) => '0x' + v.toString(16).padStart(4, '0');

test('f16ToF32: known encodings', () => {
  assert.equal(f16ToF32(0x0000), 0);
  assert.ok(Object.is(f16ToF32(0x8000), -0));
  assert.equal(f16ToF32(0x3c00), 1);
  assert.equal(f16ToF32(0xc000), -2);
  assert.equal(f16ToF32(0x3800), 0.5);
  assert.equal(f16ToF32(0x3555), 0.333251953125);
  assert.equal(f16ToF32(0x7bff), 65504); // max
  assert.equal(f16ToF32(0x0400), 2 ** -14); // min normal
  assert.equal(f16ToF32(0x0001), 2 ** -24); // min subnormal
  assert.equal(f16ToF32(0x03ff), 1023 * 2 ** -24); // max subnormal
  assert.equal(f16ToF32(0x7c00), Infinity);
  assert.equal(f16ToF32(0xfc00), -Infinity);
  assert.ok(Number.isNaN(f16ToF32(0x7e00)));
  assert.ok(Number.isNaN(f16ToF32(0xfc01)));
});

test('F16_TO_F32 table matches f16ToF32 for all 65536 patterns', () => {
  assert.equal(F16_TO_F32.length, 65536);
  for (let h = 0; h < 65536; h++) {
    const a = F16_TO_F32[h]!, b = f16ToF32(h);
    if (Number.isNaN(b)) assert.ok(Number.isNaN(a), hex(h));
    else assert.ok(Object.is(a, b), hex(h));
  }
});

test('f32ToF16 round-trips every non-NaN half exactly', () => {
  for (let h = 0; h < 65536; h++) {
    if ((h & 0x7c00) === 0x7c00 && (h & 0x3ff) !== 0) continue;
    assert.equal(f32ToF16(f16ToF32(h)), h, hex(h));
  }
});

test('f32ToF16: rounding, ties to even, overflow, subnormals, NaN', () => {
  // 1 + 2^-11 is halfway between 1 (even mantissa) and 1 + 2^-10: ties to even -> 1.
  assert.equal(f32ToF16(1 + 2 ** -11), 0x3c00);
  // 1 + 3*2^-11 is halfway between 0x3c01 (odd) and 0x3c02 (even) -> 0x3c02.
  assert.equal(f32ToF16(1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(f32ToF16(1 + 2 ** -11 + 2 ** -20), 0x3c01); // just above the tie
  assert.equal(f32ToF16(65504), 0x7bff);
  assert.equal(f32ToF16(65519.99), 0x7bff); // below the midpoint to "65536"
  assert.equal(f32ToF16(65520), 0x7c00); // midpoint, ties to even -> inf
  assert.equal(f32ToF16(1e6), 0x7c00);
  assert.equal(f32ToF16(-1e6), 0xfc00);
  assert.equal(f32ToF16(Infinity), 0x7c00);
  assert.equal(f32ToF16(-Infinity), 0xfc00);
  assert.equal(f32ToF16(NaN), 0x7e00);
  assert.equal(f32ToF16(f32FromBits(0xffc00001)), 0xfe00); // negative NaN keeps its sign
  assert.equal(f32ToF16(0), 0x0000);
  assert.equal(f32ToF16(-0), 0x8000);
  // Subnormal halves (unit 2^-24).
  assert.equal(f32ToF16(2 ** -24), 0x0001);
  assert.equal(f32ToF16(2 ** -25), 0x0000); // tie between 0 and 1 -> even (0)
  assert.equal(f32ToF16(2 ** -25 * 1.0000001), 0x0001);
  assert.equal(f32ToF16(3 * 2 ** -25), 0x0002); // tie between 1 and 2 -> 2
  assert.equal(f32ToF16(5 * 2 ** -25), 0x0002); // tie between 2 and 3 -> 2
  assert.equal(f32ToF16(-3 * 2 ** -25), 0x8002);
  assert.equal(f32ToF16(1023.5 * 2 ** -24), 0x0400); // max subnormal + half ulp -> min normal (even)
  assert.equal(f32ToF16(2 ** -26), 0x0000);
  assert.equal(f32ToF16(1e-30), 0x0000);
  assert.equal(f32ToF16(f32FromBits(0x00000001)), 0x0000); // f32 subnormal
  // The input is an f32: a double just above a tie first rounds to the f32 tie.
  assert.equal(f32ToF16(1 + 2 ** -11 + 2 ** -40), 0x3c00);
});

/** Independent oracle: nearest half by binary search over the sorted positive halves, ties to even. */
function nearestHalf(x: number): number {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  let lo = 0, hi = 0x7c00; // values of patterns 0..0x7c00 increase monotonically
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (f16ToF32(mid) <= a) lo = mid; else hi = mid;
  }
  const dl = a - f16ToF32(lo), dh = f16ToF32(hi) - a;
  // Beyond max the "next" value is 65536 (2^16), which is where rounding overflows to inf.
  const up = hi === 0x7c00 ? 65536 - a : dh;
  let h: number;
  if (dl < up) h = lo; else if (up < dl) h = hi; else h = (lo & 1) === 0 ? lo : hi;
  return sign | h;
}

test('f32ToF16 agrees with a brute-force nearest-half oracle on random f32 patterns', () => {
  let s = 12345;
  const next = () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0);
  for (let k = 0; k < 20000; k++) {
    // Exponents concentrated in and around half's range, random mantissas and signs.
    const exp = 103 + (next() % 42); // 2^-24 .. 2^17
    const bits = ((next() & 1) << 31) | (exp << 23) | (next() & 0x7fffff);
    const x = f32FromBits(bits >>> 0);
    assert.equal(f32ToF16(x), nearestHalf(x), `x=${x} bits=${(bits >>> 0).toString(16)}`);
  }
});

test('roundToF16 is f32 -> f16 -> f32', () => {
  assert.equal(roundToF16(0.1), 0.0999755859375);
  assert.equal(roundToF16(1 + 2 ** -11), 1);
  assert.equal(roundToF16(70000), Infinity);
  assert.equal(roundToF16(2 ** -25), 0);
});

test('bf16: decode, round to nearest even, NaN quieting, no subnormal flush', () => {
  assert.equal(bf16ToF32(0x3f80), 1);
  assert.equal(bf16ToF32(0xc040), -3);
  assert.equal(bf16ToF32(0x7f80), Infinity);
  assert.equal(bf16ToF32(0x0001), f32FromBits(0x00010000));
  assert.equal(f32ToBf16(1), 0x3f80);
  assert.equal(f32ToBf16(f32FromBits(0x3f808000)), 0x3f80); // tie, even stays
  assert.equal(f32ToBf16(f32FromBits(0x3f818000)), 0x3f82); // tie, odd rounds up
  assert.equal(f32ToBf16(f32FromBits(0x3f808001)), 0x3f81); // above tie
  assert.equal(f32ToBf16(f32FromBits(0x3f807fff)), 0x3f80); // below tie
  assert.equal(f32ToBf16(f32FromBits(0x7f7fffff)), 0x7f80); // f32 max rounds to inf
  assert.equal(f32ToBf16(-Infinity), 0xff80);
  assert.equal(f32ToBf16(f32FromBits(0x00018000)), 0x0002); // subnormal kept, rounded
  assert.equal(f32ToBf16(f32FromBits(0x7f800001)), 0x7fc0); // signalling NaN made quiet (| 64)
  assert.equal(f32ToBf16(f32FromBits(0xffc12345)), 0xffc1); // NaN: truncated payload, quiet bit set
  assert.equal(f32ToBf16(-0), 0x8000);
  assert.equal(f32Bits(bf16ToF32(0xbf80)), 0xbf800000);
});

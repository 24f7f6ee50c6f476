// glibc's (fdlibm's) expm1f and tanhf, op by op in f32: the exact bits ggml's GGML_OP_TANH gets on x86,
// for gemma2's attention and final-logit softcaps. The same code as src/backends/reference/libm.ts (f32
// arithmetic here is what Math.fround of each double operation is there).

const LN2_HI: f32 = reinterpret<f32>(0x3f317180), LN2_LO: f32 = reinterpret<f32>(0x3717f7d1), INVLN2: f32 = reinterpret<f32>(0x3fb8aa3b);
const Q1: f32 = reinterpret<f32>(0xbd088889), Q2: f32 = reinterpret<f32>(0x3ad00d01), Q3: f32 = reinterpret<f32>(0xb8a670cd);
const Q4: f32 = reinterpret<f32>(0x36867e54), Q5: f32 = reinterpret<f32>(0xb457edbb);
const TINY: f32 = 1e-30;

/** fdlibm expm1f */
export function expm1f(xIn: f32): f32 {
  let x = xIn;
  let hx = reinterpret<u32>(x);
  const xsb = hx & 0x80000000;
  hx &= 0x7fffffff;
  if (hx >= 0x4195b844) {
    if (hx >= 0x42b17218) {
      if (hx > 0x7f800000) return x + x;
      if (hx == 0x7f800000) return xsb == 0 ? x : -1;
      if (x > reinterpret<f32>(0x42b17180)) return Infinity;
    }
    if (xsb != 0) return TINY - 1;
  }
  let hi: f32 = 0, lo: f32 = 0, k: i32 = 0, c: f32 = 0;
  if (hx > 0x3eb17218) {
    if (hx < 0x3f851592) {
      if (xsb == 0) { hi = x - LN2_HI; lo = LN2_LO; k = 1; } else { hi = x + LN2_HI; lo = -LN2_LO; k = -1; }
    } else {
      k = <i32>(INVLN2 * x + (xsb == 0 ? <f32>0.5 : <f32>-0.5));
      const t = <f32>k;
      hi = x - t * LN2_HI;
      lo = t * LN2_LO;
    }
    x = hi - lo;
    c = (hi - x) - lo;
  } else if (hx < 0x33000000) {
    return x;
  } else k = 0;
  const hfx: f32 = <f32>0.5 * x;
  const hxs: f32 = x * hfx;
  const r1: f32 = <f32>1 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
  let t: f32 = <f32>3 - r1 * hfx;
  let e: f32 = hxs * ((r1 - t) / (<f32>6 - x * t));
  if (k == 0) return x - (x * e - hxs);
  e = x * (e - c) - c;
  e = e - hxs;
  if (k == -1) return <f32>0.5 * (x - e) - <f32>0.5;
  if (k == 1) return x < <f32>-0.25 ? <f32>-2 * (e - (x + <f32>0.5)) : <f32>1 + <f32>2 * (x - e);
  let y: f32;
  if (k <= -2 || k > 56) {
    y = <f32>1 - (e - x);
    y = reinterpret<f32>(reinterpret<u32>(y) + (<u32>k << 23));
    return y - 1;
  }
  if (k < 23) {
    t = reinterpret<f32>(<u32>0x3f800000 - (<u32>0x1000000 >> <u32>k));
    y = t - (e - x);
  } else {
    t = reinterpret<f32>(<u32>(0x7f - k) << 23);
    y = x - (e + t);
    y = y + 1;
  }
  return reinterpret<f32>(reinterpret<u32>(y) + (<u32>k << 23));
}

/** glibc 2.36 tanhf (fdlibm) */
export function tanhf(x: f32): f32 {
  const jx = reinterpret<u32>(x);
  const ix = jx & 0x7fffffff;
  if (ix >= 0x7f800000) return isNaN(x) ? x : jx >> 31 ? <f32>-1 : <f32>1;
  let z: f32;
  if (ix < 0x41b00000) {
    if (ix == 0) return x;
    if (ix < 0x24000000) return x * (<f32>1 + x);
    if (ix >= 0x3f800000) {
      const t = expm1f(<f32>2 * Mathf.abs(x));
      z = <f32>1 - <f32>2 / (t + <f32>2);
    } else {
      const t = expm1f(<f32>-2 * Mathf.abs(x));
      z = -t / (t + <f32>2);
    }
  } else z = <f32>1 - TINY;
  return jx >> 31 ? -z : z;
}

// glibc's sinf/cosf (2.28+, Arm optimized-routines, the x86-64 FMA build glibc selects on AVX2 machines):
// reduction by pi/2 in double, then a double polynomial whose multiply-adds are fused. WebAssembly has no
// FMA: fma64 is exact products (Dekker) and TwoSum, as src/backends/reference/libm.ts does. ggml's rope
// cache calls them; the reference's TypeScript copy is checked bit for bit against glibc 2.36.
const SPLIT: f64 = 134217729; // 2^27 + 1
@inline function fma64(a: f64, b: f64, c: f64): f64 {
  const p = a * b;
  let t = SPLIT * a;
  const ah = t - (t - a), al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b), bl = b - bh;
  const pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  const s = p + c;
  const bb = s - p;
  const se = (p - (s - bb)) + (c - bb);
  return s + (se + pe);
}
const HPI_INV: f64 = reinterpret<f64>(0x41645F306DC9C883); // 2/pi * 2^24
const HPI: f64 = reinterpret<f64>(0x3FF921FB54442D18); // pi/2
const PI63: f64 = reinterpret<f64>(0x3C1921FB54442D18); // 2pi * 2^-64
const S1: f64 = reinterpret<f64>(0xBFC555545995A603), S2: f64 = reinterpret<f64>(0x3F81107605230BC4), S3: f64 = reinterpret<f64>(0xBF2994EB3774CF24);
const C1: f64 = reinterpret<f64>(0xBFDFFFFFFD0C621C), C2: f64 = reinterpret<f64>(0x3FA55553E1068F19);
const C3: f64 = reinterpret<f64>(0xBF56C087E89A359D), C4: f64 = reinterpret<f64>(0x3EF99343027BF8C3);

// 4/pi, 192 bits, as 24 overlapping 32-bit words (glibc's __inv_pio4)
@inline function invPio4(i: u32): u32 {
  switch (i) {
    case 0: return 0xa2; case 1: return 0xa2f9; case 2: return 0xa2f983; case 3: return 0xa2f9836e;
    case 4: return 0xf9836e4e; case 5: return 0x836e4e44; case 6: return 0x6e4e4415; case 7: return 0x4e441529;
    case 8: return 0x441529fc; case 9: return 0x1529fc27; case 10: return 0x29fc2757; case 11: return 0xfc2757d1;
    case 12: return 0x2757d1f5; case 13: return 0x57d1f534; case 14: return 0xd1f534dd; case 15: return 0xf534ddc0;
    case 16: return 0x34ddc0db; case 17: return 0xddc0db62; case 18: return 0xc0db6295; case 19: return 0xdb629599;
    case 20: return 0x6295993c; case 21: return 0x95993c43; case 22: return 0x993c4390; default: return 0x3c439041;
  }
}

/** sine polynomial for even n, cosine polynomial for odd n (neg: the negated cosine coefficients) */
@inline function sc_poly(x: f64, x2: f64, neg: bool, n: i32): f32 {
  if ((n & 1) == 0) {
    const x3 = x * x2;
    const s1 = fma64(x2, S3, S2);
    const x7 = x3 * x2;
    const s = fma64(x3, S1, x);
    return <f32>fma64(x7, s1, s);
  }
  const sg: f64 = neg ? -1 : 1;
  const x4 = x2 * x2;
  const c2 = fma64(x2, sg * C4, sg * C3);
  const c1 = fma64(x2, sg * C1, sg);
  const x6 = x4 * x2;
  const c = fma64(x4, sg * C2, c1);
  return <f32>fma64(x6, c2, c);
}

/** glibc sinf (cos = false) or cosf (cos = true) of y */
export function sincosf(y: f32, cos: bool): f32 {
  const bits = reinterpret<u32>(y);
  const top = (bits >> 20) & 0x7ff;
  let x: f64 = <f64>y;
  if (top < 0x3f4) { // |y| < pi/4
    if (top < 0x398) return cos ? 1 : y; // tiny
    return sc_poly(x, x * x, false, cos ? 1 : 0);
  }
  let n: i32, q: i32;
  if (top < 0x42f) { // |y| < 120
    const r = x * HPI_INV;
    n = (<i32>r + 0x800000) >> 24;
    x = fma64(-<f64>n, HPI, x);
    q = n;
  } else if (top < 0x7f8) {
    const arr = (bits >> 26) & 15, shift = (bits >> 23) & 7;
    const xi: u32 = ((bits & 0xffffff) | 0x800000) << shift;
    const r0: u64 = <u64>(xi * invPio4(arr));
    const r1: u64 = <u64>xi * <u64>invPio4(arr + 4);
    const r2: u64 = <u64>xi * <u64>invPio4(arr + 8);
    let r: u64 = (r2 >> 32) | (r0 << 32);
    r += r1;
    const nn: u64 = (r + (<u64>1 << 61)) >> 62;
    r -= nn << 62;
    n = <i32>nn;
    x = <f64><i64>r * PI63;
    q = n + <i32>(bits >> 31);
  } else return NaN;
  const qs = q & 3;
  const s: f64 = qs == 1 || qs == 2 ? -1 : 1;
  return sc_poly(x * s, x * x, (q & 2) != 0, cos ? n ^ 1 : n);
}

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

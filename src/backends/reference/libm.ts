// glibc's single-precision sinf/cosf, bit for bit, as llama.cpp's RoPE cache calls them (ggml's
// rope_yarn: cosf(theta), sinf(theta)). glibc (2.28 and later, from Arm's optimized-routines) is
// not correctly rounded: about 1% of results differ from the correctly rounded value in the last
// bit, and RoPE outputs feed f16 roundings (K cache, Q for K·Q) that amplify such a bit. This is
// the algorithm of the x86-64 FMA build glibc selects on AVX2 machines (__sinf_fma/__cosf_fma):
// reduction by pi/2 in double, then a double polynomial whose multiply-adds are fused.
// Written from the algorithm's published description and constants; checked bit for bit against
// glibc 2.36 on 200k arguments (both ranges of the reduction) and by test/backends/reference/libm.test.ts.

const f = Math.fround;

// f64 fused multiply-add a*b + c (Dekker product + TwoSum; faithful, exact except on ties).
const SPLIT = 134217729; // 2^27 + 1
function fma64(a: number, b: number, c: number): number {
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

interface SinCosTable { c0: number; c1: number; c2: number; c3: number; c4: number; s1: number; s2: number; s3: number }
const HPI_INV = 0x145f306dc9c883 * 2 ** -29; // 2/pi * 2^24 (0x1.45F306DC9C883p+23)
const HPI = 0x1921fb54442d18 * 2 ** -52; // pi/2 (0x1.921FB54442D18p0)
const PI63 = 0x1921fb54442d18 * 2 ** -114; // 2pi * 2^-64
const SIGN = [1, -1, -1, 1];
const S1 = -0x1555545995a603 * 2 ** -55, S2 = 0x11107605230bc4 * 2 ** -59, S3 = -0x1994eb3774cf24 * 2 ** -65;
const C1 = -0x1ffffffd0c621c * 2 ** -54, C2 = 0x155553e1068f19 * 2 ** -57, C3 = -0x16c087e89a359d * 2 ** -62, C4 = 0x199343027bf8c3 * 2 ** -68;
// the second entry computes -cos to get a quadrant's negation for free
const TABLE: SinCosTable[] = [
  { c0: 1, c1: C1, c2: C2, c3: C3, c4: C4, s1: S1, s2: S2, s3: S3 },
  { c0: -1, c1: -C1, c2: -C2, c3: -C3, c4: -C4, s1: S1, s2: S2, s3: S3 },
];
const INV_PIO4 = [
  0xa2, 0xa2f9, 0xa2f983, 0xa2f9836e, 0xf9836e4e, 0x836e4e44, 0x6e4e4415, 0x4e441529, 0x441529fc, 0x1529fc27, 0x29fc2757, 0xfc2757d1,
  0x2757d1f5, 0x57d1f534, 0xd1f534dd, 0xf534ddc0, 0x34ddc0db, 0xddc0db62, 0xc0db6295, 0xdb629599, 0x6295993c, 0x95993c43, 0x993c4390, 0x3c439041,
];

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
function bitsOf(x: number): number { f32[0] = x; return u32[0]!; }
function abstop12(bits: number): number { return (bits >>> 20) & 0x7ff; }
const TOP_PIO4 = abstop12(0x3f490fdb), TOP_TINY = abstop12(0x39800000), TOP_120 = abstop12(0x42f00000), TOP_INF = abstop12(0x7f800000);

/** sine polynomial for even n, cosine polynomial for odd n; products feeding a sum are fused */
function poly(x: number, x2: number, p: SinCosTable, n: number): number {
  if ((n & 1) === 0) {
    const x3 = x * x2;
    const s1 = fma64(x2, p.s3, p.s2);
    const x7 = x3 * x2;
    const s = fma64(x3, p.s1, x);
    return f(fma64(x7, s1, s));
  }
  const x4 = x2 * x2;
  const c2 = fma64(x2, p.c4, p.c3);
  const c1 = fma64(x2, p.c1, p.c0);
  const x6 = x4 * x2;
  const c = fma64(x4, p.c2, c1);
  return f(fma64(x6, c2, c));
}

let quadrant = 0;
/** |x| < 120: x - n*pi/2 with n from a scaled truncating conversion */
function reduceFast(x: number): number {
  const r = x * HPI_INV;
  const n = ((Math.trunc(r) | 0) + 0x800000) >> 24;
  quadrant = n;
  return fma64(-n, HPI, x);
}
/** |x| >= 120: 4/pi to 192 bits, a 32x96-bit fixed-point product (BigInt: rare, slow is fine) */
function reduceLarge(bits: number): number {
  const arr = (bits >>> 26) & 15;
  const shift = BigInt((bits >>> 23) & 7);
  const M64 = (1n << 64n) - 1n;
  const xi = ((BigInt((bits & 0xffffff) | 0x800000)) << shift) & 0xffffffffn;
  const res0 = (xi * BigInt(INV_PIO4[arr]!)) & 0xffffffffn;
  const res1 = xi * BigInt(INV_PIO4[arr + 4]!);
  const res2 = xi * BigInt(INV_PIO4[arr + 8]!);
  let r = ((res2 >> 32n) | (res0 << 32n)) & M64;
  r = (r + res1) & M64;
  const n = ((r + (1n << 61n)) & M64) >> 62n;
  r = (r - (n << 62n)) & M64;
  quadrant = Number(n);
  return Number(BigInt.asIntN(64, r)) * PI63;
}

function sincos(y: number, cos: boolean): number {
  const bits = bitsOf(y);
  const top = abstop12(bits);
  let x = f(y);
  if (top < TOP_PIO4) {
    if (top < TOP_TINY) return cos ? 1 : x;
    return poly(x, x * x, TABLE[0]!, cos ? 1 : 0);
  }
  let q: number;
  if (top < TOP_120) {
    x = reduceFast(x);
    q = quadrant;
  } else if (top < TOP_INF) {
    x = reduceLarge(bits);
    q = quadrant + (bits >>> 31);
  } else return NaN;
  const s = SIGN[q & 3]!;
  const p = TABLE[(q & 2) ? 1 : 0]!;
  return poly(x * s, x * x, p, cos ? quadrant ^ 1 : quadrant);
}

/** glibc cosf (x86-64 FMA build) of an f32 value */
export function cosf(y: number): number { return sincos(y, true); }
/** glibc sinf (x86-64 FMA build) of an f32 value */
export function sinf(y: number): number { return sincos(y, false); }

// glibc's tanhf (2.36 and earlier releases: the fdlibm algorithm through expm1f, all in f32
// without FMA; about a third of its results differ from the correctly rounded tanh). ggml's
// GGML_OP_TANH calls it, e.g. for gemma2's attention and final logit softcaps.
const bits32 = (x: number): number => bitsOf(x);
function fromBits(b: number): number { u32[0] = b >>> 0; return f32[0]!; }
const LN2_HI = fromBits(0x3f317180), LN2_LO = fromBits(0x3717f7d1), INVLN2 = fromBits(0x3fb8aa3b);
const Q1 = fromBits(0xbd088889), Q2 = fromBits(0x3ad00d01), Q3 = fromBits(0xb8a670cd), Q4 = fromBits(0x36867e54), Q5 = fromBits(0xb457edbb);
const HUGE = f(1e30), TINY = f(1e-30);

/** fdlibm expm1f, op by op in f32 */
export function expm1f(xIn: number): number {
  let x = f(xIn);
  let hx = bits32(x);
  const xsb = hx & 0x80000000;
  hx &= 0x7fffffff;
  if (hx >= 0x4195b844) {
    if (hx >= 0x42b17218) {
      if (hx > 0x7f800000) return x + x;
      if (hx === 0x7f800000) return xsb === 0 ? x : -1;
      if (x > fromBits(0x42b17180)) return Infinity;
    }
    if (xsb !== 0) return f(TINY - 1);
  }
  let hi: number, lo: number, k: number, c = 0;
  if (hx > 0x3eb17218) {
    if (hx < 0x3f851592) {
      if (xsb === 0) { hi = f(x - LN2_HI); lo = LN2_LO; k = 1; } else { hi = f(x + LN2_HI); lo = -LN2_LO; k = -1; }
    } else {
      k = Math.trunc(f(f(INVLN2 * x) + (xsb === 0 ? 0.5 : -0.5)));
      const t = k;
      hi = f(x - f(t * LN2_HI));
      lo = f(t * LN2_LO);
    }
    x = f(hi - lo);
    c = f(f(hi - x) - lo);
  } else if (hx < 0x33000000) {
    return x;
  } else k = 0;
  const hfx = f(0.5 * x);
  const hxs = f(x * hfx);
  const r1 = f(1 + f(hxs * f(Q1 + f(hxs * f(Q2 + f(hxs * f(Q3 + f(hxs * f(Q4 + f(hxs * Q5))))))))));
  let t = f(3 - f(r1 * hfx));
  let e = f(hxs * f(f(r1 - t) / f(6 - f(x * t))));
  if (k === 0) return f(x - f(f(x * e) - hxs));
  e = f(f(x * f(e - c)) - c);
  e = f(e - hxs);
  if (k === -1) return f(f(0.5 * f(x - e)) - 0.5);
  if (k === 1) return x < -0.25 ? f(-2 * f(e - f(x + 0.5))) : f(1 + f(2 * f(x - e)));
  let y: number;
  if (k <= -2 || k > 56) {
    y = f(1 - f(e - x));
    y = fromBits(bits32(y) + (k << 23));
    return f(y - 1);
  }
  if (k < 23) {
    t = fromBits(0x3f800000 - (0x1000000 >> k));
    y = f(t - f(e - x));
  } else {
    t = fromBits((0x7f - k) << 23);
    y = f(x - f(e + t));
    y = f(y + 1);
  }
  return fromBits(bits32(y) + (k << 23));
}

/** glibc 2.36 tanhf (fdlibm) */
export function tanhf(xIn: number): number {
  const x = f(xIn);
  const jx = bits32(x);
  const ix = jx & 0x7fffffff;
  if (ix >= 0x7f800000) return Number.isNaN(x) ? x : jx >>> 31 ? -1 : 1;
  let z: number;
  if (ix < 0x41b00000) {
    if (ix === 0) return x;
    if (ix < 0x24000000) return f(x * f(1 + x));
    if (ix >= 0x3f800000) {
      const t = expm1f(f(2 * Math.abs(x)));
      z = f(1 - f(2 / f(t + 2)));
    } else {
      const t = expm1f(f(-2 * Math.abs(x)));
      z = f(-t / f(t + 2));
    }
  } else z = f(1 - TINY);
  return jx >>> 31 ? -z : z;
}

// glibc's expf and logf (2.28 and later, from Arm's optimized-routines; the x86-64 FMA builds
// __expf_fma / __logf_fma that glibc selects on AVX2 machines, with GCC contracting each multiply
// feeding an add). ggml's scalar CPU paths call them: sigmoid (expf), softplus (logf(1 + expf(x))),
// the Gated DeltaNet decay (expf) and SiLU's non-SIMD tail. Both work in double and round once to
// f32, so they are correctly rounded except near rounding boundaries, where the fused double
// arithmetic decides: reproduced with fma64 (faithful, exact except on exact ties).

// e_exp2f_data.c, EXP2F_TABLE_BITS 5: 2^(i/32) as doubles
const EXP_N = 32;
const EXP_POW2 = new Float64Array(EXP_N);
{
  const bits = [
    0x3ff0000000000000n, 0x3fefd9b0d3158574n, 0x3fefb5586cf9890fn, 0x3fef9301d0125b51n,
    0x3fef72b83c7d517bn, 0x3fef54873168b9aan, 0x3fef387a6e756238n, 0x3fef1e9df51fdee1n,
    0x3fef06fe0a31b715n, 0x3feef1a7373aa9cbn, 0x3feedea64c123422n, 0x3feece086061892dn,
    0x3feebfdad5362a27n, 0x3feeb42b569d4f82n, 0x3feeab07dd485429n, 0x3feea47eb03a5585n,
    0x3feea09e667f3bcdn, 0x3fee9f75e8ec5f74n, 0x3feea11473eb0187n, 0x3feea589994cce13n,
    0x3feeace5422aa0dbn, 0x3feeb737b0cdc5e5n, 0x3feec49182a3f090n, 0x3feed503b23e255dn,
    0x3feee89f995ad3adn, 0x3feeff76f2fb5e47n, 0x3fef199bdd85529cn, 0x3fef3720dcef9069n,
    0x3fef5818dcfba487n, 0x3fef7c97337b9b5fn, 0x3fefa4afa2a490dan, 0x3fefd0765b6e4540n,
  ];
  const u = new BigUint64Array(EXP_POW2.buffer);
  bits.forEach((b, i) => { u[i] = b + (BigInt(i) << 47n); });
}
/** C's hex float literal 0x1.<frac>p<exp> (13 hex digits = 52 bits, exact) */
const hexf = (frac: string, exp: number): number => (1 + parseInt(frac.padEnd(13, '0'), 16) / 2 ** 52) * 2 ** exp;
const EXP_SHIFT = hexf('8', 52);
const EXP_INVLN2N = hexf('71547652b82fe', 0) * EXP_N;
const EXP_C0 = hexf('c6af84b912394', -5) / EXP_N / EXP_N / EXP_N;
const EXP_C1 = hexf('ebfce50fac4f3', -3) / EXP_N / EXP_N;
const EXP_C2 = hexf('62e42ff0c52d6', -1) / EXP_N;

/** glibc expf (x86-64 FMA build) of an f32 value */
export function expf(xIn: number): number {
  const x = f(xIn);
  const abstop = (bitsOf(x) >>> 20) & 0x7ff;
  if (abstop >= 0x42b) { // |x| >= 88 (or inf/nan)
    if (x === -Infinity) return 0;
    if (abstop >= 0x7f8) return x + x;
    if (x > hexf('62e42e', 6)) return Infinity;
    if (x < -hexf('9fe368', 6)) return 0;
  }
  const kd = fma64(EXP_INVLN2N, x, EXP_SHIFT) - EXP_SHIFT;
  const r = fma64(EXP_INVLN2N, x, -kd);
  const idx = ((kd % EXP_N) + EXP_N) % EXP_N;
  const s = EXP_POW2[idx]! * 2 ** ((kd - idx) / EXP_N);
  const z = fma64(EXP_C0, r, EXP_C1);
  const y = fma64(z, r * r, fma64(EXP_C2, r, 1));
  return f(y * s);
}

// e_logf_data.c, LOGF_TABLE_BITS 4: (1/c, log(c)) per subinterval, ln2 and the log1p polynomial
const LOG_INVC = [
  hexf('661ec79f8f3be', 0), hexf('571ed4aaf883d', 0), hexf('49539f0f010b', 0), hexf('3c995b0b80385', 0),
  hexf('30d190c8864a5', 0), hexf('25e227b0b8ea', 0), hexf('1bb4a4a1a343f', 0), hexf('12358f08ae5ba', 0),
  hexf('0953f419900a7', 0), 1, hexf('e608cfd9a47ac', -1), hexf('ca4b31f026aa', -1),
  hexf('b2036576afce6', -1), hexf('9c2d163a1aa2d', -1), hexf('886e6037841ed', -1), hexf('767dcf5534862', -1),
];
const LOG_LOGC = [
  -hexf('57bf7808caade', -2), -hexf('2bef0a7c06ddb', -2), -hexf('01eae7f513a67', -2), -hexf('b31d8a68224e9', -3),
  -hexf('6574f0ac07758', -3), -hexf('1aa2bc79c81', -3), -hexf('a4e76ce8c0e5e', -4), -hexf('1973c5a611ccc', -4),
  -hexf('252f438e10c1e', -5), 0, hexf('aa5aa5df25984', -5), hexf('c5e53aa362eb4', -4),
  hexf('526e57720db08', -3), hexf('bc2860d22477', -3), hexf('1058bc8a07ee1', -2), hexf('4043057b6ee09', -2),
];
const LOG_LN2 = hexf('62e42fefa39ef', -1);
const LOG_A0 = -hexf('00ea348b88334', -2), LOG_A1 = hexf('5575b0be00b6a', -2), LOG_A2 = -hexf('ffffef20a4123', -2);

/** glibc logf (x86-64 FMA build) of an f32 value */
export function logf(xIn: number): number {
  let ix = bitsOf(xIn);
  if (ix === 0x3f800000) return 0;
  if (ix - 0x00800000 >>> 0 >= 0x7f800000 - 0x00800000) {
    if ((ix & 0x7fffffff) === 0) return -Infinity;
    if (ix === 0x7f800000) return Infinity;
    if ((ix & 0x80000000) !== 0 || (ix & 0x7fffffff) > 0x7f800000) return NaN;
    ix = bitsOf(f(fromBits(ix) * 2 ** 23)) - (23 << 23); // subnormal: normalize
  }
  const tmp = (ix - 0x3f330000) | 0;
  const i = (tmp >>> 19) & 15;
  const k = tmp >> 23;
  const z = fromBits(ix - (tmp & (0x1ff << 23)));
  const r = fma64(z, LOG_INVC[i]!, -1);
  const y0 = fma64(k, LOG_LN2, LOG_LOGC[i]!);
  const r2 = r * r;
  let y = fma64(LOG_A1, r, LOG_A2);
  y = fma64(LOG_A0, r2, y);
  y = fma64(y, r2, y0 + r);
  return f(y);
}

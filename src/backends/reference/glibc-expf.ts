// glibc's expf (x86-64, the FMA ifunc variant llama.cpp's CPU build calls), ported bit for bit. Two users:
// ggml_vec_soft_max_f32's scalar tail (rows shorter than 16 or their last n % 16 values, e.g. a MoE router's
// softmax over 6 experts) and the parity tests, which compute probabilities exactly as the references' tool
// did (node-llama-cpp 3.21.1's addon, llama/addon/AddonContext.cpp, SampleToken: candidates std::sort-ed by
// logit, highest first; then all in float p_i = expf(l_i - max), sum += p_i in that order, p_i /= sum; JS
// reproduces C's float adds and divides by rounding each double result to f32, double rounding through 53
// bits being innocuous for one f32 +, -, /). Checked against this machine's glibc 2.36 expf on 800,000 inputs
// (NOTES.md, Parity proofs).

// glibc sysdeps/ieee754/flt-32/e_expf.c + e_exp2f_data.c (EXP2F_TABLE_BITS 5): tab[i] = bits(2^(i/32)) - (i << 47)
const N = 32;
const TAB = new Float64Array(N);
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
  const u = new BigUint64Array(TAB.buffer);
  bits.forEach((b, i) => { u[i] = b; });
}
/** C's hex float literal 0x1.<frac>p<exp> (exact: 13 hex digits = 52 bits) */
const hexf = (frac: string, exp: number): number => (1 + parseInt(frac.padEnd(13, '0'), 16) / 2 ** 52) * 2 ** exp;
const SHIFT = hexf('8', 52);
const INVLN2N = hexf('71547652b82fe', 0) * N;
const C0 = hexf('c6af84b912394', -5) / N / N / N;
const C1 = hexf('ebfce50fac4f3', -3) / N / N;
const C2 = hexf('62e42ff0c52d6', -1) / N;

const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);

/** x = m * 2^e exactly (x finite) */
function decompose(x: number): [bigint, number] {
  f64[0] = x;
  const bits = u64[0]!;
  const neg = bits >> 63n === 1n;
  const exp = Number((bits >> 52n) & 0x7ffn);
  let m = bits & 0xfffffffffffffn;
  let e: number;
  if (exp === 0) e = -1074; else { m |= 1n << 52n; e = exp - 1075; }
  return [neg ? -m : m, e];
}

/** C's fma(a, b, c) for doubles: a*b + c rounded once (ties to even), via exact integers. */
export function fmaExact(a: number, b: number, c: number): number {
  const [ma, ea] = decompose(a);
  const [mb, eb] = decompose(b);
  const [mc, ec] = decompose(c);
  const mp = ma * mb;
  const ep = ea + eb;
  const e = Math.min(ep, ec);
  let s = (mp << BigInt(ep - e)) + (mc << BigInt(ec - e));
  if (s === 0n) return a * b + c; // signed zero as IEEE gives it
  const neg = s < 0n;
  if (neg) s = -s;
  const n = s.toString(2).length;
  let shift = Math.max(0, n - 53);
  if (e + shift < -1074) shift = -1074 - e; // subnormal result: fewer significant bits
  let q = s;
  if (shift > 0) {
    q = s >> BigInt(shift);
    const rem = s - (q << BigInt(shift));
    const half = 1n << BigInt(shift - 1);
    if (rem > half || (rem === half && (q & 1n) === 1n)) q += 1n;
  }
  const r = Number(q) * 2 ** (e + shift);
  return neg ? -r : r;
}

// fma for doubles without BigInt (allocation-free): a*b split exactly into ph + pl (Veltkamp/Dekker; the
// expf operands are far from overflow and underflow), then RN(c + ph + pl) as RN(th + RO(tl + pl)) with
// (th, tl) = TwoSum(c, ph) and RO rounding to odd (Boldo & Melquiond, "Emulation of FMA and correctly rounded
// sums: proved algorithms using rounding to odd", 2008). test/backends/reference/glibc-expf.test.ts checks
// it against fmaExact's integer arithmetic.
const SPLIT = 134217729; // 2^27 + 1
const bits64 = new Float64Array(1);
const words = new Uint32Array(bits64.buffer);
/** a + b rounded to odd (of the two doubles around the exact sum, the one whose last bit is 1) */
function addRoundOdd(a: number, b: number): number {
  const s = a + b;
  const bb = s - a;
  const e = (a - (s - bb)) + (b - bb);
  if (e === 0) return s;
  bits64[0] = s;
  if ((words[0]! & 1) === 1) return s;
  // move one ulp toward the exact sum: away from zero when e has s's sign
  if ((e > 0) === (s > 0)) { words[0] = (words[0]! + 1) >>> 0; if (words[0] === 0) words[1] = words[1]! + 1; }
  else { if (words[0] === 0) { words[1] = words[1]! - 1; words[0] = 0xffffffff; } else words[0] = words[0]! - 1; }
  return bits64[0]!;
}
/** C's fma(a, b, c) for doubles (finite operands well inside the exponent range), allocation-free. */
export function fmaDouble(a: number, b: number, c: number): number {
  let t = SPLIT * a;
  const ah = t - (t - a), al = a - ah;
  t = SPLIT * b;
  const bh = t - (t - b), bl = b - bh;
  const ph = a * b;
  const pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl;
  const th = c + ph;
  const bv = th - c;
  const tl = (c - (th - bv)) + (ph - bv);
  return th + addRoundOdd(tl, pl);
}

// 2^(i/32) as doubles: asdouble(tab[i] + (i << 47))
const POW2_FRAC = new Float64Array(N);
{
  const t = new BigUint64Array(TAB.buffer);
  const o = new BigUint64Array(POW2_FRAC.buffer);
  for (let i = 0; i < N; i++) o[i] = t[i]! + (BigInt(i) << 47n);
}

/**
 * The double y that glibc's expf rounds to float. `fused`: the x86-64 FMA build, where GCC contracts every
 * multiply feeding an add (kd = fma(InvLn2N, x, SHIFT), r = fma(InvLn2N, x, -kd) and the polynomial).
 */
function expfCore(xd: number, fused: boolean): number {
  let kd: number, r: number;
  if (fused) {
    kd = fmaDouble(INVLN2N, xd, SHIFT) - SHIFT;
    r = fmaDouble(INVLN2N, xd, -kd);
  } else {
    const z = INVLN2N * xd;
    kd = z + SHIFT - SHIFT;
    r = z - kd;
  }
  // s = asdouble(tab[ki % N] + (ki << 47)) = 2^(k/N), k = kd (an integer)
  const idx = ((kd % N) + N) % N;
  const s = POW2_FRAC[idx]! * 2 ** ((kd - idx) / N);
  let y: number;
  if (fused) {
    const z = fmaDouble(C0, r, C1);
    y = fmaDouble(z, r * r, fmaDouble(C2, r, 1));
  } else {
    const z = C0 * r + C1;
    y = z * (r * r) + (C2 * r + 1);
  }
  return y * s;
}

const TOP12_88 = 0x42b; // top12(88.0f) = 0x42b
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** slow-path calls taken (for the tests' own figures) */
export const expfStats = { calls: 0, exactPath: 0 };

/** glibc 2.36 expf on x86-64 with FMA (the __expf_fma ifunc), for a float x. */
export function glibcExpf(x: number, fused = true): number {
  f32[0] = x;
  const abstop = (u32[0]! >>> 20) & 0x7ff;
  if (abstop >= TOP12_88) {
    if (x === -Infinity) return 0;
    if (abstop >= 0x7f8) return x + x;
    if (x > hexf('62e42e', 6)) return Infinity;
    if (x < -hexf('9fe368', 6)) return 0;
  }
  // fast path: the unfused y, unless it sits within 2^-40 (relative) of an f32 rounding boundary, where the
  // FMA build's last double bits could round the other way
  const y = expfCore(x, false);
  const lo = Math.fround(y * (1 - 2 ** -40));
  const hi = Math.fround(y * (1 + 2 ** -40));
  expfStats.calls++;
  if (!fused || lo === hi) return Math.fround(y);
  expfStats.exactPath++;
  return Math.fround(expfCore(x, true));
}

/**
 * glibcExpf(x) stored into y[i]: the same value, computed inline so that hot loops allocate nothing (a
 * double returned from a call V8 does not inline is boxed). The rare inputs near an f32 rounding boundary
 * take glibcExpf's exact path (BigInt arithmetic, which allocates).
 */
export function glibcExpfInto(x: number, y: Float32Array, i: number): void {
  f32[0] = x;
  const abstop = (u32[0]! >>> 20) & 0x7ff;
  if (abstop >= TOP12_88) { y[i] = glibcExpf(x); return; }
  const z = INVLN2N * x;
  const kd = z + SHIFT - SHIFT;
  const r = z - kd;
  const idx = ((kd % N) + N) % N;
  const s = POW2_FRAC[idx]! * 2 ** ((kd - idx) / N);
  const v = ((C0 * r + C1) * (r * r) + (C2 * r + 1)) * s;
  if (Math.fround(v * (1 - 2 ** -40)) !== Math.fround(v * (1 + 2 ** -40))) { y[i] = glibcExpf(x); return; }
  y[i] = v;
}

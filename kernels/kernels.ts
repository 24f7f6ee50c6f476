// gguf-edge CPU kernels: AssemblyScript compiled to WebAssembly SIMD128.
//
// Every kernel works on raw byte pointers into the one shared WebAssembly.Memory and takes a
// half-open range [r0, r1) of the dimension that the thread pool splits (weight rows, tokens,
// heads or elements) as its first two arguments. No kernel allocates, keeps state or uses static
// data, so any number of instances (one per worker) can share the memory.
//
// Block layouts are ggml's:
//   Q4_0 18 B: f16 d, u8 qs[16]                 (x = d*(q-8); low nibbles 0..15, high 16..31)
//   Q4_1 20 B: f16 d, f16 m, u8 qs[16]
//   Q5_0 22 B: f16 d, u32 qh, u8 qs[16]
//   Q5_1 24 B: f16 d, f16 m, u32 qh, u8 qs[16]
//   Q8_0 34 B: f16 d, i8 qs[32]
//   Q8_1 36 B: f16 d, f16 s (= d * sum qs), i8 qs[32]
//   Q2_K 84 B: u8 scales[16], u8 qs[64], f16 d, f16 dmin
//   Q3_K 110 B: u8 hmask[32], u8 qs[64], u8 scales[12], f16 d
//   Q4_K 144 B: f16 d, f16 dmin, u8 scales[12], u8 qs[128]
//   Q5_K 176 B: f16 d, f16 dmin, u8 scales[12], u8 qh[32], u8 qs[128]
//   Q6_K 210 B: u8 ql[128], u8 qh[64], i8 scales[16], f16 d
//   Q8_K 292 B: f32 d, i8 qs[256], i16 bsums[16]
//
// Integer block sums are computed exactly as ggml does (integer arithmetic is exact); the float
// combination follows the ggml kernel llama.cpp's x86 build runs for the type where the cpu device relies
// on it (Q8_0, Q6_K, Q4_0 / Q4_0r4, Q4_K, F32, F16; see "ggml's float order" below). The other types'
// kernels keep their own (faster, free) order.

// ---------------------------------------------------------------------------------------------
// f16 <-> f32

// weight rows per cache tile in the matmul kernels
const ROW_TILE = 8;

// f16 -> f32 without touching an f32 subnormal: x86 takes a ~100-cycle assist for every subnormal operand
// (WebAssembly keeps IEEE subnormals, so no flush-to-zero), and f16 subnormals are common as Q6_K/Q4_K
// scales. Normal values rebias the exponent with an integer add; subnormals convert their mantissa.
@inline function h2f(h: u32): f32 {
  const e = h & 0x7c00, sign = (h & 0x8000) << 16;
  if (e == 0) return reinterpret<f32>(reinterpret<u32>(<f32>(h & 0x3ff) * reinterpret<f32>(0x33800000)) | sign);
  const m = ((h & 0x7fff) << 13) + (112 << 23);
  return reinterpret<f32>((e == 0x7c00 ? m | 0x7f800000 : m) | sign);
}

// ggml's fp32_to_fp16 (round to nearest even, subnormals, inf, nan -> 0x7e00)
@inline function f2h(f: f32): u32 {
  let base = (Mathf.abs(f) * reinterpret<f32>(0x77800000)) * reinterpret<f32>(0x08800000);
  const w = reinterpret<u32>(f);
  const shl1w = w + w;
  const sign = w & 0x80000000;
  let bias = shl1w & 0xff000000;
  if (bias < 0x71000000) bias = 0x71000000;
  base = reinterpret<f32>((bias >> 1) + 0x07800000) + base;
  const bits = reinterpret<u32>(base);
  const nonsign = ((bits >> 13) & 0x00007c00) + (bits & 0x00000fff);
  return (sign >> 16) | (shl1w > 0xff000000 ? 0x7e00 : nonsign);
}

// 4 f16 (in the low 16 bits of i32 lanes) -> 4 f32 (no f32 subnormal operands, as h2f)
@inline function h2f4(hv: v128): v128 {
  const e = v128.and(hv, i32x4.splat(0x7c00));
  const m = i32x4.add(i32x4.shl(v128.and(hv, i32x4.splat(0x7fff)), 13), i32x4.splat(112 << 23));
  const sub = f32x4.mul(f32x4.convert_i32x4_s(v128.and(hv, i32x4.splat(0x3ff))), f32x4.splat(reinterpret<f32>(0x33800000)));
  const inf = i32x4.eq(e, i32x4.splat(0x7c00));
  let b = v128.bitselect(v128.or(m, i32x4.splat(0x7f800000)), m, inf);
  b = v128.bitselect(sub, b, i32x4.eq(e, i32x4.splat(0)));
  return v128.or(b, i32x4.shl(v128.and(hv, i32x4.splat(0x8000)), 16));
}

// f16 -> f32 for finite values (normal and subnormal): 4 ops per 4 values; inf/nan become large finite
// values, acceptable for a KV cache (h2f4 is the exact version)
@inline function h2f4_finite(h32: v128): v128 {
  // (h << 16) >> 3 (arithmetic) puts exponent and mantissa in f32 position and copies the sign into bits
  // 31..28; clearing bits 30..28 leaves sign | e<<23 | m<<13, then 2^112 rebiases the exponent
  const b = v128.and(i32x4.shr_s(i32x4.shl(h32, 16), 3), i32x4.splat(0x8fffffff));
  return f32x4.mul(b, f32x4.splat(reinterpret<f32>(0x77800000)));
}
// 4 f32 -> 4 f16 in the low 16 bits of i32 lanes (same algorithm as f2h)
@inline function f2h4(f: v128): v128 {
  let base = f32x4.mul(f32x4.mul(f32x4.abs(f), f32x4.splat(reinterpret<f32>(0x77800000))), f32x4.splat(reinterpret<f32>(0x08800000)));
  const shl1w = i32x4.add(f, f);
  const sign = v128.and(f, i32x4.splat(0x80000000));
  let bias = v128.and(shl1w, i32x4.splat(0xff000000));
  bias = i32x4.max_u(bias, i32x4.splat(0x71000000));
  base = f32x4.add(i32x4.add(i32x4.shr_u(bias, 1), i32x4.splat(0x07800000)), base);
  const nonsign = i32x4.add(v128.and(i32x4.shr_u(base, 13), i32x4.splat(0x7c00)), v128.and(base, i32x4.splat(0xfff)));
  const nan = i32x4.gt_u(shl1w, i32x4.splat(0xff000000));
  return v128.or(i32x4.shr_u(sign, 16), v128.bitselect(i32x4.splat(0x7e00), nonsign, nan));
}

@inline function hsum_f32x4(v: v128): f32 {
  return (f32x4.extract_lane(v, 0) + f32x4.extract_lane(v, 1)) + (f32x4.extract_lane(v, 2) + f32x4.extract_lane(v, 3));
}
@inline function hsum_i32x4(v: v128): i32 {
  return i32x4.extract_lane(v, 0) + i32x4.extract_lane(v, 1) + i32x4.extract_lane(v, 2) + i32x4.extract_lane(v, 3);
}
@inline function hmax_f32x4(v: v128): f32 {
  return Mathf.max(Mathf.max(f32x4.extract_lane(v, 0), f32x4.extract_lane(v, 1)), Mathf.max(f32x4.extract_lane(v, 2), f32x4.extract_lane(v, 3)));
}

// dot of 16 unsigned bytes (u) with 16 signed bytes (s) -> i32x4 partial sums
@inline function dot_u8s8(u: v128, s: v128): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(u), i16x8.extend_low_i8x16_s(s)),
    i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(u), i16x8.extend_high_i8x16_s(s)));
}
// dot of 16 signed bytes with 16 signed bytes -> i32x4
@inline function dot_s8s8(a: v128, s: v128): v128 {
  return i32x4.add(
    i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(a), i16x8.extend_low_i8x16_s(s)),
    i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(a), i16x8.extend_high_i8x16_s(s)));
}

// ---------------------------------------------------------------------------------------------
// ggml's float order. The integer block sums are exact; what decides the last bit is how ggml's x86
// kernels combine them in f32 (src/backends/reference/matmul.ts and src/quant/vec-dot.ts name the
// kernel and order per weight type and batch). WebAssembly has no fused multiply-add, so C's fmaf
// is emulated: the f32 x f32 product is exact in f64, the f64 sum is rounded to f32, and the one
// case where that double rounding differs from a single one (the f64 sum exactly halfway between
// two f32 values after an inexact add) is detected and fixed as src/quant/rounding.ts's fmaf does.

// fmaf of an exact f64 product p and an f32 value c (held as f64)
@inline function fma_pc(p: f64, c: f64): f32 {
  const s = p + c;
  if ((reinterpret<u64>(s) & 0x1fffffff) != 0x10000000) return <f32>s;
  return fma_tie(p, c, s);
}
// s = p + c is an f32 midpoint: round towards the part the f64 add lost (TwoSum error term)
function fma_tie(p: f64, c: f64, s: f64): f32 {
  const r = <f32>s;
  if (<f64>r == s) return r;
  const bb = s - p;
  const err = (p - (s - bb)) + (c - bb);
  if (err == 0) return r;
  const other = 2 * s - <f64>r;
  return <f32>(err > 0 ? Math.max(<f64>r, other) : Math.min(<f64>r, other));
}
@inline function fmaf(a: f32, b: f32, c: f32): f32 { return fma_pc(<f64>a * <f64>b, <f64>c); }

// two fmaf lanes: p exact products (f64x2), c f32 accumulators held as f64x2; returns the new accumulators
@inline function fma2(p: v128, c: v128): v128 {
  const s = f64x2.add(p, c);
  if (v128.any_true(i64x2.eq(v128.and(s, i64x2.splat(0x1fffffff)), i64x2.splat(0x10000000)))) return fma2_tie(p, c);
  return f64x2.promote_low_f32x4(f32x4.demote_f64x2_zero(s));
}
// Most midpoints come after an exact f64 add (short f16 x f16 scale products), where rounding the f64 sum
// is already fmaf's single rounding: the vector TwoSum error term tells those apart from the rare inexact
// ones, which take the scalar fix.
function fma2_tie(p: v128, c: v128): v128 {
  const s = f64x2.add(p, c);
  const bb = f64x2.sub(s, p);
  const err = f64x2.add(f64x2.sub(p, f64x2.sub(s, bb)), f64x2.sub(c, bb));
  if (!v128.any_true(f64x2.ne(err, f64x2.splat(0)))) return round2(s);
  const r0 = fma_pc(f64x2.extract_lane(p, 0), f64x2.extract_lane(c, 0));
  const r1 = fma_pc(f64x2.extract_lane(p, 1), f64x2.extract_lane(c, 1));
  return f64x2.replace_lane(f64x2.splat(<f64>r0), 1, <f64>r1);
}
// fmaf on 8 lanes held as 4 f64x2: the f64 sums s0..s3 rounded to f32, unless one lane sits exactly
// halfway between two f32 values, where tie_any sends all four through the exact fma2 path. A tie after
// an exact add (the common kind with f16 x f16 scales) would round right anyway; telling the two apart
// costs more per step than the occasional slow step.
@inline function tie_any(s0: v128, s1: v128, s2: v128, s3: v128): bool {
  const m = i64x2.splat(0x1fffffff), t = i64x2.splat(0x10000000);
  return v128.any_true(v128.or(
    v128.or(i64x2.eq(v128.and(s0, m), t), i64x2.eq(v128.and(s1, m), t)),
    v128.or(i64x2.eq(v128.and(s2, m), t), i64x2.eq(v128.and(s3, m), t))));
}
// f64x2 -> nearest f32 values, held as f64x2
@inline function round2(v: v128): v128 { return f64x2.promote_low_f32x4(f32x4.demote_f64x2_zero(v)); }
// lanes 0,1 / 2,3 of an f32x4 as f64x2
@inline function lo_f64(v: v128): v128 { return f64x2.promote_low_f32x4(v); }
@inline function hi_f64(v: v128): v128 { return f64x2.promote_low_f32x4(i32x4.shuffle(v, v, 2, 3, 0, 1)); }
// two f64x2 holding f32 values -> one f32x4 (exact)
@inline function f32x4_of(a: v128, b: v128): v128 {
  return i32x4.shuffle(f32x4.demote_f64x2_zero(a), f32x4.demote_f64x2_zero(b), 0, 1, 4, 5);
}
// AVX hsum_float_8 of lanes 0..3 (lo) and 4..7 (hi): (lo + hi), then [0]+[2], [1]+[3], then their sum
@inline function hsum_float_8(lo: v128, hi: v128): f32 {
  const r = f32x4.add(lo, hi);
  return (f32x4.extract_lane(r, 0) + f32x4.extract_lane(r, 2)) + (f32x4.extract_lane(r, 1) + f32x4.extract_lane(r, 3));
}
// _mm512_reduce_add_ps of 16 lanes in 4 vectors (lanes 0-3, 4-7, 8-11, 12-15), GCC's tree
@inline function reduce_add_16(l0: v128, l1: v128, l2: v128, l3: v128): f32 {
  return hsum_float_8(f32x4.add(l0, l2), f32x4.add(l1, l3));
}
// i32x4 dot pair sums of values 0..7 (d0) and 8..15 (d1) -> sums of 4 consecutive values (AVX2's 8 lanes per 32)
@inline function g4(d0: v128, d1: v128): v128 {
  return i32x4.add(i32x4.shuffle(d0, d1, 0, 2, 4, 6), i32x4.shuffle(d0, d1, 1, 3, 5, 7));
}

// element conversions (element ranges)
export function cvt_f32_f16(i0: i32, i1: i32, x: usize, y: usize): void {
  let i = i0;
  for (; i + 8 <= i1; i += 8) {
    const a = f2h4(v128.load(x + (<usize>i << 2)));
    const b = f2h4(v128.load(x + (<usize>i << 2), 16));
    v128.store(y + (<usize>i << 1), i16x8.narrow_i32x4_u(a, b));
  }
  for (; i < i1; i++) store<u16>(y + (<usize>i << 1), <u16>f2h(load<f32>(x + (<usize>i << 2))));
}
export function cvt_f16_f32(i0: i32, i1: i32, x: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) v128.store(y + (<usize>i << 2), h2f4(v128.load16x4_u(x + (<usize>i << 1))));
  for (; i < i1; i++) store<f32>(y + (<usize>i << 2), h2f(load<u16>(x + (<usize>i << 1))));
}
// y = f32(f16(x)): activations as ggml sees them when it converts them to f16 for an F16 matmul
export function round_f16(i0: i32, i1: i32, x: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) v128.store(y + (<usize>i << 2), h2f4(f2h4(v128.load(x + (<usize>i << 2)))));
  for (; i < i1; i++) store<f32>(y + (<usize>i << 2), h2f(f2h(load<f32>(x + (<usize>i << 2)))));
}

// ---------------------------------------------------------------------------------------------
// activation quantizers; rows [r0, r1) of n values, x row stride xs bytes, y row stride ys bytes

// Q8_0 as ggml-cpu's x86 quantize_row_q8_0: d = amax/127 stored as f16, q = nearest_even(x * 127/amax)
@inline function q8_0_block(x: usize, y: usize, sum: bool): void {
  const v0 = v128.load(x), v1 = v128.load(x, 16), v2 = v128.load(x, 32), v3 = v128.load(x, 48);
  const v4 = v128.load(x, 64), v5 = v128.load(x, 80), v6 = v128.load(x, 96), v7 = v128.load(x, 112);
  let m = f32x4.max(f32x4.max(f32x4.abs(v0), f32x4.abs(v1)), f32x4.max(f32x4.abs(v2), f32x4.abs(v3)));
  m = f32x4.max(m, f32x4.max(f32x4.max(f32x4.abs(v4), f32x4.abs(v5)), f32x4.max(f32x4.abs(v6), f32x4.abs(v7))));
  const amax = hmax_f32x4(m);
  const d: f32 = amax / 127.0;
  const id: f32 = amax != 0 ? <f32>127.0 / amax : 0;
  store<u16>(y, <u16>f2h(d));
  const s = f32x4.splat(id);
  const q0 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v0, s)));
  const q1 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v1, s)));
  const q2 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v2, s)));
  const q3 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v3, s)));
  const q4 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v4, s)));
  const q5 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v5, s)));
  const q6 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v6, s)));
  const q7 = i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v7, s)));
  const a = i16x8.narrow_i32x4_s(q0, q1), b = i16x8.narrow_i32x4_s(q2, q3);
  const c = i16x8.narrow_i32x4_s(q4, q5), e = i16x8.narrow_i32x4_s(q6, q7);
  const off: usize = sum ? 4 : 2;
  v128.store(y + off, i8x16.narrow_i16x8_s(a, b));
  v128.store(y + off, i8x16.narrow_i16x8_s(c, e), 16);
  if (sum) {
    const t = i32x4.add(i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3)), i32x4.add(i32x4.add(q4, q5), i32x4.add(q6, q7)));
    store<u16>(y, <u16>f2h(d * <f32>hsum_i32x4(t)), 2);
  }
}
export function quantize_q8_0(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    let xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    const end = xp + (<usize>n << 2);
    while (xp < end) { q8_0_block(xp, yp, false); xp += 128; yp += 34; }
  }
}
// Q8_1 as ggml-cpu's x86 quantize_row_q8_1: as Q8_0 plus s = f16(d * sum(q))
export function quantize_q8_1(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    let xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    const end = xp + (<usize>n << 2);
    while (xp < end) { q8_0_block(xp, yp, true); xp += 128; yp += 36; }
  }
}
// Q8_K as ggml's quantize_row_q8_K_ref: max = the first value of largest magnitude, iscale = -127/max,
// q = min(127, nearest_even(iscale*x)), d = 1/iscale, bsums = sums of 16
// Rows r < tieRows follow ggml_quantize_mat_q8_K_4x8 (the repacked Q4_K GEMM's quantizer), which takes
// max = +amax whenever +amax occurs in the block.
export function quantize_q8_K(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32, tieRows: i32): void {
  for (let r = r0; r < r1; r++) {
    let xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    const end = xp + (<usize>n << 2);
    while (xp < end) {
      let m = f32x4.splat(0);
      for (let j: usize = 0; j < 1024; j += 16) m = f32x4.max(m, f32x4.abs(v128.load(xp + j)));
      const amax = hmax_f32x4(m);
      if (amax == 0) {
        store<f32>(yp, 0);
        memory.fill(yp + 4, 0, 288);
      } else {
        let mx: f32 = 0;
        for (let j: usize = 0; j < 1024; j += 4) { const v = load<f32>(xp + j); if (Mathf.abs(v) == amax) { mx = v; break; } }
        if (r < tieRows && mx < 0) for (let j: usize = 0; j < 1024; j += 4) if (load<f32>(xp + j) == amax) { mx = amax; break; }
        const iscale: f32 = <f32>-127.0 / mx;
        const s = f32x4.splat(iscale);
        const lim = i32x4.splat(127);
        for (let j: usize = 0; j < 16; j++) {
          const p = xp + (j << 6);
          const q0 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p), s))), lim);
          const q1 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 16), s))), lim);
          const q2 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 32), s))), lim);
          const q3 = i32x4.min_s(i32x4.trunc_sat_f32x4_s(f32x4.nearest(f32x4.mul(v128.load(p, 48), s))), lim);
          v128.store(yp + 4 + (j << 4), i8x16.narrow_i16x8_s(i16x8.narrow_i32x4_s(q0, q1), i16x8.narrow_i32x4_s(q2, q3)));
          store<i16>(yp + 260 + (j << 1), <i16>hsum_i32x4(i32x4.add(i32x4.add(q0, q1), i32x4.add(q2, q3))));
        }
        store<f32>(yp, <f32>1.0 / iscale);
      }
      xp += 1024; yp += 292;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// quantized matmul: y[t][r] = dot(w row r, a row t) for r in [r0, r1), t in [0, nTok)
// w: weight rows (ws bytes apart), a: quantized activations (as bytes apart), y: f32 (ys bytes per token)
// nb: blocks per row

// Q8_0 activation side table ("aux"), per activation row (20*nb bytes): f32 d[nb] (the f16 scale widened),
// then per block an i32x4 (8*sum(q), 0, 0, 0), so the kernels convert no activation scales and fold Q4_0's
// -8 offset out of the inner loop (one vector subtract per block instead of an offset per value).
export function q8_0_aux(r0: i32, r1: i32, a: usize, as: usize, ax: usize, axs: usize, nb: i32): void {
  for (let r = r0; r < r1; r++) {
    let ap = a + <usize>r * as;
    const xp = ax + <usize>r * axs;
    for (let b: usize = 0; b < <usize>nb; b++) {
      store<f32>(xp + (b << 2), h2f(load<u16>(ap)));
      const q0 = v128.load(ap, 2), q1 = v128.load(ap, 18);
      const s16 = i16x8.add(i16x8.extadd_pairwise_i8x16_s(q0), i16x8.extadd_pairwise_i8x16_s(q1));
      v128.store(xp + (<usize>nb << 2) + (b << 4), i32x4.replace_lane(i32x4.splat(0), 0, hsum_i32x4(i32x4.extadd_pairwise_i16x8_s(s16)) << 3));
      const wp = xp + (<usize>nb * 20) + (b << 6);
      v128.store(wp, i16x8.extend_low_i8x16_s(q0)); v128.store(wp, i16x8.extend_high_i8x16_s(q0), 16);
      v128.store(wp, i16x8.extend_low_i8x16_s(q1), 32); v128.store(wp, i16x8.extend_high_i8x16_s(q1), 48);
      ap += 34;
    }
  }
}

// 32 nibbles (low or high halves of 4 u16-widened byte vectors) . 32 int8 at a
@inline function dot32_u16(x0: v128, x1: v128, x2: v128, x3: v128, a: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(x0, v128.load8x8_s(a)), i32x4.dot_i16x8_s(x1, v128.load8x8_s(a, 8))),
    i32x4.add(i32x4.dot_i16x8_s(x2, v128.load8x8_s(a, 16)), i32x4.dot_i16x8_s(x3, v128.load8x8_s(a, 24))));
}

// Q8_K activation side table: the 256 quants of each block widened to i16 (512 B per block), so the
// K-quant kernels load activations as plain vectors
export function q8_K_aux(r0: i32, r1: i32, a: usize, as: usize, ax: usize, axs: usize, nb: i32): void {
  for (let r = r0; r < r1; r++) {
    let ap = a + <usize>r * as + 4, xp = ax + <usize>r * axs;
    for (let b = 0; b < nb; b++) {
      for (let j: usize = 0; j < 256; j += 16) {
        const v = v128.load(ap + j);
        v128.store(xp + (j << 1), i16x8.extend_low_i8x16_s(v));
        v128.store(xp + (j << 1), i16x8.extend_high_i8x16_s(v), 16);
      }
      ap += 292; xp += 512;
    }
  }
}
// as dot32_u16 with activations already widened to i16 at a
@inline function dot32_w16(x0: v128, x1: v128, x2: v128, x3: v128, a: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(x0, v128.load(a)), i32x4.dot_i16x8_s(x1, v128.load(a, 16))),
    i32x4.add(i32x4.dot_i16x8_s(x2, v128.load(a, 32)), i32x4.dot_i16x8_s(x3, v128.load(a, 48))));
}

// four i32x4 partial sums -> one i32x4 of their horizontal sums
@inline function hsum4_i32(p0: v128, p1: v128, p2: v128, p3: v128): v128 {
  const t0 = i32x4.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7));
  const t1 = i32x4.add(i32x4.shuffle(p2, p3, 0, 4, 1, 5), i32x4.shuffle(p2, p3, 2, 6, 3, 7));
  return i32x4.add(i32x4.shuffle(t0, t1, 0, 1, 4, 5), i32x4.shuffle(t0, t1, 2, 3, 6, 7));
}
// f16 scales at w, w+st, w+2st, w+3st -> f32x4
@inline function h2f_4(w: usize, st: usize): v128 {
  let v = i32x4.splat(<i32>load<u16>(w));
  v = i32x4.replace_lane(v, 1, <i32>load<u16>(w + st));
  v = i32x4.replace_lane(v, 2, <i32>load<u16>(w + 2 * st));
  v = i32x4.replace_lane(v, 3, <i32>load<u16>(w + 3 * st));
  return h2f4(v);
}

// unsigned nibbles of one Q4_0 block (16 bytes at q) . 32 int8 activations at a -> i32x4 partial sums
@inline function q4_block(q: usize, a: usize): v128 {
  const m = i16x8.splat(0x0f);
  const v0 = v128.load8x8_u(q), v1 = v128.load8x8_u(q, 8);
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.and(v0, m), v128.load8x8_s(a)), i32x4.dot_i16x8_s(v128.and(v1, m), v128.load8x8_s(a, 8))),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.shr_u(v0, 4), v128.load8x8_s(a, 16)), i32x4.dot_i16x8_s(i16x8.shr_u(v1, 4), v128.load8x8_s(a, 24))));
}

// ggml_gemv/gemm_q4_0_8x8_q8_0 (Q4_0 weights with rows % 8 == 0 are repacked by llama.cpp): per block the
// exact integer dot (the -8 offset folded out via the aux table's 8*sum(q)) fused-multiply-added with
// d = d_w*d_a into one f32 accumulator
@inline function dot_q4_0(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc: f32 = 0;
  let cp = ax + (<usize>nb << 2), dp = ax;
  const we = w + <usize>nb * 18;
  while (w < we) {
    const s = hsum_i32x4(i32x4.sub(q4_block(w + 2, a + 2), v128.load(cp)));
    acc = fmaf(<f32>s, h2f(load<u16>(w)) * load<f32>(dp), acc);
    w += 18; a += 34; cp += 16; dp += 4;
  }
  return acc;
}
export function mm_q4_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_0(w + <usize>r * ws, at, ax + <usize>t * axs, nb));
    }
  }
}

// Q4_0 repacked 4 blocks at a time (see repack_q4_0x4): [4 x f16 d][4 x 16 B quants], 72 B per group,
// so the scales load as one vector and every 8-byte quant load is 8-byte aligned. Rows need nb % 4 == 0.
// in place: rows [r0, r1) of nb blocks (nb % 4 == 0) at w, ws bytes apart
export function repack_q4_0x4(r0: i32, r1: i32, w: usize, ws: usize, nb: i32): void {
  for (let r = r0; r < r1; r++) {
    let p = w + <usize>r * ws;
    for (let g = 0; g < nb; g += 4) {
      const d0 = load<u16>(p), d1 = load<u16>(p, 18), d2 = load<u16>(p, 36), d3 = load<u16>(p, 54);
      const q0 = v128.load(p, 2), q1 = v128.load(p, 20), q2 = v128.load(p, 38), q3 = v128.load(p, 56);
      store<u16>(p, d0); store<u16>(p, d1, 2); store<u16>(p, d2, 4); store<u16>(p, d3, 6);
      v128.store(p, q0, 8); v128.store(p, q1, 24); v128.store(p, q2, 40); v128.store(p, q3, 56);
      p += 72;
    }
  }
}
// Same arithmetic as dot_q4_0 on the 4-block groups (one block per loop iteration: TurboFan hoists every
// load of a straight-line body to its top, so unrolled bodies keep ~24 vectors live and spill).
@inline function dot_q4_0x4(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc: f32 = 0;
  let cp = ax + (<usize>nb << 2);
  const wid = ax + <usize>nb * 20;
  const m = i16x8.splat(0x0f);
  for (let b = 0; b < nb; b += 4) {
    let dv = f32x4.mul(h2f4(v128.load16x4_u(w)), v128.load(ax + (<usize>b << 2)));
    let q = w + 8, ap = wid + (<usize>b << 6);
    const qe = q + 64;
    while (q < qe) {
      const u0 = v128.load8x8_u(q), u1 = v128.load8x8_u(q, 8);
      const p = i32x4.sub(i32x4.add(
        i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m), v128.load(ap)), i32x4.dot_i16x8_s(v128.and(u1, m), v128.load(ap, 16))),
        i32x4.add(i32x4.dot_i16x8_s(i16x8.shr_u(u0, 4), v128.load(ap, 32)), i32x4.dot_i16x8_s(i16x8.shr_u(u1, 4), v128.load(ap, 48)))), v128.load(cp));
      acc = fmaf(<f32>hsum_i32x4(p), f32x4.extract_lane(dv, 0), acc);
      dv = i32x4.shuffle(dv, dv, 1, 2, 3, 0);
      q += 16; ap += 64; cp += 16;
    }
    w += 72;
  }
  return acc;
}
export function mm_q4_0x4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_0x4(w + <usize>r * ws, at, xt, nb));
    }
  }
}

// Q4_0 with 4 rows interleaved (CpuLayout.Q4_0r4, the analogue of llama.cpp's block_q4_0x8 repack): per
// group of 4 rows and per block, [4 x f16 d][4 x 16 B quants] (72 B), so one stream feeds 4 rows. Each row
// still has its own chain of per-block fused multiply-adds (ggml_gemv_q4_0_8x8_q8_0's order), but the 4
// chains run side by side in two f64x2: the scalar chain of one row is latency-bound, 4 are not.
// in place: row groups [g0, g1) of rows ws bytes apart, via tmp (4*ws bytes)
export function repack_q4_0r4(g0: i32, g1: i32, w: usize, ws: usize, nb: i32, tmp: usize): void {
  repack_r4(g0, g1, w, ws, nb, tmp, 18);
}
// any block type of one f16 scale + (bs - 2) quant bytes (Q4_0: 18, Q8_0: 34): per block [4 x f16 d][4 x quants]
export function repack_r4(g0: i32, g1: i32, w: usize, ws: usize, nb: i32, tmp: usize, bs: i32): void {
  const qb = <usize>(bs - 2), ob = 8 + 4 * qb;
  for (let g = g0; g < g1; g++) {
    const p = w + <usize>g * 4 * ws;
    const n: usize = 4 * ws;
    let i: usize = 0;
    for (; i + 16 <= n; i += 16) v128.store(tmp + i, v128.load(p + i));
    for (; i < n; i++) store<u8>(tmp + i, load<u8>(p + i));
    for (let b: usize = 0; b < <usize>nb; b++) {
      const o = p + b * ob;
      for (let j: usize = 0; j < 4; j++) {
        const src = tmp + j * ws + b * <usize>bs;
        store<u16>(o + 2 * j, load<u16>(src));
        for (let q: usize = 0; q < qb; q += 16) v128.store(o + 8 + qb * j + q, v128.load(src + 2 + q));
      }
    }
  }
}
// one Q4_0 block row (16 bytes of nibbles at q) . widened activations a0..a3 -> i32x4 partial sums
@inline function q4r_row(q: usize, a0: v128, a1: v128, a2: v128, a3: v128): v128 {
  const m = i16x8.splat(0x0f);
  const u0 = v128.load8x8_u(q), u1 = v128.load8x8_u(q, 8);
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m), a0), i32x4.dot_i16x8_s(v128.and(u1, m), a1)),
    i32x4.add(i32x4.dot_i16x8_s(i16x8.shr_u(u0, 4), a2), i32x4.dot_i16x8_s(i16x8.shr_u(u1, 4), a3)));
}
// The exact integer sums of one Q4_0r4 block for its 4 rows (lane = row), before the -8 offset.
// SIMD128: nibbles widened on u16 lanes . the aux table's widened activations (ap, 64 B per block).
// Relaxed SIMD: the 16 bytes of a row split into low/high nibbles (the 7-bit operand) . the Q8_0 block's
// int8 quants (aq) in two i32x4.relaxed_dot_i8x16_i7x16_add_s; same integers.
@inline function q4x_row(q: usize, alo: v128, ahi: v128): v128 {
  const v = v128.load(q);
  const lo = v128.and(v, i8x16.splat(0x0f)), hi = v128.and(i16x8.shr_u(v, 4), i8x16.splat(0x0f));
  return i32x4.relaxed_dot_i8x16_i7x16_add_s(ahi, hi, i32x4.relaxed_dot_i8x16_i7x16_add_s(alo, lo, i32x4.splat(0)));
}
@inline function q4r4_sums(w: usize, ap: usize, aq: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const alo = v128.load(aq), ahi = v128.load(aq, 16);
    return hsum4_i32(q4x_row(w + 8, alo, ahi), q4x_row(w + 24, alo, ahi), q4x_row(w + 40, alo, ahi), q4x_row(w + 56, alo, ahi));
  }
  const a0 = v128.load(ap), a1 = v128.load(ap, 16), a2 = v128.load(ap, 32), a3 = v128.load(ap, 48);
  return hsum4_i32(q4r_row(w + 8, a0, a1, a2, a3), q4r_row(w + 24, a0, a1, a2, a3), q4r_row(w + 40, a0, a1, a2, a3), q4r_row(w + 56, a0, a1, a2, a3));
}
// Each block's 4 integer sums (minus 8*sum(q)) meet the scales in one of two float orders, picked at compile
// time by `exact`: ggml_gemv/gemm_q4_0_8x8_q8_0's per-row fused multiply-add chains (4 rows side by side in
// two f64x2, FMA emulated), or free-order f32x4 multiply-adds ('fast' numerics).
// exact: f64x2 c0 (rows 0-1) and c1 (rows 2-3) hold the chains; fast: c0 holds the 4 rows' f32 sums
@inline function q4r4_result(c0: v128, c1: v128, exact: bool): v128 { return exact ? f32x4_of(c0, c1) : c0; }
// 4 rows of a Q4_0r4 group against one activation row (Q8_0 quants at a, aux table at ax): 4 results at y
@inline function dot4_q4_0r4(w: usize, a: usize, ax: usize, nb: i32, y: usize, exact: bool): void {
  let c0 = f64x2.splat(0), c1 = c0;
  let cp = ax + (<usize>nb << 2), dp = ax, ap = ax + <usize>nb * 20, aq = a + 2;
  const we = w + <usize>nb * 72;
  while (w < we) {
    const d4 = f32x4.mul(h2f4(v128.load16x4_u(w)), f32x4.splat(load<f32>(dp)));
    const sums = i32x4.sub(q4r4_sums(w, ap, aq), i32x4.splat(load<i32>(cp)));
    if (exact) {
      // |sum| <= 32*8*128: exact in f32, so straight to f64
      const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(sums), lo_f64(d4));
      const p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sums, sums, 2, 3, 0, 1)), hi_f64(d4));
      const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1);
      const m = i64x2.splat(0x1fffffff), t = i64x2.splat(0x10000000);
      if (v128.any_true(v128.or(i64x2.eq(v128.and(s0, m), t), i64x2.eq(v128.and(s1, m), t)))) {
        c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1);
      } else {
        c0 = round2(s0); c1 = round2(s1);
      }
    } else {
      c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(sums), d4));
    }
    w += 72; ap += 64; aq += 34; cp += 16; dp += 4;
  }
  v128.store(y, q4r4_result(c0, c1, exact));
}
// nibbles split on u16 lanes (l0, l1 low, h0, h1 high) . 32 widened activations at x -> i32x4 partial sums
@inline function q4r_dot(l0: v128, l1: v128, h0: v128, h1: v128, x: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(l0, v128.load(x)), i32x4.dot_i16x8_s(l1, v128.load(x, 16))),
    i32x4.add(i32x4.dot_i16x8_s(h0, v128.load(x, 32)), i32x4.dot_i16x8_s(h1, v128.load(x, 48))));
}
// first half of hsum4_i32: p0, p1 -> [p0 lanes 0+2, p1 lanes 0+2, p0 1+3, p1 1+3]
@inline function hs2_i32(p0: v128, p1: v128): v128 {
  return i32x4.add(i32x4.shuffle(p0, p1, 0, 4, 1, 5), i32x4.shuffle(p0, p1, 2, 6, 3, 7));
}
@inline function hs4_i32(t0: v128, t1: v128): v128 {
  return i32x4.add(i32x4.shuffle(t0, t1, 0, 1, 4, 5), i32x4.shuffle(t0, t1, 2, 3, 6, 7));
}
// dot4_q4_0r4 for two activation rows (tokens) at once, for prefill: each row's nibbles are split once for
// both tokens, and every token keeps its own accumulators (the same float order as dot4_q4_0r4)
@inline function dot4x2_q4_0r4(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize, exact: bool): void {
  let c0 = f64x2.splat(0), c1 = c0, e0 = c0, e1 = c0;
  let cp = ax + (<usize>nb << 2), dp = ax, ap = ax + <usize>nb * 20, aq = a + 2;
  const m = i16x8.splat(0x0f);
  const we = w + <usize>nb * 72;
  while (w < we) {
    let sa: v128, sb: v128;
    if (ASC_FEATURE_RELAXED_SIMD) {
      sa = q4r4_sums(w, 0, aq);
      sb = q4r4_sums(w, 0, aq + as);
    } else {
      let u0 = v128.load8x8_u(w, 8), u1 = v128.load8x8_u(w, 16);
      let l0 = v128.and(u0, m), l1 = v128.and(u1, m), h0 = i16x8.shr_u(u0, 4), h1 = i16x8.shr_u(u1, 4);
      const a0 = q4r_dot(l0, l1, h0, h1, ap), b0 = q4r_dot(l0, l1, h0, h1, ap + axs);
      u0 = v128.load8x8_u(w, 24); u1 = v128.load8x8_u(w, 32);
      l0 = v128.and(u0, m); l1 = v128.and(u1, m); h0 = i16x8.shr_u(u0, 4); h1 = i16x8.shr_u(u1, 4);
      const a01 = hs2_i32(a0, q4r_dot(l0, l1, h0, h1, ap)), b01 = hs2_i32(b0, q4r_dot(l0, l1, h0, h1, ap + axs));
      u0 = v128.load8x8_u(w, 40); u1 = v128.load8x8_u(w, 48);
      l0 = v128.and(u0, m); l1 = v128.and(u1, m); h0 = i16x8.shr_u(u0, 4); h1 = i16x8.shr_u(u1, 4);
      const a2 = q4r_dot(l0, l1, h0, h1, ap), b2 = q4r_dot(l0, l1, h0, h1, ap + axs);
      u0 = v128.load8x8_u(w, 56); u1 = v128.load8x8_u(w, 64);
      l0 = v128.and(u0, m); l1 = v128.and(u1, m); h0 = i16x8.shr_u(u0, 4); h1 = i16x8.shr_u(u1, 4);
      const a23 = hs2_i32(a2, q4r_dot(l0, l1, h0, h1, ap)), b23 = hs2_i32(b2, q4r_dot(l0, l1, h0, h1, ap + axs));
      sa = hs4_i32(a01, a23); sb = hs4_i32(b01, b23);
    }
    // the same integers as dot4_q4_0r4's sums - 8*sum(q)
    sa = i32x4.sub(sa, i32x4.splat(load<i32>(cp)));
    sb = i32x4.sub(sb, i32x4.splat(load<i32>(cp + axs)));
    const hd = h2f4(v128.load16x4_u(w));
    const da = f32x4.mul(hd, f32x4.splat(load<f32>(dp))), db = f32x4.mul(hd, f32x4.splat(load<f32>(dp + axs)));
    if (exact) {
      const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(sa), lo_f64(da));
      const p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sa, sa, 2, 3, 0, 1)), hi_f64(da));
      const p2 = f64x2.mul(f64x2.convert_low_i32x4_s(sb), lo_f64(db));
      const p3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sb, sb, 2, 3, 0, 1)), hi_f64(db));
      const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, e0), s3 = f64x2.add(p3, e1);
      if (tie_any(s0, s1, s2, s3)) {
        c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); e0 = fma2_tie(p2, e0); e1 = fma2_tie(p3, e1);
      } else {
        c0 = round2(s0); c1 = round2(s1); e0 = round2(s2); e1 = round2(s3);
      }
    } else {
      c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(sa), da));
      e0 = f32x4.add(e0, f32x4.mul(f32x4.convert_i32x4_s(sb), db));
    }
    w += 72; ap += 64; aq += 34; cp += 16; dp += 4;
  }
  v128.store(y, q4r4_result(c0, c1, exact));
  v128.store(y + ys, q4r4_result(e0, e1, exact));
}
// rows [r0, r1) are whole groups of 4 (dispatched with align 4); tokens in pairs, then the odd one alone
@inline function mm_q4_0r4_any(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, exact: bool): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 2 <= nTok; t += 2) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4x2_q4_0r4(w + <usize>r * ws, a + <usize>t * as, as, xt, axs, nb, yt + (<usize>r << 2), ys, exact);
    }
    for (; t < nTok; t++) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4_q4_0r4(w + <usize>r * ws, a + <usize>t * as, xt, nb, yt + (<usize>r << 2), exact);
    }
  }
}
export function mm_q4_0r4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  mm_q4_0r4_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, true);
}
// free-order ('fast' numerics)
export function mmf_q4_0r4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  mm_q4_0r4_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, false);
}

// Q8_1 activation side table, per activation row (8*nb bytes): f32 d[nb], then f32 s[nb] (the f16 fields widened)
export function q8_1_aux(r0: i32, r1: i32, a: usize, as: usize, ax: usize, axs: usize, nb: i32): void {
  for (let r = r0; r < r1; r++) {
    let ap = a + <usize>r * as;
    const xp = ax + <usize>r * axs;
    for (let b: usize = 0; b < <usize>nb; b++) {
      store<f32>(xp + (b << 2), h2f(load<u16>(ap)));
      store<f32>(xp + (<usize>nb << 2) + (b << 2), h2f(load<u16>(ap, 2)));
      ap += 36;
    }
  }
}

// 5th bits of a Q5 block's 32 values (qh) as 0x10 on the u16 lanes matching the nibble layout of
// load8x8_u(qs) / load8x8_u(qs, 8): elements 0..7, 8..15 (low nibbles) and 16..23, 24..31 (high nibbles)
@inline function q5_hbits(qh: u32, shift: u32, half: i32): v128 {
  const v = i16x8.splat(<i16>((qh >> shift) & 0xffff));
  const bits = half ? i16x8(0x100, 0x200, 0x400, 0x800, 0x1000, 0x2000, 0x4000, -0x8000) : i16x8(1, 2, 4, 8, 16, 32, 64, 128);
  return v128.and(i16x8.eq(v128.and(v, bits), bits), i16x8.splat(0x10));
}
// one Q4_1/Q5_0/Q5_1-style block: 16 bytes of nibbles at q (+ 5th bits when qh is given) . 32 int8 at a
@inline function q45_block(q: usize, a: usize, five: bool, qh: u32): v128 {
  const m = i16x8.splat(0x0f);
  const u0 = v128.load8x8_u(q), u1 = v128.load8x8_u(q, 8);
  let x0 = v128.and(u0, m), x1 = v128.and(u1, m), x2 = i16x8.shr_u(u0, 4), x3 = i16x8.shr_u(u1, 4);
  if (five) {
    x0 = v128.or(x0, q5_hbits(qh, 0, 0)); x1 = v128.or(x1, q5_hbits(qh, 0, 1));
    x2 = v128.or(x2, q5_hbits(qh, 16, 0)); x3 = v128.or(x3, q5_hbits(qh, 16, 1));
  }
  return dot32_u16(x0, x1, x2, x3, a);
}

// Q4_1 / Q5_1 x Q8_1: sum_b dw*da*isum + mw*sa, scales of 4 blocks widened at once
@inline function dot_q4_1_q5_1(w: usize, a: usize, ax: usize, nb: i32, five: bool): f32 {
  const bb: usize = five ? 24 : 20, qo: usize = five ? 8 : 4;
  let acc = f32x4.splat(0), accm = f32x4.splat(0);
  const sx = ax + (<usize>nb << 2);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    let dv = f32x4.mul(h2f_4(w, bb), v128.load(ax + (<usize>b << 2)));
    accm = f32x4.add(accm, f32x4.mul(h2f_4(w + 2, bb), v128.load(sx + (<usize>b << 2))));
    const we = w + 4 * bb;
    while (w < we) {
      const p = q45_block(w + qo, a + 4, five, five ? load<u32>(w, 4) : 0);
      acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(p), i32x4.shuffle(dv, dv, 0, 0, 0, 0)));
      dv = i32x4.shuffle(dv, dv, 1, 2, 3, 0);
      w += bb; a += 36;
    }
  }
  let r = hsum_f32x4(acc) + hsum_f32x4(accm);
  for (; b < nb; b++) {
    const p = hsum_i32x4(q45_block(w + qo, a + 4, five, five ? load<u32>(w, 4) : 0));
    r += h2f(load<u16>(w)) * load<f32>(ax + (<usize>b << 2)) * <f32>p + h2f(load<u16>(w, 2)) * load<f32>(sx + (<usize>b << 2));
    w += bb; a += 36;
  }
  return r;
}
export function mm_q4_1(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_1_q5_1(w + <usize>r * ws, at, xt, nb, false));
    }
  }
}
export function mm_q5_1(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_1_q5_1(w + <usize>r * ws, at, xt, nb, true));
    }
  }
}

// Q5_0 x Q8_0 (aux table): values (nibble | 5th bit) - 16, the offset folded out as 2 * (8 * sum(q))
@inline function dot_q5_0(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  let cp = ax + (<usize>nb << 2);
  let b = 0;
  for (; b + 4 <= nb; b += 4) {
    let dv = f32x4.mul(h2f_4(w, 22), v128.load(ax + (<usize>b << 2)));
    const we = w + 88;
    while (w < we) {
      const p = i32x4.sub(q45_block(w + 6, a + 2, true, load<u32>(w, 2)), i32x4.shl(v128.load(cp), 1));
      acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(p), i32x4.shuffle(dv, dv, 0, 0, 0, 0)));
      dv = i32x4.shuffle(dv, dv, 1, 2, 3, 0);
      w += 22; a += 34; cp += 16;
    }
  }
  let r = hsum_f32x4(acc);
  for (; b < nb; b++) {
    const p = hsum_i32x4(q45_block(w + 6, a + 2, true, load<u32>(w, 2))) - (load<i32>(cp) << 1);
    r += h2f(load<u16>(w)) * load<f32>(ax + (<usize>b << 2)) * <f32>p;
    w += 22; a += 34; cp += 16;
  }
  return r;
}
export function mm_q5_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q5_0(w + <usize>r * ws, at, xt, nb));
    }
  }
}

// ggml_vec_dot_q8_0_q8_0 on x86 (and tinyBLAS_Q0_AVX, same arithmetic): 8 int32 lanes per block (lane l =
// values 4l..4l+3), each fused-multiply-added by d = d_w*d_a into its own f32 accumulator, hsum_float_8.
// The lane sums (|s| <= 4*127*128) convert to f64 exactly.
@inline function q8_0_lanes(w: usize, a: usize): v128 {
  return g4(i32x4.dot_i16x8_s(v128.load8x8_s(w, 2), v128.load8x8_s(a, 2)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 10), v128.load8x8_s(a, 10)));
}
@inline function q8_0_lanes_hi(w: usize, a: usize): v128 {
  return g4(i32x4.dot_i16x8_s(v128.load8x8_s(w, 18), v128.load8x8_s(a, 18)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 26), v128.load8x8_s(a, 26)));
}
@inline function dot_q8_0(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  let dp = ax;
  const we = w + <usize>nb * 34;
  while (w < we) {
    const dd = f64x2.splat(<f64>(h2f(load<u16>(w)) * load<f32>(dp)));
    const lo = q8_0_lanes(w, a), hi = q8_0_lanes_hi(w, a);
    const p0 = f64x2.mul(f64x2.convert_low_i32x4_s(lo), dd), p1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(lo, lo, 2, 3, 0, 1)), dd);
    const p2 = f64x2.mul(f64x2.convert_low_i32x4_s(hi), dd), p3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(hi, hi, 2, 3, 0, 1)), dd);
    const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, c2), s3 = f64x2.add(p3, c3);
    if (tie_any(s0, s1, s2, s3)) {
      c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); c2 = fma2_tie(p2, c2); c3 = fma2_tie(p3, c3);
    } else {
      c0 = round2(s0); c1 = round2(s1); c2 = round2(s2); c3 = round2(s3);
    }
    w += 34; a += 34; dp += 4;
  }
  return hsum_float_8(f32x4_of(c0, c1), f32x4_of(c2, c3));
}
export function mm_q8_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q8_0(w + <usize>r * ws, at, xt, nb));
    }
  }
}

// Q4_K / Q5_K 6-bit scales and mins from 12 bytes (ggml's get_scale_min_k4 / the utmp shuffle)
@inline function kscale(q: usize, j: i32): i32 {
  return j < 4 ? <i32>(load<u8>(q + j) & 63) : <i32>((load<u8>(q + j + 4) & 0xf) | ((load<u8>(q + j - 4) >> 6) << 4));
}
@inline function kmin(q: usize, j: i32): i32 {
  return j < 4 ? <i32>(load<u8>(q + j + 4) & 63) : <i32>((load<u8>(q + j + 4) >> 4) | ((load<u8>(q + j) >> 6) << 4));
}

// Q4_K/Q5_K scales (bytes 0..7) and mins (bytes 8..15) of the 12 packed bytes at sc, as ggml's utmp shuffle
@inline function k4_scales(sc: usize): v128 {
  const u0 = load<u32>(sc), u1 = load<u32>(sc, 4), u2 = load<u32>(sc, 8);
  let v = i32x4.splat(u0 & 0x3f3f3f3f);
  v = i32x4.replace_lane(v, 1, (u2 & 0x0f0f0f0f) | (((u0 >> 6) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 2, u1 & 0x3f3f3f3f);
  return i32x4.replace_lane(v, 3, ((u2 >> 4) & 0x0f0f0f0f) | (((u1 >> 6) & 0x03030303) << 4));
}
// sum_j mins[j] * (bsums[2j] + bsums[2j+1]) for Q8_K activations at a
@inline function k4_summins(smv: v128, a: usize): i32 {
  const b0 = v128.load(a, 260), b1 = v128.load(a, 276);
  const ev = i8x16.shuffle(b0, b1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
  const od = i8x16.shuffle(b0, b1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
  return hsum_i32x4(i32x4.dot_i16x8_s(i16x8.add(ev, od), i16x8.extend_high_i8x16_u(smv)));
}
// One 64-value chunk of a Q4_K super-block: (low nibbles . 32 activations) * sl + (high nibbles . next 32) * sh,
// exact in i32 lanes. qs: the chunk's 32 bytes; q8: widened activations (SIMD128); aq: int8 activations
// (relaxed SIMD, the nibbles as the 7-bit operand).
@inline function q4k_chunk(qs: usize, q8: usize, aq: usize, sl: v128, sh: v128): v128 {
  let lo: v128, hi: v128;
  if (ASC_FEATURE_RELAXED_SIMD) {
    const v0 = v128.load(qs), v1 = v128.load(qs, 16), m = i8x16.splat(0x0f);
    lo = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 16), v128.and(v1, m), i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), v128.and(v0, m), i32x4.splat(0)));
    hi = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 48), v128.and(i16x8.shr_u(v1, 4), m), i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq, 32), v128.and(i16x8.shr_u(v0, 4), m), i32x4.splat(0)));
  } else {
    const m4 = i16x8.splat(0x0f);
    const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
    lo = dot32_w16(v128.and(u0, m4), v128.and(u1, m4), v128.and(u2, m4), v128.and(u3, m4), q8);
    hi = dot32_w16(i16x8.shr_u(u0, 4), i16x8.shr_u(u1, 4), i16x8.shr_u(u2, 4), i16x8.shr_u(u3, 4), q8 + 64);
  }
  return i32x4.add(i32x4.mul(lo, sl), i32x4.mul(hi, sh));
}
// Q4_K as llama.cpp runs repacked Q4_K weights (rows % 8 == 0): ggml_gemv_q4_K_8x8_q8_K fuses one
// multiply-add per super-block (the whole integer sum by d = d_w*d_a, the mins' sum by dmin*d_a; result
// acc - acc_min); the GEMM for groups of 4 activation rows (dot4t_q4_K) fuses one per 64 values.
@inline function dot_q4_K(w: usize, a: usize, ax: usize, nb: i32, exact: bool): f32 {
  let acc: f32 = 0, accm: f32 = 0;
  const m4 = i16x8.splat(0x0f);
  const end = w + <usize>nb * 144;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w)) * ad;
    const dmin = h2f(load<u16>(w, 2)) * ad;
    const smv = k4_scales(w + 4);
    // sub-block scales as i32 pairs (lane 0: low nibbles' scale, lane 1: high nibbles'), rotated per step
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let isum = i32x4.splat(0);
    let qs = w + 16, q8 = ax, aq = a + 4;
    const qe = qs + 128;
    while (qs < qe) {
      isum = i32x4.add(isum, q4k_chunk(qs, q8, aq, i32x4.shuffle(sc, sc, 0, 0, 0, 0), i32x4.shuffle(sc, sc, 1, 1, 1, 1)));
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      qs += 32; q8 += 128; aq += 64;
    }
    if (exact) {
      acc = fmaf(<f32>hsum_i32x4(isum), d, acc);
      accm = fmaf(<f32>k4_summins(smv, a), dmin, accm);
    } else {
      // 'fast' numerics: plain multiply-adds
      acc += <f32>hsum_i32x4(isum) * d;
      accm += <f32>k4_summins(smv, a) * dmin;
    }
    w += 144; a += 292; ax += 512;
  }
  return acc - accm;
}
// ggml_gemm_q4_K_8x8_q8_K for one weight row and 4 activation rows (tokens) at once: the nibbles are
// decoded once for the 4 tokens, and the 4 tokens' FMA chains (one per 64 values) run side by side in
// f64x2 lanes. a: token t's Q8_K row (as bytes apart), ax: its widened quants (axs apart); 4 results
// at y, y + ys, y + 2ys, y + 3ys.
@inline function q4k_minsums(a: usize, mins: v128): v128 {
  const b0 = v128.load(a, 260), b1 = v128.load(a, 276);
  const bs = i16x8.add(
    i8x16.shuffle(b0, b1, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29),
    i8x16.shuffle(b0, b1, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31));
  // [m0*B0 + m1*B1, m2*B2 + m3*B3, m4*B4 + m5*B5, m6*B6 + m7*B7]: the mins term of each 64 values
  return g4(i32x4.extmul_low_i16x8_s(bs, mins), i32x4.extmul_high_i16x8_s(bs, mins));
}
@inline function dot4t_q4_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f64x2.splat(0), c1 = c0, m0 = c0, m1 = c0;
  const m4 = i16x8.splat(0x0f);
  const end = w + <usize>nb * 144;
  while (w < end) {
    let yd = f32x4.splat(load<f32>(a));
    yd = f32x4.replace_lane(yd, 1, load<f32>(a + as));
    yd = f32x4.replace_lane(yd, 2, load<f32>(a + 2 * as));
    yd = f32x4.replace_lane(yd, 3, load<f32>(a + 3 * as));
    const dd = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), yd), dm = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), yd);
    const ddl = lo_f64(dd), ddh = hi_f64(dd), dml = lo_f64(dm), dmh = hi_f64(dm);
    const smv = k4_scales(w + 4);
    const mins = i16x8.extend_high_i8x16_u(smv);
    // mins terms, token-major, then transposed to step-major (M_j lane k = token k)
    const t0 = q4k_minsums(a, mins), t1 = q4k_minsums(a + as, mins), t2 = q4k_minsums(a + 2 * as, mins), t3 = q4k_minsums(a + 3 * as, mins);
    const u01a = i32x4.shuffle(t0, t1, 0, 4, 1, 5), u23a = i32x4.shuffle(t2, t3, 0, 4, 1, 5);
    const u01b = i32x4.shuffle(t0, t1, 2, 6, 3, 7), u23b = i32x4.shuffle(t2, t3, 2, 6, 3, 7);
    const mj0 = i32x4.shuffle(u01a, u23a, 0, 1, 4, 5), mj1 = i32x4.shuffle(u01a, u23a, 2, 3, 6, 7);
    const mj2 = i32x4.shuffle(u01b, u23b, 0, 1, 4, 5), mj3 = i32x4.shuffle(u01b, u23b, 2, 3, 6, 7);
    // the 8 sub-block scales on i16 lanes, rotated by 2 per step (lane 0: low nibbles', lane 1: high's).
    // The nibbles are multiplied by their scale before the dot (<= 15*63 = 945, so each i16 product pair
    // stays far inside i32 and the 64-value sum is the same exact integer as sum*scale): one i16 multiply
    // per 8 weights shared by the 4 tokens instead of an i32 multiply per token.
    let s16 = i16x8.extend_low_i8x16_u(smv);
    let mja = mj0, mjb = mj1, mjc = mj2, mjd = mj3;
    let qs = w + 16, q8 = ax;
    for (let j = 0; j < 4; j++) {
      const sl = i8x16.shuffle(s16, s16, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
      const sh = i8x16.shuffle(s16, s16, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
      const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
      const l0 = i16x8.mul(v128.and(u0, m4), sl), l1 = i16x8.mul(v128.and(u1, m4), sl);
      const l2 = i16x8.mul(v128.and(u2, m4), sl), l3 = i16x8.mul(v128.and(u3, m4), sl);
      const h0 = i16x8.mul(i16x8.shr_u(u0, 4), sh), h1 = i16x8.mul(i16x8.shr_u(u1, 4), sh);
      const h2 = i16x8.mul(i16x8.shr_u(u2, 4), sh), h3 = i16x8.mul(i16x8.shr_u(u3, 4), sh);
      const p0 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8), dot32_w16(h0, h1, h2, h3, q8 + 64));
      const p1 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + axs), dot32_w16(h0, h1, h2, h3, q8 + axs + 64));
      const p2 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + 2 * axs), dot32_w16(h0, h1, h2, h3, q8 + 2 * axs + 64));
      const p3 = i32x4.add(dot32_w16(l0, l1, l2, l3, q8 + 3 * axs), dot32_w16(h0, h1, h2, h3, q8 + 3 * axs + 64));
      // |sum of 64 values| <= 64*15*127*63 < 2^24 and the mins term likewise: exact in f32, so straight to f64
      const sj = hsum4_i32(p0, p1, p2, p3);
      const mj = mja;
      mja = mjb; mjb = mjc; mjc = mjd;
      const e0 = f64x2.mul(f64x2.convert_low_i32x4_s(sj), ddl);
      const e1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sj, sj, 2, 3, 0, 1)), ddh);
      const e2 = f64x2.mul(f64x2.convert_low_i32x4_s(mj), dml);
      const e3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(mj, mj, 2, 3, 0, 1)), dmh);
      // the four fmaf pairs with one (rarely taken) tie check
      const f0 = f64x2.add(e0, c0), f1 = f64x2.add(e1, c1), f2 = f64x2.add(e2, m0), f3 = f64x2.add(e3, m1);
      if (tie_any(f0, f1, f2, f3)) {
        c0 = fma2_tie(e0, c0); c1 = fma2_tie(e1, c1); m0 = fma2_tie(e2, m0); m1 = fma2_tie(e3, m1);
      } else {
        c0 = round2(f0); c1 = round2(f1); m0 = round2(f2); m1 = round2(f3);
      }
      s16 = i8x16.shuffle(s16, s16, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3);
      qs += 32; q8 += 128;
    }
    w += 144; a += 292; ax += 512;
  }
  const r = f32x4.sub(f32x4_of(c0, c1), f32x4_of(m0, m1));
  store<f32>(y, f32x4.extract_lane(r, 0));
  store<f32>(y + ys, f32x4.extract_lane(r, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r, 2));
  store<f32>(y + 3 * ys, f32x4.extract_lane(r, 3));
}
// Q4_K GEMM for 2 weight rows x 4 tokens per pass, in ggml_gemm_q4_K_8x8_q8_K's order (exact): each (row,
// token) still gets one fused multiply-add per 64 values for the sums and one for the mins, as dot4t_q4_K,
// but the 4 activation vectors loaded per step feed 2 rows, and the nibbles are multiplied by their 6-bit
// scale on i16 lanes (<= 945, the 64-value sums stay < 2^24: exact in f32) once for the 4 tokens.
@inline function dot2r4t_q4_K(w: usize, ws: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c00 = f64x2.splat(0), c01 = c00, m00 = c00, m01 = c00, c10 = c00, c11 = c00, m10 = c00, m11 = c00;
  const m4 = i16x8.splat(0x0f);
  for (let b = 0; b < nb; b++) {
    const w1 = w + ws;
    let yd = f32x4.splat(load<f32>(a));
    yd = f32x4.replace_lane(yd, 1, load<f32>(a + as));
    yd = f32x4.replace_lane(yd, 2, load<f32>(a + 2 * as));
    yd = f32x4.replace_lane(yd, 3, load<f32>(a + 3 * as));
    const dd0 = f32x4.mul(f32x4.splat(h2f(load<u16>(w))), yd), dm0 = f32x4.mul(f32x4.splat(h2f(load<u16>(w, 2))), yd);
    const dd1 = f32x4.mul(f32x4.splat(h2f(load<u16>(w1))), yd), dm1 = f32x4.mul(f32x4.splat(h2f(load<u16>(w1, 2))), yd);
    const smv0 = k4_scales(w + 4), smv1 = k4_scales(w1 + 4);
    const mins0 = i16x8.extend_high_i8x16_u(smv0), mins1 = i16x8.extend_high_i8x16_u(smv1);
    let sc0 = i16x8.extend_low_i8x16_u(smv0), sc1 = i16x8.extend_low_i8x16_u(smv1);
    // mins terms per 64-value chunk (lane = token), transposed once per super-block and rotated per chunk
    let t0 = q4k_minsums(a, mins0), t1 = q4k_minsums(a + as, mins0), t2 = q4k_minsums(a + 2 * as, mins0), t3 = q4k_minsums(a + 3 * as, mins0);
    let ua = i32x4.shuffle(t0, t1, 0, 4, 1, 5), ub = i32x4.shuffle(t2, t3, 0, 4, 1, 5);
    let uc = i32x4.shuffle(t0, t1, 2, 6, 3, 7), ud = i32x4.shuffle(t2, t3, 2, 6, 3, 7);
    let ma0 = i32x4.shuffle(ua, ub, 0, 1, 4, 5), mb0 = i32x4.shuffle(ua, ub, 2, 3, 6, 7);
    let mc0 = i32x4.shuffle(uc, ud, 0, 1, 4, 5), md0 = i32x4.shuffle(uc, ud, 2, 3, 6, 7);
    t0 = q4k_minsums(a, mins1); t1 = q4k_minsums(a + as, mins1); t2 = q4k_minsums(a + 2 * as, mins1); t3 = q4k_minsums(a + 3 * as, mins1);
    ua = i32x4.shuffle(t0, t1, 0, 4, 1, 5); ub = i32x4.shuffle(t2, t3, 0, 4, 1, 5);
    uc = i32x4.shuffle(t0, t1, 2, 6, 3, 7); ud = i32x4.shuffle(t2, t3, 2, 6, 3, 7);
    let ma1 = i32x4.shuffle(ua, ub, 0, 1, 4, 5), mb1 = i32x4.shuffle(ua, ub, 2, 3, 6, 7);
    let mc1 = i32x4.shuffle(uc, ud, 0, 1, 4, 5), md1 = i32x4.shuffle(uc, ud, 2, 3, 6, 7);
    let qs = w + 16, q8 = ax;
    for (let j = 0; j < 4; j++) {
      let p00 = i32x4.splat(0), p01 = p00, p02 = p00, p03 = p00, p10 = p00, p11 = p00, p12 = p00, p13 = p00;
      for (let half = 0; half < 2; half++) {
        // sub-block 2j + half: the low (half 0) or high (half 1) nibbles of the chunk's 32 bytes
        const s0 = i8x16.shuffle(sc0, sc0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
        const s1 = i8x16.shuffle(sc1, sc1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
        const sh = half << 2;
        for (let k: usize = 0; k < 32; k += 8) {
          const x0 = i16x8.mul(v128.and(i16x8.shr_u(v128.load8x8_u(qs + k), sh), m4), s0);
          const x1 = i16x8.mul(v128.and(i16x8.shr_u(v128.load8x8_u(qs + ws + k), sh), m4), s1);
          const o = q8 + (k << 1);
          let at = v128.load(o);
          p00 = i32x4.add(p00, i32x4.dot_i16x8_s(x0, at)); p10 = i32x4.add(p10, i32x4.dot_i16x8_s(x1, at));
          at = v128.load(o + axs);
          p01 = i32x4.add(p01, i32x4.dot_i16x8_s(x0, at)); p11 = i32x4.add(p11, i32x4.dot_i16x8_s(x1, at));
          at = v128.load(o + 2 * axs);
          p02 = i32x4.add(p02, i32x4.dot_i16x8_s(x0, at)); p12 = i32x4.add(p12, i32x4.dot_i16x8_s(x1, at));
          at = v128.load(o + 3 * axs);
          p03 = i32x4.add(p03, i32x4.dot_i16x8_s(x0, at)); p13 = i32x4.add(p13, i32x4.dot_i16x8_s(x1, at));
        }
        sc0 = i8x16.shuffle(sc0, sc0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
        sc1 = i8x16.shuffle(sc1, sc1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
        q8 += 64;
      }
      qs += 32;
      // the chunk's exact sums (lane = token) and mins terms, then the fmaf chains as dot4t_q4_K
      const sj0 = hsum4_i32(p00, p01, p02, p03), sj1 = hsum4_i32(p10, p11, p12, p13);
      const mj0 = ma0, mj1 = ma1;
      ma0 = mb0; mb0 = mc0; mc0 = md0; ma1 = mb1; mb1 = mc1; mc1 = md1;
      let e0 = f64x2.mul(f64x2.convert_low_i32x4_s(sj0), lo_f64(dd0));
      let e1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sj0, sj0, 2, 3, 0, 1)), hi_f64(dd0));
      let e2 = f64x2.mul(f64x2.convert_low_i32x4_s(mj0), lo_f64(dm0));
      let e3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(mj0, mj0, 2, 3, 0, 1)), hi_f64(dm0));
      let f0 = f64x2.add(e0, c00), f1 = f64x2.add(e1, c01), f2 = f64x2.add(e2, m00), f3 = f64x2.add(e3, m01);
      if (tie_any(f0, f1, f2, f3)) {
        c00 = fma2_tie(e0, c00); c01 = fma2_tie(e1, c01); m00 = fma2_tie(e2, m00); m01 = fma2_tie(e3, m01);
      } else {
        c00 = round2(f0); c01 = round2(f1); m00 = round2(f2); m01 = round2(f3);
      }
      e0 = f64x2.mul(f64x2.convert_low_i32x4_s(sj1), lo_f64(dd1));
      e1 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(sj1, sj1, 2, 3, 0, 1)), hi_f64(dd1));
      e2 = f64x2.mul(f64x2.convert_low_i32x4_s(mj1), lo_f64(dm1));
      e3 = f64x2.mul(f64x2.convert_low_i32x4_s(i32x4.shuffle(mj1, mj1, 2, 3, 0, 1)), hi_f64(dm1));
      f0 = f64x2.add(e0, c10); f1 = f64x2.add(e1, c11); f2 = f64x2.add(e2, m10); f3 = f64x2.add(e3, m11);
      if (tie_any(f0, f1, f2, f3)) {
        c10 = fma2_tie(e0, c10); c11 = fma2_tie(e1, c11); m10 = fma2_tie(e2, m10); m11 = fma2_tie(e3, m11);
      } else {
        c10 = round2(f0); c11 = round2(f1); m10 = round2(f2); m11 = round2(f3);
      }
    }
    w += 144; a += 292; ax += 512;
  }
  const r0 = f32x4.sub(f32x4_of(c00, c01), f32x4_of(m00, m01)), r1 = f32x4.sub(f32x4_of(c10, c11), f32x4_of(m10, m11));
  store<f32>(y, f32x4.extract_lane(r0, 0)); store<f32>(y + ys, f32x4.extract_lane(r0, 1));
  store<f32>(y + 2 * ys, f32x4.extract_lane(r0, 2)); store<f32>(y + 3 * ys, f32x4.extract_lane(r0, 3));
  store<f32>(y + 4, f32x4.extract_lane(r1, 0)); store<f32>(y + ys + 4, f32x4.extract_lane(r1, 1));
  store<f32>(y + 2 * ys + 4, f32x4.extract_lane(r1, 2)); store<f32>(y + 3 * ys + 4, f32x4.extract_lane(r1, 3));
}
// activation rows t < nGemm (a multiple of 4) take the GEMM order, 4 at a time; the rest the GEMV order,
// whose float side is ggml's (exact) or plain multiply-adds (fast)
@inline function mm_q4_K_any(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, nGemm: i32, exact: bool): void {
  // tiles of ROW_TILE rows stay in L1 while the activation rows pass over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 4 <= nGemm; t += 4) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      let r = rt;
      for (; r + 2 <= re; r += 2) dot2r4t_q4_K(w + <usize>r * ws, ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
      if (r < re) dot4t_q4_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q4_K(w + <usize>r * ws, at, xt, nb, exact));
    }
  }
}
export function mm_q4_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, nGemm: i32): void {
  mm_q4_K_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, nGemm, true);
}
export function mmf_q4_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize, nGemm: i32): void {
  mm_q4_K_any(r0, r1, w, ws, a, as, nTok, y, ys, nb, ax, axs, nGemm, false);
}

@inline function dot_q5_K(w: usize, a: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  const m4 = i16x8.splat(0x0f), b4 = i16x8.splat(0x10);
  const end = w + <usize>nb * 176;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w)) * ad;
    const dmin = h2f(load<u16>(w, 2)) * ad;
    const smv = k4_scales(w + 4);
    accm += dmin * <f32>k4_summins(smv, a);
    let sc = i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    let sc2 = i32x4.extend_high_i16x8_u(i16x8.extend_low_i8x16_u(smv));
    // qh bytes (element l's 5th bits for the 8 sub-blocks) on u16 lanes, shifted right by 2 per step
    let h0 = v128.load8x8_u(w, 16), h1 = v128.load8x8_u(w, 24), h2 = v128.load8x8_u(w, 32), h3 = v128.load8x8_u(w, 40);
    let isum = i32x4.splat(0);
    let qs = w + 48, q8 = a + 4;
    const qe = qs + 128;
    while (qs < qe) {
      const u0 = v128.load8x8_u(qs), u1 = v128.load8x8_u(qs, 8), u2 = v128.load8x8_u(qs, 16), u3 = v128.load8x8_u(qs, 24);
      const lo = dot32_u16(
        v128.or(v128.and(u0, m4), v128.and(i16x8.shl(h0, 4), b4)), v128.or(v128.and(u1, m4), v128.and(i16x8.shl(h1, 4), b4)),
        v128.or(v128.and(u2, m4), v128.and(i16x8.shl(h2, 4), b4)), v128.or(v128.and(u3, m4), v128.and(i16x8.shl(h3, 4), b4)), q8);
      const hi = dot32_u16(
        v128.or(i16x8.shr_u(u0, 4), v128.and(i16x8.shl(h0, 3), b4)), v128.or(i16x8.shr_u(u1, 4), v128.and(i16x8.shl(h1, 3), b4)),
        v128.or(i16x8.shr_u(u2, 4), v128.and(i16x8.shl(h2, 3), b4)), v128.or(i16x8.shr_u(u3, 4), v128.and(i16x8.shl(h3, 3), b4)), q8 + 32);
      isum = i32x4.add(isum, i32x4.add(i32x4.mul(lo, i32x4.shuffle(sc, sc, 0, 0, 0, 0)), i32x4.mul(hi, i32x4.shuffle(sc, sc, 1, 1, 1, 1))));
      sc = i32x4.shuffle(sc, sc2, 2, 3, 4, 5);
      sc2 = i32x4.shuffle(sc2, sc2, 2, 3, 0, 1);
      h0 = i16x8.shr_u(h0, 2); h1 = i16x8.shr_u(h1, 2); h2 = i16x8.shr_u(h2, 2); h3 = i16x8.shr_u(h3, 2);
      qs += 32; q8 += 64;
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(d)));
    w += 176; a += 292;
  }
  return hsum_f32x4(acc) - accm;
}
export function mm_q5_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q5_K(w + <usize>r * ws, at, nb));
    }
  }
}

// 16 values (u8, < 64) . their activations -> sums of 4 consecutive values (i32x4): widened activations at a
// (SIMD128) or one relaxed dot product with the int8 activations at aq (the values are the 7-bit operand)
@inline function dot16_g4x(u: v128, a: usize, aq: usize): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(aq), u, i32x4.splat(0));
  return dot16_g4(u, a);
}
// 16 unsigned bytes . 16 widened activations at a -> sums of 4 consecutive values (i32x4)
@inline function dot16_g4(u: v128, a: usize): v128 {
  return g4(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(u), v128.load(a)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(u), v128.load(a, 16)));
}
// ggml_vec_dot_q6_K_q8_K (AVX2; Q6_K is not repacked): 8 int32 lanes per super-block (lane l = values
// 4l..4l+3 of every 32, times their 16-value scale, minus 32*(sc[2l]*bsum[2l] + sc[2l+1]*bsum[2l+1])),
// each converted to f32 and fused-multiply-added by d into its own accumulator, hsum_float_8
@inline function dot_q6_K(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  while (w < end) {
    const dd = f64x2.splat(<f64>(load<f32>(a) * h2f(load<u16>(w, 208))));
    const scv = v128.load(w, 192);
    const s16l = i16x8.extend_low_i8x16_s(scv), s16h = i16x8.extend_high_i8x16_s(scv);
    let l0 = i32x4.mul(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.splat(-32));
    let l1 = i32x4.mul(i32x4.dot_i16x8_s(s16h, v128.load(a, 276)), i32x4.splat(-32));
    // step k = (half n, l/16) uses scales 8n + l/16 + {0, 2, 4, 6}; even steps feed lanes 0..3, odd 4..7
    const ev = i8x16.shuffle(s16l, s16h, 0, 1, 4, 5, 8, 9, 12, 13, 16, 17, 20, 21, 24, 25, 28, 29);
    const od = i8x16.shuffle(s16l, s16h, 2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 31);
    let v0 = i32x4.extend_low_i16x8_s(ev), v1 = i32x4.extend_low_i16x8_s(od);
    let v2 = i32x4.extend_high_i16x8_s(ev), v3 = i32x4.extend_high_i16x8_s(od);
    let ql = w, qh = w + 128, q8 = ax, aq = a + 4;
    for (let k = 0; k < 4; k++) {
      const qa = v128.load(ql), qb = v128.load(ql, 32), h = v128.load(qh);
      const x1 = v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30));
      const x2 = v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30));
      const x3 = v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30));
      const x4 = v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30));
      const p = i32x4.add(
        i32x4.add(i32x4.mul(dot16_g4x(x1, q8, aq), i32x4.shuffle(v0, v0, 0, 0, 0, 0)), i32x4.mul(dot16_g4x(x2, q8 + 64, aq + 32), i32x4.shuffle(v0, v0, 1, 1, 1, 1))),
        i32x4.add(i32x4.mul(dot16_g4x(x3, q8 + 128, aq + 64), i32x4.shuffle(v0, v0, 2, 2, 2, 2)), i32x4.mul(dot16_g4x(x4, q8 + 192, aq + 96), i32x4.shuffle(v0, v0, 3, 3, 3, 3))));
      if (k & 1) l1 = i32x4.add(l1, p); else l0 = i32x4.add(l0, p);
      const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
      // k: 0 -> (ql 0, qh 0, q8 0), 1 -> (16, 16, 16), 2 -> (64, 32, 128), 3 -> (80, 48, 144)
      const step: usize = (k & 1) ? 48 : 16;
      ql += step; qh += 16; q8 += (k & 1) ? 224 : 32; aq += (k & 1) ? 112 : 16;
    }
    const f0 = f32x4.convert_i32x4_s(l0), f1 = f32x4.convert_i32x4_s(l1);
    c0 = fma2(f64x2.mul(lo_f64(f0), dd), c0);
    c1 = fma2(f64x2.mul(hi_f64(f0), dd), c1);
    c2 = fma2(f64x2.mul(lo_f64(f1), dd), c2);
    c3 = fma2(f64x2.mul(hi_f64(f1), dd), c3);
    w += 210; a += 292; ax += 512;
  }
  return hsum_float_8(f32x4_of(c0, c1), f32x4_of(c2, c3));
}
// ggml_vec_dot_q6_K_q8_K's order for two activation rows (tokens) at once, for prefill: the 6-bit values
// are decoded once for both tokens with their 16-value scale folded in (q * sc on i16 lanes, |.| <= 63*128),
// so each token's lane sums are plain i16 dot products giving the same exact integers as dot_q6_K's
// (|lane| <= 32 * 8064 * 128 < 2^31); ggml's mins term stays per sub-block pair as there. Each token keeps
// its own 8 fmaf lanes and hsum_float_8. a/ax: token 0's Q8_K row and widened quants, token 1's as/axs on.
// 16 scaled weights (i16, two vectors) . 16 widened activations at o -> sums of 4 consecutive values
@inline function q6w_g4(wl: v128, wh: v128, o: usize): v128 {
  return g4(i32x4.dot_i16x8_s(wl, v128.load(o)), i32x4.dot_i16x8_s(wh, v128.load(o, 16)));
}
@inline function dot2t_q6_K(w: usize, a: usize, as: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0;
  let e0 = c0, e1 = c0, e2 = c0, e3 = c0;
  const m4 = i8x16.splat(0x0f), m30 = i8x16.splat(0x30);
  const end = w + <usize>nb * 210;
  while (w < end) {
    const dw = h2f(load<u16>(w, 208));
    const dd0 = f64x2.splat(<f64>(load<f32>(a) * dw)), dd1 = f64x2.splat(<f64>(load<f32>(a + as) * dw));
    const scv = v128.load(w, 192);
    // step k uses scales 8*(k>>1) + (k&1) + {0, 2, 4, 6}: lanes 0, 2, 4, 6 of ss0, rotated per step
    const s16l = i16x8.extend_low_i8x16_s(scv), s16h = i16x8.extend_high_i8x16_s(scv);
    let ss0 = s16l, ss1 = i8x16.shuffle(s16l, s16l, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
    let ss2 = s16h, ss3 = i8x16.shuffle(s16h, s16h, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1);
    // ggml's mins term per lane: -32 * (sc[2l]*bsum[2l] + sc[2l+1]*bsum[2l+1]) (sub-block pairs, not the lanes' values)
    let l0 = i32x4.mul(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.splat(-32));
    let l1 = i32x4.mul(i32x4.dot_i16x8_s(s16h, v128.load(a, 276)), i32x4.splat(-32));
    let k0 = i32x4.mul(i32x4.dot_i16x8_s(s16l, v128.load(a + as, 260)), i32x4.splat(-32));
    let k1 = i32x4.mul(i32x4.dot_i16x8_s(s16h, v128.load(a + as, 276)), i32x4.splat(-32));
    let ql = w, qh = w + 128, q8 = ax;
    for (let k = 0; k < 4; k++) {
      const ss = ss0;
      ss0 = ss1; ss1 = ss2; ss2 = ss3;
      const qa = v128.load(ql), qb = v128.load(ql, 32), h = v128.load(qh);
      // x1..x4 (16 values each, at activation offsets 0, 64, 128, 192 bytes of i16) times their scale
      const x1 = (v128.or(v128.and(qa, m4), v128.and(i16x8.shl(h, 4), m30)));
      const x2 = (v128.or(v128.and(qb, m4), v128.and(i16x8.shl(h, 2), m30)));
      const x3 = (v128.or(v128.and(i16x8.shr_u(qa, 4), m4), v128.and(h, m30)));
      const x4 = (v128.or(v128.and(i16x8.shr_u(qb, 4), m4), v128.and(i16x8.shr_u(h, 2), m30)));
      const sc1 = i8x16.shuffle(ss, ss, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1);
      const sc2 = i8x16.shuffle(ss, ss, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5);
      const sc3 = i8x16.shuffle(ss, ss, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9);
      const sc4 = i8x16.shuffle(ss, ss, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13);
      const w1l = i16x8.mul(i16x8.extend_low_i8x16_s(x1), sc1), w1h = i16x8.mul(i16x8.extend_high_i8x16_s(x1), sc1);
      const w2l = i16x8.mul(i16x8.extend_low_i8x16_s(x2), sc2), w2h = i16x8.mul(i16x8.extend_high_i8x16_s(x2), sc2);
      const w3l = i16x8.mul(i16x8.extend_low_i8x16_s(x3), sc3), w3h = i16x8.mul(i16x8.extend_high_i8x16_s(x3), sc3);
      const w4l = i16x8.mul(i16x8.extend_low_i8x16_s(x4), sc4), w4h = i16x8.mul(i16x8.extend_high_i8x16_s(x4), sc4);
      const p = i32x4.add(i32x4.add(q6w_g4(w1l, w1h, q8), q6w_g4(w2l, w2h, q8 + 64)), i32x4.add(q6w_g4(w3l, w3h, q8 + 128), q6w_g4(w4l, w4h, q8 + 192)));
      const q8b = q8 + axs;
      const r = i32x4.add(i32x4.add(q6w_g4(w1l, w1h, q8b), q6w_g4(w2l, w2h, q8b + 64)), i32x4.add(q6w_g4(w3l, w3h, q8b + 128), q6w_g4(w4l, w4h, q8b + 192)));
      if (k & 1) { l1 = i32x4.add(l1, p); k1 = i32x4.add(k1, r); } else { l0 = i32x4.add(l0, p); k0 = i32x4.add(k0, r); }
      // k: 0 -> (ql 0, qh 0, q8 0), 1 -> (16, 16, 16), 2 -> (64, 32, 128), 3 -> (80, 48, 144)
      const step: usize = (k & 1) ? 48 : 16;
      ql += step; qh += 16; q8 += (k & 1) ? 224 : 32;
    }
    const f0 = f32x4.convert_i32x4_s(l0), f1 = f32x4.convert_i32x4_s(l1);
    const g0 = f32x4.convert_i32x4_s(k0), g1 = f32x4.convert_i32x4_s(k1);
    const p0 = f64x2.mul(lo_f64(f0), dd0), p1 = f64x2.mul(hi_f64(f0), dd0), p2 = f64x2.mul(lo_f64(f1), dd0), p3 = f64x2.mul(hi_f64(f1), dd0);
    const s0 = f64x2.add(p0, c0), s1 = f64x2.add(p1, c1), s2 = f64x2.add(p2, c2), s3 = f64x2.add(p3, c3);
    if (tie_any(s0, s1, s2, s3)) {
      c0 = fma2_tie(p0, c0); c1 = fma2_tie(p1, c1); c2 = fma2_tie(p2, c2); c3 = fma2_tie(p3, c3);
    } else {
      c0 = round2(s0); c1 = round2(s1); c2 = round2(s2); c3 = round2(s3);
    }
    const q0 = f64x2.mul(lo_f64(g0), dd1), q1 = f64x2.mul(hi_f64(g0), dd1), q2 = f64x2.mul(lo_f64(g1), dd1), q3 = f64x2.mul(hi_f64(g1), dd1);
    const t0 = f64x2.add(q0, e0), t1 = f64x2.add(q1, e1), t2 = f64x2.add(q2, e2), t3 = f64x2.add(q3, e3);
    if (tie_any(t0, t1, t2, t3)) {
      e0 = fma2_tie(q0, e0); e1 = fma2_tie(q1, e1); e2 = fma2_tie(q2, e2); e3 = fma2_tie(q3, e3);
    } else {
      e0 = round2(t0); e1 = round2(t1); e2 = round2(t2); e3 = round2(t3);
    }
    w += 210; a += 292; ax += 512;
  }
  store<f32>(y, hsum_float_8(f32x4_of(c0, c1), f32x4_of(c2, c3)));
  store<f32>(y + ys, hsum_float_8(f32x4_of(e0, e1), f32x4_of(e2, e3)));
}
export function mm_q6_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 2 <= nTok; t += 2) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) dot2t_q6_K(w + <usize>r * ws, at, as, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q6_K(w + <usize>r * ws, at, xt, nb));
    }
  }
}

// Q2_K x Q8_K: 2-bit values on u16 lanes (shifted by 2 per step), 4 sub-blocks of 16 reduced together and
// scaled by a vector of their 4-bit scales; mins through the bsums
@inline function dot_q2_K(w: usize, a: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  let accm: f32 = 0;
  const m3 = i16x8.splat(3);
  const end = w + <usize>nb * 84;
  while (w < end) {
    const ad = load<f32>(a);
    const d = h2f(load<u16>(w, 80)) * ad;
    const dmin = h2f(load<u16>(w, 82)) * ad;
    const scv = v128.load(w);
    const mn = i8x16.shr_u(scv, 4);
    const summ = hsum_i32x4(i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_u(mn), v128.load(a, 260)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_u(mn), v128.load(a, 276))));
    accm += dmin * <f32>summ;
    const sl = v128.and(scv, i8x16.splat(0x0f));
    const s16l = i16x8.extend_low_i8x16_u(sl), s16h = i16x8.extend_high_i8x16_u(sl);
    let v0 = i32x4.extend_low_i16x8_u(s16l), v1 = i32x4.extend_high_i16x8_u(s16l);
    let v2 = i32x4.extend_low_i16x8_u(s16h), v3 = i32x4.extend_high_i16x8_u(s16h);
    let isum = i32x4.splat(0);
    let q8 = a + 4;
    for (let k: usize = 0; k < 2; k++) {
      const q2 = w + 16 + (k << 5);
      let u0 = v128.load8x8_u(q2), u1 = v128.load8x8_u(q2, 8), u2 = v128.load8x8_u(q2, 16), u3 = v128.load8x8_u(q2, 24);
      for (let h = 0; h < 2; h++) {
        // two shift steps: sub-blocks (first 16, last 16) x 2
        const pa = i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m3), v128.load8x8_s(q8)), i32x4.dot_i16x8_s(v128.and(u1, m3), v128.load8x8_s(q8, 8)));
        const pb = i32x4.add(i32x4.dot_i16x8_s(v128.and(u2, m3), v128.load8x8_s(q8, 16)), i32x4.dot_i16x8_s(v128.and(u3, m3), v128.load8x8_s(q8, 24)));
        u0 = i16x8.shr_u(u0, 2); u1 = i16x8.shr_u(u1, 2); u2 = i16x8.shr_u(u2, 2); u3 = i16x8.shr_u(u3, 2);
        const pc = i32x4.add(i32x4.dot_i16x8_s(v128.and(u0, m3), v128.load8x8_s(q8, 32)), i32x4.dot_i16x8_s(v128.and(u1, m3), v128.load8x8_s(q8, 40)));
        const pd = i32x4.add(i32x4.dot_i16x8_s(v128.and(u2, m3), v128.load8x8_s(q8, 48)), i32x4.dot_i16x8_s(v128.and(u3, m3), v128.load8x8_s(q8, 56)));
        u0 = i16x8.shr_u(u0, 2); u1 = i16x8.shr_u(u1, 2); u2 = i16x8.shr_u(u2, 2); u3 = i16x8.shr_u(u3, 2);
        isum = i32x4.add(isum, i32x4.mul(hsum4_i32(pa, pb, pc, pd), v0));
        const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
        q8 += 64;
      }
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(d)));
    w += 84; a += 292;
  }
  return hsum_f32x4(acc) - accm;
}
export function mm_q2_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q2_K(w + <usize>r * ws, at, nb));
    }
  }
}

// Q3_K's 16 6-bit scales (unsigned, before the -32) from the 12 packed bytes at s, as ggml's aux shuffle
@inline function q3_scales(s: usize): v128 {
  const a0 = load<u32>(s), a1 = load<u32>(s, 4), tmp = load<u32>(s, 8);
  let v = i32x4.splat((a0 & 0x0f0f0f0f) | (((tmp >> 0) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 1, (a1 & 0x0f0f0f0f) | (((tmp >> 2) & 0x03030303) << 4));
  v = i32x4.replace_lane(v, 2, ((a0 >> 4) & 0x0f0f0f0f) | (((tmp >> 4) & 0x03030303) << 4));
  return i32x4.replace_lane(v, 3, ((a1 >> 4) & 0x0f0f0f0f) | (((tmp >> 6) & 0x03030303) << 4));
}
// Q3_K x Q8_K: x = (q & 3) | hbit << 2 in 0..7 on u16 lanes, value = x - 4; the -4 is folded out through
// the bsums as -4 * sum_j scale_j * bsum_j
@inline function dot_q3_K(w: usize, a: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  const m3 = i16x8.splat(3), m4 = i16x8.splat(4);
  const end = w + <usize>nb * 110;
  while (w < end) {
    const d = h2f(load<u16>(w, 108)) * load<f32>(a);
    const sc = i8x16.sub(q3_scales(w + 96), i8x16.splat(32));
    const s16l = i16x8.extend_low_i8x16_s(sc), s16h = i16x8.extend_high_i8x16_s(sc);
    const off = i32x4.add(i32x4.dot_i16x8_s(s16l, v128.load(a, 260)), i32x4.dot_i16x8_s(s16h, v128.load(a, 276)));
    let isum = i32x4.mul(off, i32x4.splat(-4));
    let v0 = i32x4.extend_low_i16x8_s(s16l), v1 = i32x4.extend_high_i16x8_s(s16l);
    let v2 = i32x4.extend_low_i16x8_s(s16h), v3 = i32x4.extend_high_i16x8_s(s16h);
    let q8 = a + 4;
    // 4 steps of 4 sub-blocks: step i reads quants at w + 32 + 32*(i >> 1), shifts 4*(i & 1) and +2,
    // and hmask bits 2i and 2i+1; operands are reloaded per step to keep few vectors live
    for (let i: u32 = 0; i < 4; i++) {
      const q3 = w + 32 + ((<usize>i >> 1) << 5);
      const sh = (i & 1) << 2, bt = i << 1;
      const u0 = i16x8.shr_u(v128.load8x8_u(q3), sh), u1 = i16x8.shr_u(v128.load8x8_u(q3, 8), sh);
      const h0 = i16x8.shr_u(v128.load8x8_u(w), bt), h1 = i16x8.shr_u(v128.load8x8_u(w, 8), bt);
      const pa = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(u0, m3), v128.and(i16x8.shl(h0, 2), m4)), v128.load8x8_s(q8)),
        i32x4.dot_i16x8_s(v128.or(v128.and(u1, m3), v128.and(i16x8.shl(h1, 2), m4)), v128.load8x8_s(q8, 8)));
      const pc = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u0, 2), m3), v128.and(i16x8.shl(h0, 1), m4)), v128.load8x8_s(q8, 32)),
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u1, 2), m3), v128.and(i16x8.shl(h1, 1), m4)), v128.load8x8_s(q8, 40)));
      const u2 = i16x8.shr_u(v128.load8x8_u(q3, 16), sh), u3 = i16x8.shr_u(v128.load8x8_u(q3, 24), sh);
      const h2 = i16x8.shr_u(v128.load8x8_u(w, 16), bt), h3 = i16x8.shr_u(v128.load8x8_u(w, 24), bt);
      const pb = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(u2, m3), v128.and(i16x8.shl(h2, 2), m4)), v128.load8x8_s(q8, 16)),
        i32x4.dot_i16x8_s(v128.or(v128.and(u3, m3), v128.and(i16x8.shl(h3, 2), m4)), v128.load8x8_s(q8, 24)));
      const pd = i32x4.add(
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u2, 2), m3), v128.and(i16x8.shl(h2, 1), m4)), v128.load8x8_s(q8, 48)),
        i32x4.dot_i16x8_s(v128.or(v128.and(i16x8.shr_u(u3, 2), m3), v128.and(i16x8.shl(h3, 1), m4)), v128.load8x8_s(q8, 56)));
      isum = i32x4.add(isum, i32x4.mul(hsum4_i32(pa, pb, pc, pd), v0));
      const t = v0; v0 = v1; v1 = v2; v2 = v3; v3 = t;
      q8 += 64;
    }
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(isum), f32x4.splat(d)));
    w += 110; a += 292;
  }
  return hsum_f32x4(acc);
}
export function mm_q3_K(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_q3_K(w + <usize>r * ws, at, nb));
    }
  }
}

// IQ4_NL (f16 d, 16 B of 4-bit indices into a fixed int8 table) x Q8_0 (with the aux table for d)
@inline function kvalues_iq4nl(): v128 {
  return i8x16(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);
}
@inline function dot_iq4_nl(w: usize, a: usize, ax: usize, nb: i32): f32 {
  let acc = f32x4.splat(0);
  const m4 = i8x16.splat(0x0f), kv = kvalues_iq4nl();
  let dp = ax;
  const we = w + <usize>nb * 18;
  while (w < we) {
    const q = v128.load(w, 2);
    const lo = i8x16.swizzle(kv, v128.and(q, m4)), hi = i8x16.swizzle(kv, v128.and(i16x8.shr_u(q, 4), m4));
    const p = i32x4.add(dot_s8s8(lo, v128.load(a, 2)), dot_s8s8(hi, v128.load(a, 18)));
    acc = f32x4.add(acc, f32x4.mul(f32x4.convert_i32x4_s(p), f32x4.splat(h2f(load<u16>(w)) * load<f32>(dp))));
    w += 18; a += 34; dp += 4;
  }
  return hsum_f32x4(acc);
}
export function mm_iq4_nl(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_iq4_nl(w + <usize>r * ws, at, xt, nb));
    }
  }
}

// IQ4_XS (136 B / 256: f16 d, u16 scales_h, u8 scales_l[4], qs[128]) x Q8_K; 6-bit sub-block scales - 32
@inline function dot_iq4_xs(w: usize, a: usize, nb: i32): f32 {
  let acc: f32 = 0;
  const m4 = i8x16.splat(0x0f), kv = kvalues_iq4nl();
  const end = w + <usize>nb * 136;
  while (w < end) {
    const d = h2f(load<u16>(w)) * load<f32>(a);
    const sh = <u32>load<u16>(w, 2);
    const sl = load<u32>(w, 4);
    let isum = 0;
    let q = w + 8, q8 = a + 4;
    for (let ib: u32 = 0; ib < 8; ib++) {
      const ls = <i32>(((sl >> (4 * ib)) & 0xf) | (((sh >> (2 * ib)) & 3) << 4)) - 32;
      const v = v128.load(q);
      const lo = i8x16.swizzle(kv, v128.and(v, m4)), hi = i8x16.swizzle(kv, v128.and(i16x8.shr_u(v, 4), m4));
      isum += ls * hsum_i32x4(i32x4.add(dot_s8s8(lo, v128.load(q8)), dot_s8s8(hi, v128.load(q8, 16))));
      q += 16; q8 += 32;
    }
    acc += d * <f32>isum;
    w += 136; a += 292;
  }
  return acc;
}
export function mm_iq4_xs(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_iq4_xs(w + <usize>r * ws, at, nb));
    }
  }
}

// BF16 weights x f32 activations already rounded through bf16 (round_bf16), n values
@inline function dot_bf16(w: usize, a: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0);
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const h = v128.load(w + (<usize>i << 1));
    const o = <usize>i << 2;
    s0 = f32x4.add(s0, f32x4.mul(i32x4.shl(i32x4.extend_low_i16x8_u(h), 16), v128.load(a + o)));
    s1 = f32x4.add(s1, f32x4.mul(i32x4.shl(i32x4.extend_high_i16x8_u(h), 16), v128.load(a + o, 16)));
  }
  let s = hsum_f32x4(f32x4.add(s0, s1));
  for (; i < n; i++) s += reinterpret<f32>(<u32>load<u16>(w + (<usize>i << 1)) << 16) * load<f32>(a + (<usize>i << 2));
  return s;
}
export function mm_bf16(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, n: i32): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_bf16(w + <usize>r * ws, at, n));
    }
  }
}
// y = f32(bf16(x)) with round to nearest even (NaN kept quiet), as ggml's f32 -> bf16
export function round_bf16(i0: i32, i1: i32, x: usize, y: usize): void {
  for (let i = i0; i < i1; i++) {
    const u = load<u32>(x + (<usize>i << 2));
    let h: u32;
    if ((u & 0x7fffffff) > 0x7f800000) h = ((u >> 16) | 64) & 0xffff;
    else h = (u + 0x7fff + ((u >> 16) & 1)) >> 16;
    store<u32>(y + (<usize>i << 2), h << 16);
  }
}

// F32 and F16 weights, in the two orders of llama.cpp's x86 build (src/backends/reference/matmul.ts):
// - a batch (nTok >= 2, n % 16 == 0): llamafile's tinyBLAS, 16 lanes (lane l: elements l, l+16, ...)
//   accumulated with FMA, then _mm512_reduce_add_ps;
// - one token: ggml_vec_dot_f32/_f16, 64 lanes (4 accumulators x 16) over 64-element steps, combined
//   as (0+2)+(1+3), reduce_add, then the tail (f32 for F32, double for F16).
// F16 x f16-rounded activations: the products are exact in f32, so FMA = an f32 add of the product.

// plain f32 dot (two f32x4 accumulators): the attention kernel's K.Q on an f32 copy of the keys
@inline function dot_f32(w: usize, a: usize, n: i32): f32 {
  let s0 = f32x4.splat(0), s1 = f32x4.splat(0);
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const o = <usize>i << 2;
    s0 = f32x4.add(s0, f32x4.mul(v128.load(w + o), v128.load(a + o)));
    s1 = f32x4.add(s1, f32x4.mul(v128.load(w + o, 16), v128.load(a + o, 16)));
  }
  let s = hsum_f32x4(f32x4.add(s0, s1));
  for (; i < n; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(a + (<usize>i << 2));
  return s;
}

@inline function f16x4(w: usize): v128 { return h2f4_finite(v128.load16x4_u(w)); }

@inline function dot_f16_tiny(w: usize, a: usize, n: i32): f32 {
  let l0 = f32x4.splat(0), l1 = l0, l2 = l0, l3 = l0;
  for (let i = 0; i < n; i += 16) {
    const wp = w + (<usize>i << 1), ap = a + (<usize>i << 2);
    l0 = f32x4.add(l0, f32x4.mul(f16x4(wp), v128.load(ap)));
    l1 = f32x4.add(l1, f32x4.mul(f16x4(wp + 8), v128.load(ap, 16)));
    l2 = f32x4.add(l2, f32x4.mul(f16x4(wp + 16), v128.load(ap, 32)));
    l3 = f32x4.add(l3, f32x4.mul(f16x4(wp + 24), v128.load(ap, 48)));
  }
  return reduce_add_16(l0, l1, l2, l3);
}
// lanes 4q..4q+3 of ggml_vec_dot_f16's 16 combined lanes: accumulators 4q.., 16+4q.., 32+4q.., 48+4q..
@inline function f16_vec_lanes(w: usize, a: usize, np: i32, q: usize): v128 {
  let s0 = f32x4.splat(0), s1 = s0, s2 = s0, s3 = s0;
  for (let i = 0; i < np; i += 64) {
    const wp = w + (<usize>i << 1) + (q << 3), ap = a + (<usize>i << 2) + (q << 4);
    s0 = f32x4.add(s0, f32x4.mul(f16x4(wp), v128.load(ap)));
    s1 = f32x4.add(s1, f32x4.mul(f16x4(wp + 32), v128.load(ap, 64)));
    s2 = f32x4.add(s2, f32x4.mul(f16x4(wp + 64), v128.load(ap, 128)));
    s3 = f32x4.add(s3, f32x4.mul(f16x4(wp + 96), v128.load(ap, 192)));
  }
  return f32x4.add(f32x4.add(s0, s2), f32x4.add(s1, s3));
}
@inline function dot_f16_vec(w: usize, a: usize, n: i32): f32 {
  const np = n & ~63;
  let s = <f64>reduce_add_16(f16_vec_lanes(w, a, np, 0), f16_vec_lanes(w, a, np, 1), f16_vec_lanes(w, a, np, 2), f16_vec_lanes(w, a, np, 3));
  for (let i = np; i < n; i++) s += <f64>(h2f(load<u16>(w + (<usize>i << 1))) * load<f32>(a + (<usize>i << 2)));
  return <f32>s;
}
export function mm_f16(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, n: i32): void {
  const tiny = nTok >= 2 && (n & 15) == 0;
  // tiles of ROW_TILE rows stay in L1 while each activation row passes over them
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      if (tiny) for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_f16_tiny(w + <usize>r * ws, at, n));
      else for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_f16_vec(w + <usize>r * ws, at, n));
    }
  }
}

// two fused lanes of an F32 dot: c += w[0..1] * a[0..1]
@inline function fma2_f32(w: usize, a: usize, c: v128): v128 {
  return fma2(f64x2.mul(f64x2.promote_low_f32x4(v128.load64_zero(w)), f64x2.promote_low_f32x4(v128.load64_zero(a))), c);
}
@inline function dot_f32_tiny(w: usize, a: usize, n: i32): f32 {
  let c0 = f64x2.splat(0), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (let i = 0; i < n; i += 16) {
    const o = <usize>i << 2;
    c0 = fma2_f32(w + o, a + o, c0); c1 = fma2_f32(w + o + 8, a + o + 8, c1);
    c2 = fma2_f32(w + o + 16, a + o + 16, c2); c3 = fma2_f32(w + o + 24, a + o + 24, c3);
    c4 = fma2_f32(w + o + 32, a + o + 32, c4); c5 = fma2_f32(w + o + 40, a + o + 40, c5);
    c6 = fma2_f32(w + o + 48, a + o + 48, c6); c7 = fma2_f32(w + o + 56, a + o + 56, c7);
  }
  return reduce_add_16(f32x4_of(c0, c1), f32x4_of(c2, c3), f32x4_of(c4, c5), f32x4_of(c6, c7));
}
// lanes 2q, 2q+1 of ggml_vec_dot_f32's 16 combined lanes (as f32 in an f64x2)
@inline function f32_vec_lanes(w: usize, a: usize, np: i32, q: usize): v128 {
  let s0 = f64x2.splat(0), s1 = s0, s2 = s0, s3 = s0;
  for (let i = 0; i < np; i += 64) {
    const o = (<usize>i << 2) + (q << 3);
    s0 = fma2_f32(w + o, a + o, s0); s1 = fma2_f32(w + o + 64, a + o + 64, s1);
    s2 = fma2_f32(w + o + 128, a + o + 128, s2); s3 = fma2_f32(w + o + 192, a + o + 192, s3);
  }
  const f0 = f32x4.demote_f64x2_zero(s0), f1 = f32x4.demote_f64x2_zero(s1), f2 = f32x4.demote_f64x2_zero(s2), f3 = f32x4.demote_f64x2_zero(s3);
  return f64x2.promote_low_f32x4(f32x4.add(f32x4.add(f0, f2), f32x4.add(f1, f3)));
}
@inline function dot_f32_vec(w: usize, a: usize, n: i32): f32 {
  const np = n & ~63;
  let s = reduce_add_16(
    f32x4_of(f32_vec_lanes(w, a, np, 0), f32_vec_lanes(w, a, np, 1)), f32x4_of(f32_vec_lanes(w, a, np, 2), f32_vec_lanes(w, a, np, 3)),
    f32x4_of(f32_vec_lanes(w, a, np, 4), f32_vec_lanes(w, a, np, 5)), f32x4_of(f32_vec_lanes(w, a, np, 6), f32_vec_lanes(w, a, np, 7)));
  for (let i = np; i < n; i++) s += load<f32>(w + (<usize>i << 2)) * load<f32>(a + (<usize>i << 2));
  return s;
}
export function mm_f32(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, n: i32): void {
  const tiny = nTok >= 2 && (n & 15) == 0;
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const at = a + <usize>t * as, yt = y + <usize>t * ys;
      if (tiny) for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_f32_tiny(w + <usize>r * ws, at, n));
      else for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot_f32_vec(w + <usize>r * ws, at, n));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// norms, softmax, rope, activations (rows [r0, r1) of n values, byte strides)

// y = x / sqrt(mean(x^2) + eps) (* w when w != 0); sum of squares in f64 as ggml
export function rms_norm(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32, eps: f32, w: usize): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    // ggml_compute_forward_rms_norm: the f32 squares summed in double, in order (an f64 sum can round)
    let sum: f64 = 0;
    let i = 0;
    for (; i < n; i++) { const v = load<f32>(xp + (<usize>i << 2)); sum += <f64>(v * v); }
    const mean = <f32>(sum / <f64>n);
    const scale: f32 = <f32>1.0 / Mathf.sqrt(mean + eps);
    const sv = f32x4.splat(scale);
    i = 0;
    if (w != 0) {
      for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(f32x4.mul(v128.load(xp + o), sv), v128.load(w + o))); }
      for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * scale * load<f32>(w + o)); }
    } else {
      for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(v128.load(xp + o), sv)); }
      for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * scale); }
    }
  }
}

// layer norm as ggml_norm: y = (x - mean) / sqrt(var + eps), then * w and + b when given (sums in f64)
export function layer_norm(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32, eps: f32, w: usize, b: usize): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    let sum: f64 = 0;
    for (let i = 0; i < n; i++) sum += <f64>load<f32>(xp + (<usize>i << 2));
    const mean = <f32>(sum / <f64>n);
    let sq: f64 = 0;
    for (let i = 0; i < n; i++) {
      const v = load<f32>(xp + (<usize>i << 2)) - mean;
      store<f32>(yp + (<usize>i << 2), v);
      sq += <f64>(v * v);
    }
    const variance = <f32>(sq / <f64>n);
    const scale: f32 = <f32>1.0 / Mathf.sqrt(variance + eps);
    for (let i = 0; i < n; i++) {
      const o = <usize>i << 2;
      let v = load<f32>(yp + o) * scale;
      if (w != 0) v *= load<f32>(w + o);
      if (b != 0) v += load<f32>(b + o);
      store<f32>(yp + o, v);
    }
  }
}
// y[r] = x[r] + b (a row of n broadcast over rows), e.g. a projection's bias
export function add_row(r0: i32, r1: i32, x: usize, xs: usize, bias: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    let i = 0;
    for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.add(v128.load(xp + o), v128.load(bias + o))); }
    for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) + load<f32>(bias + o)); }
  }
}

// y[r] = x[r] * w (a row of n broadcast over rows), e.g. a norm's weight
export function mul_row(r0: i32, r1: i32, x: usize, xs: usize, wr: usize, y: usize, ys: usize, n: i32): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys;
    let i = 0;
    for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(v128.load(xp + o), v128.load(wr + o))); }
    for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(xp + o) * load<f32>(wr + o)); }
  }
}

// exp for the float range that softmax / silu need (Cephes-style, ~1 ulp), vector of 4
@inline function exp4(x0: v128): v128 {
  const x = f32x4.min(f32x4.max(x0, f32x4.splat(-87.3)), f32x4.splat(88.7));
  const fx = f32x4.nearest(f32x4.mul(x, f32x4.splat(1.44269504088896341)));
  let r = f32x4.sub(x, f32x4.mul(fx, f32x4.splat(0.693359375)));
  r = f32x4.add(r, f32x4.mul(fx, f32x4.splat(2.12194440e-4)));
  let p = f32x4.splat(1.9875691500e-4);
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.3981999507e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(8.3334519073e-3));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(4.1665795894e-2));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(1.6666665459e-1));
  p = f32x4.add(f32x4.mul(p, r), f32x4.splat(5.0000001201e-1));
  p = f32x4.add(f32x4.add(f32x4.mul(f32x4.mul(p, r), r), r), f32x4.splat(1));
  const e = i32x4.shl(i32x4.add(i32x4.trunc_sat_f32x4_s(fx), i32x4.splat(127)), 23);
  return v128.andnot(f32x4.mul(p, e), f32x4.lt(x0, f32x4.splat(-87.3)));
}
@inline function exp1(x: f32): f32 { return f32x4.extract_lane(exp4(f32x4.splat(x)), 0); }

// y = softmax(x * scale + mask); mask (if != 0) is a row of n f32, ms bytes between rows (0: same row)
export function softmax(r0: i32, r1: i32, x: usize, xs: usize, y: usize, ys: usize, n: i32, scale: f32, mask: usize, ms: usize): void {
  for (let r = r0; r < r1; r++) {
    const xp = x + <usize>r * xs, yp = y + <usize>r * ys, mp = mask + <usize>r * ms;
    let mx: f32 = -Infinity;
    for (let i = 0; i < n; i++) {
      let v = load<f32>(xp + (<usize>i << 2)) * scale;
      if (mask != 0) v += load<f32>(mp + (<usize>i << 2));
      store<f32>(yp + (<usize>i << 2), v);
      if (v > mx) mx = v;
    }
    let sum: f64 = 0;
    const mv = f32x4.splat(mx);
    let i = 0;
    for (; i + 4 <= n; i += 4) {
      const o = <usize>i << 2;
      const e = exp4(f32x4.sub(v128.load(yp + o), mv));
      v128.store(yp + o, e);
      sum += <f64>hsum_f32x4(e);
    }
    for (; i < n; i++) { const o = <usize>i << 2; const e = exp1(load<f32>(yp + o) - mx); store<f32>(yp + o, e); sum += <f64>e; }
    const inv = <f32>(1.0 / sum);
    const iv = f32x4.splat(inv);
    i = 0;
    for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(yp + o, f32x4.mul(v128.load(yp + o), iv)); }
    for (; i < n; i++) { const o = <usize>i << 2; store<f32>(yp + o, load<f32>(yp + o) * inv); }
  }
}

// RoPE in place. Rows r = token * nHead + head; the row of token t, head h is at x + t*ts + h*hs.
// cs: per token nDims/2 pairs (cos, sin) (computed on the TypeScript side), 4*nDims bytes per token.
// neox = 0: rotate pairs (x[2i], x[2i+1]); neox = 1: rotate (x[i], x[i + nDims/2]).
// ggml's rotate_pairs as GCC contracts it: x0*cos - x1*sin = fma(x0, cos, -(x1*sin)), x0*sin + x1*cos =
// fma(x0, sin, x1*cos); the table holds glibc's cosf/sinf (computed by the runtime)
export function rope(r0: i32, r1: i32, x: usize, ts: usize, hs: usize, nHead: i32, nDims: i32, cs: usize, neox: i32): void {
  const half = nDims >> 1;
  for (let r = r0; r < r1; r++) {
    const t = r / nHead, h = r - t * nHead;
    const xp = x + <usize>t * ts + <usize>h * hs;
    const c = cs + <usize>t * (<usize>nDims << 2);
    if (neox) {
      for (let i = 0; i < half; i++) {
        const co = load<f32>(c + (<usize>i << 3)), si = load<f32>(c + (<usize>i << 3), 4);
        const p0 = xp + (<usize>i << 2), p1 = xp + (<usize>(i + half) << 2);
        const a = load<f32>(p0), b = load<f32>(p1);
        store<f32>(p0, fmaf(a, co, -(b * si)));
        store<f32>(p1, fmaf(a, si, b * co));
      }
    } else {
      for (let i = 0; i < half; i++) {
        const co = load<f32>(c + (<usize>i << 3)), si = load<f32>(c + (<usize>i << 3), 4);
        const p = xp + (<usize>i << 3);
        const a = load<f32>(p), b = load<f32>(p, 4);
        store<f32>(p, fmaf(a, co, -(b * si)));
        store<f32>(p, fmaf(a, si, b * co), 4);
      }
    }
  }
}

// ggml_v_expf (AVX-512 build) on two f32 values held as f64x2: its polynomial of fused multiply-adds,
// each fmaf emulated (fma2), then _mm512_scalef_ps (j * 2^n, one rounding); |n| > 192 saturates
@inline function fma2v(a: v128, b: v128, c: v128): v128 { return fma2(f64x2.mul(a, b), c); }
@inline function expf_v2(x: v128): v128 {
  const R = f64x2.splat(12582912);
  const z = fma2v(x, f64x2.splat(<f64>reinterpret<f32>(0x3fb8aa3b)), R); // log2(e) 0x1.715476p+0
  const n = round2(f64x2.sub(z, R));
  const nn = f64x2.neg(n);
  const b = fma2v(nn, f64x2.splat(<f64>reinterpret<f32>(0x35bfbe8e)), fma2v(nn, f64x2.splat(<f64>reinterpret<f32>(0x3f317200)), x)); // ln2 lo, hi
  const u = round2(f64x2.mul(b, b));
  const j = fma2v(
    fma2v(fma2v(f64x2.splat(<f64>reinterpret<f32>(0x3c072010)), b, f64x2.splat(<f64>reinterpret<f32>(0x3d2b9f17))), u,
      fma2v(f64x2.splat(<f64>reinterpret<f32>(0x3e2aaf33)), b, f64x2.splat(<f64>reinterpret<f32>(0x3efffedb)))), u,
    fma2v(f64x2.splat(<f64>reinterpret<f32>(0x3f7ffff6)), b, f64x2.splat(1)));
  // 2^n as f64 (exact for |n| <= 192), the product rounded once to f32
  const ni = i64x2.extend_low_i32x4_s(i32x4.trunc_sat_f64x2_s_zero(f64x2.min(f64x2.max(n, f64x2.splat(-200)), f64x2.splat(200))));
  const p2 = i64x2.shl(i64x2.add(ni, i64x2.splat(1023)), 52);
  let r = round2(f64x2.mul(j, p2));
  r = v128.bitselect(f64x2.splat(Infinity), r, f64x2.gt(n, f64x2.splat(192)));
  return v128.bitselect(f64x2.splat(0), r, f64x2.lt(n, f64x2.splat(-192)));
}
// silu as ggml_vec_swiglu_f32 / ggml_vec_silu_f32 (AVX-512): x / (1 + v_expf(-x)), in f32
@inline function silu4(v: v128): v128 {
  const nv = f32x4.neg(v);
  const e = f32x4_of(expf_v2(lo_f64(nv)), expf_v2(hi_f64(nv)));
  return f32x4.div(v, f32x4.add(f32x4.splat(1), e));
}
@inline function silu1(v: f32): f32 { return f32x4.extract_lane(silu4(f32x4.splat(v)), 0); }

// element ranges [i0, i1)
export function silu(i0: i32, i1: i32, x: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, silu4(v128.load(x + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, silu1(load<f32>(x + o))); }
}
// y = silu(g) * u  (SwiGLU)
export function silu_mul(i0: i32, i1: i32, g: usize, u: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.mul(silu4(v128.load(g + o)), v128.load(u + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, silu1(load<f32>(g + o)) * load<f32>(u + o)); }
}
// gelu, tanh approximation as ggml: 0.5x(1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2)))
export function gelu(i0: i32, i1: i32, x: usize, y: usize): void {
  for (let i = i0; i < i1; i++) {
    const o = <usize>i << 2; const v = load<f32>(x + o);
    const z = <f32>0.7978845608028654 * v * (<f32>1 + <f32>0.044715 * v * v);
    // tanh(z) = 1 - 2/(exp(2z)+1)
    const th: f32 = <f32>1 - <f32>2 / (exp1(2 * z) + 1);
    store<f32>(y + o, <f32>0.5 * v * (1 + th));
  }
}
export function add(i0: i32, i1: i32, a: usize, b: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.add(v128.load(a + o), v128.load(b + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(a + o) + load<f32>(b + o)); }
}
export function mul(i0: i32, i1: i32, a: usize, b: usize, y: usize): void {
  let i = i0;
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.mul(v128.load(a + o), v128.load(b + o))); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(a + o) * load<f32>(b + o)); }
}
export function scale(i0: i32, i1: i32, x: usize, y: usize, s: f32): void {
  let i = i0;
  const sv = f32x4.splat(s);
  for (; i + 4 <= i1; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.mul(v128.load(x + o), sv)); }
  for (; i < i1; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(x + o) * s); }
}

// ---------------------------------------------------------------------------------------------
// n f16 at src -> f32 at dst (n % 8 == 0 handled by vectors, the rest exactly)
@inline function f16_row_to_f32(src: usize, dst: usize, n: i32): void {
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const hv = v128.load(src + (<usize>i << 1));
    v128.store(dst + (<usize>i << 2), h2f4_finite(i32x4.extend_low_i16x8_u(hv)));
    v128.store(dst + (<usize>i << 2), h2f4_finite(i32x4.extend_high_i16x8_u(hv)), 16);
  }
  for (; i < n; i++) store<f32>(dst + (<usize>i << 2), h2f(load<u16>(src + (<usize>i << 1))));
}
// y += p * x over n f32
@inline function axpy(y: usize, x: usize, p: f32, n: i32): void {
  const pv = f32x4.splat(p);
  let i = 0;
  for (; i + 4 <= n; i += 4) { const o = <usize>i << 2; v128.store(y + o, f32x4.add(v128.load(y + o), f32x4.mul(v128.load(x + o), pv))); }
  for (; i < n; i++) { const o = <usize>i << 2; store<f32>(y + o, load<f32>(y + o) + load<f32>(x + o) * p); }
}

// Attention of query rows over an f16 K/V cache: scores, online softmax and the weighted sum of V fused.
// Work item r = (tile * nKvHead + g) * hsplit + part: up to ATT_TILE consecutive query tokens
// (tile*ATT_TILE ..) times the query heads of part `part` of the gqa heads h = g*gqa .. g*gqa+gqa-1 that
// share kv head g, so each K and V row is widened to f32 once for all of them (hsplit > 1 splits a group's
// heads over threads when there are fewer kv heads than threads; gqaSplit = gqa | hsplit << 16). Query t sees kv positions [0, kvBase + t + 1) (causal). q: f32, token t head h at
// q + t*qs + h*hd*4; scores are q.k * scale. K/V: position p, kv head g at k + p*kvs + g*hd*2.
// out: f32, token t head h at o + t*os + h*hd*4.
// Positions go in blocks of 4: four scores per (token, head), one vector exp, then the four widened V rows
// are added into the output in one pass.
// scr: per work item (5*hd + 8*ATT_TILE*gqa) f32: the widened K row, the 4 widened V rows, then per
// (token, head) the running max, the running sum, 2 unused and the block's 4 weights.
const ATT_TILE = 4;
// Arguments come in a parameter block at `pp` (4-byte fields, see AttnParam in runtime.ts):
//   q qs k v kvs o os nKvHead hd gqaSplit kvBase scale(f32) scr nTok mask maskStride nKv maskF16
// mask = 0: causal as above. mask != 0: every query token sees positions [0, nKv) and its mask row
// (f32, or f16 when maskF16; -inf hides a position) at mask + t*maskStride is added to the scores.
export function attn_f16(r0: i32, r1: i32, pp: usize): void {
  const q = load<u32>(pp), qs = load<u32>(pp, 4), k = load<u32>(pp, 8), v = load<u32>(pp, 12), kvs = load<u32>(pp, 16);
  const o = load<u32>(pp, 20), os = load<u32>(pp, 24), nKvHead = load<i32>(pp, 28), hd = load<i32>(pp, 32);
  const gqaSplit = load<i32>(pp, 36), kvBase = load<i32>(pp, 40), scale = load<f32>(pp, 44), scr = load<u32>(pp, 48);
  const nTok = load<i32>(pp, 52), mask = load<u32>(pp, 56), maskStride = load<u32>(pp, 60), nKvMasked = load<i32>(pp, 64);
  const maskF16 = load<i32>(pp, 68);
  const gqaAll = gqaSplit & 0xffff, hsplit = gqaSplit >> 16;
  const hper = (gqaAll + hsplit - 1) / hsplit;
  const scrStride = <usize>(5 * hd + 8 * ATT_TILE * hper) << 2;
  const hb = <usize>hd << 2;
  for (let r = r0; r < r1; r++) {
    const grp = r / hsplit, part = r - grp * hsplit;
    const tile = grp / nKvHead, g = grp - tile * nKvHead;
    // this item's heads: h = g*gqaAll + hoff + j for j < gqa
    const hoff = part * hper;
    const gqa = min(hper, gqaAll - hoff);
    if (gqa <= 0) continue;
    const t0 = tile * ATT_TILE, nt = min(ATT_TILE, nTok - t0);
    const kp0 = k + <usize>(g * hd) * 2, vp0 = v + <usize>(g * hd) * 2;
    const krow = scr + <usize>r * scrStride, vrows = krow + hb, st = vrows + 4 * hb;
    const nh = nt * gqa;
    // state index i = ti * gqa + j, 32 bytes each
    for (let i = 0; i < nh; i++) {
      const ti = i / gqa, j = i - ti * gqa;
      const sp = st + (<usize>i << 5);
      store<f32>(sp, -Infinity);
      store<f32>(sp, 0, 4);
      memory.fill(o + <usize>(t0 + ti) * os + <usize>(g * gqaAll + hoff + j) * hb, 0, hb);
    }
    const nKvMax = mask ? nKvMasked : kvBase + t0 + nt;
    for (let p0 = 0; p0 < nKvMax; p0 += 4) {
      const nb = min(4, nKvMax - p0);
      // tokens before ti0 see none of this block (causal)
      const ti0 = mask ? 0 : max(0, p0 - kvBase - t0);
      // scores: weights slot of each state gets the 4 scores (-inf where not visible)
      for (let i = ti0 * gqa; i < nh; i++) {
        const sp = st + (<usize>i << 5);
        v128.store(sp, f32x4.splat(-Infinity), 16);
      }
      for (let b = 0; b < nb; b++) {
        const p = p0 + b;
        f16_row_to_f32(kp0 + <usize>p * kvs, krow, hd);
        for (let i = ti0 * gqa; i < nh; i++) {
          const ti = i / gqa, j = i - ti * gqa;
          let bias: f32 = 0;
          if (mask) {
            const mp = mask + <usize>(t0 + ti) * maskStride;
            bias = maskF16 ? h2f(load<u16>(mp + (<usize>p << 1))) : load<f32>(mp + (<usize>p << 2));
            if (bias == -Infinity) continue;
          } else if (p >= kvBase + t0 + ti + 1) continue;
          const qp = q + <usize>(t0 + ti) * qs + <usize>(g * gqaAll + hoff + j) * hb;
          store<f32>(st + (<usize>i << 5) + 16 + (<usize>b << 2), dot_f32(krow, qp, hd) * scale + bias);
        }
      }
      // V rows of the block (missing positions zeroed so that 0 weights stay 0)
      for (let b = 0; b < 4; b++) {
        if (b < nb) f16_row_to_f32(vp0 + <usize>(p0 + b) * kvs, vrows + <usize>b * hb, hd);
        else memory.fill(vrows + <usize>b * hb, 0, hb);
      }
      for (let i = ti0 * gqa; i < nh; i++) {
        const ti = i / gqa, j = i - ti * gqa;
        const sp = st + (<usize>i << 5);
        const sc = v128.load(sp, 16);
        const m = load<f32>(sp);
        const bm = hmax_f32x4(sc);
        const mn = bm > m ? bm : m;
        // nothing visible yet for this row (masked): skip the block
        if (mn == -Infinity) continue;
        const wv = exp4(f32x4.sub(sc, f32x4.splat(mn)));
        const op = o + <usize>(t0 + ti) * os + <usize>(g * gqaAll + hoff + j) * hb;
        let ssum = load<f32>(sp, 4);
        if (mn > m) {
          const c = exp1(m - mn);
          ssum *= c;
          const cv = f32x4.splat(c);
          let e = 0;
          for (; e + 4 <= hd; e += 4) { const oo = op + (<usize>e << 2); v128.store(oo, f32x4.mul(v128.load(oo), cv)); }
          for (; e < hd; e++) { const oo = op + (<usize>e << 2); store<f32>(oo, load<f32>(oo) * c); }
          store<f32>(sp, mn);
        }
        store<f32>(sp, ssum + hsum_f32x4(wv), 4);
        const w0 = i32x4.shuffle(wv, wv, 0, 0, 0, 0), w1 = i32x4.shuffle(wv, wv, 1, 1, 1, 1);
        const w2 = i32x4.shuffle(wv, wv, 2, 2, 2, 2), w3 = i32x4.shuffle(wv, wv, 3, 3, 3, 3);
        const wf0 = f32x4.extract_lane(wv, 0), wf1 = f32x4.extract_lane(wv, 1), wf2 = f32x4.extract_lane(wv, 2), wf3 = f32x4.extract_lane(wv, 3);
        let e = 0;
        for (; e + 4 <= hd; e += 4) {
          const oo = op + (<usize>e << 2), vo = vrows + (<usize>e << 2);
          const acc = f32x4.add(f32x4.add(f32x4.mul(v128.load(vo), w0), f32x4.mul(v128.load(vo + hb), w1)),
            f32x4.add(f32x4.mul(v128.load(vo + 2 * hb), w2), f32x4.mul(v128.load(vo + 3 * hb), w3)));
          v128.store(oo, f32x4.add(v128.load(oo), acc));
        }
        for (; e < hd; e++) {
          const oo = op + (<usize>e << 2), vo = vrows + (<usize>e << 2);
          store<f32>(oo, load<f32>(oo) + (load<f32>(vo) * wf0 + load<f32>(vo + hb) * wf1) + (load<f32>(vo + 2 * hb) * wf2 + load<f32>(vo + 3 * hb) * wf3));
        }
      }
    }
    for (let i = 0; i < nh; i++) {
      const ti = i / gqa, j = i - ti * gqa;
      const sv = load<f32>(st + (<usize>i << 5), 4);
      const inv: f32 = sv > 0 ? <f32>1 / sv : 0;
      const op = o + <usize>(t0 + ti) * os + <usize>(g * gqaAll + hoff + j) * hb;
      const iv = f32x4.splat(inv);
      let e = 0;
      for (; e + 4 <= hd; e += 4) { const oo = op + (<usize>e << 2); v128.store(oo, f32x4.mul(v128.load(oo), iv)); }
      for (; e < hd; e++) { const oo = op + (<usize>e << 2); store<f32>(oo, load<f32>(oo) * inv); }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Attention with ggml's non-flash numerics (what llama.cpp's x86 build runs for an f16 KV cache, bit for
// bit; src/backends/reference/ops.ts attention is the same in TypeScript): Q rounded to f16; K.Q as an
// f16 mul_mat (tinyBLAS 16 lanes for a batch, ggml_vec_dot_f16 for one token); scores times the scale
// in f32; softmax with ggml_v_expf, f32 sums of 16-slot chunks added in double; the weights rounded to
// f16; V.softmax over the cache positions in the same dot order (lane = position & 15, or & 63 for one
// token, then the same reductions). Positions outside [window start, own position] weigh 0 and are
// skipped: adding a zero product leaves every lane unchanged.
// One work item = (query token, head). Params (i32 slots at pp): q, qStride, k, v, kvStride, out,
// outStride, nHead, gqa, headDim, scale (f32), window, positions, scratch, scratch bytes per thread,
// items per thread, batch (1: tinyBLAS order), and for a batch the f32 K rows and transposed f32 V that
// attn_kv_f32 prepared (kf, vt, positions per kv head rounded up to 16).
export function attn_ggml(r0: i32, r1: i32, pp: usize): void {
  const q = <usize>load<i32>(pp), qs = <usize>load<i32>(pp, 4), k = <usize>load<i32>(pp, 8), v = <usize>load<i32>(pp, 12);
  const kvs = <usize>load<i32>(pp, 16), o = <usize>load<i32>(pp, 20), os = <usize>load<i32>(pp, 24);
  const nHead = load<i32>(pp, 28), gqa = load<i32>(pp, 32), hd = load<i32>(pp, 36);
  const scale = load<f32>(pp, 40), window = load<i32>(pp, 44), pos = <usize>load<i32>(pp, 48);
  const slice = load<i32>(pp, 60), batch = load<i32>(pp, 64) != 0;
  const kf = <usize>load<i32>(pp, 68), vt = <usize>load<i32>(pp, 72), p16 = <usize>load<i32>(pp, 76);
  // this thread's scratch: q rounded to f16 (hd), V lane accumulators (64 x hd), then scores
  const scr = <usize>load<i32>(pp, 52) + <usize>(r0 / slice) * <usize>load<i32>(pp, 56);
  const qh = scr, acc = scr + (<usize>hd << 2), sc = acc + (<usize>hd << 8);
  const lanes: i32 = batch ? 16 : 64;
  const hb = <usize>hd << 2;
  for (let r = r0; r < r1; r++) {
    const t = r / nHead, h = r - t * nHead;
    const kvo = <usize>(h / gqa) * (<usize>hd << 1);
    const p0 = load<i32>(pos + (<usize>t << 2));
    const lo = window > 0 ? max(0, p0 - window + 1) : 0;
    const qp = q + <usize>t * qs + <usize>h * hb;
    for (let i = 0; i < hd; i++) store<f32>(qh + (<usize>i << 2), h2f(f2h(load<f32>(qp + (<usize>i << 2)))));
    let mx = -Infinity;
    const g = <usize>(h / gqa);
    if (batch) {
      // tinyBLAS's 16 lanes over the head dims, on the K rows widened once per call
      const kg = kf + g * p16 * hb;
      for (let j = lo; j <= p0; j++) {
        const s = dot_f32_lanes16(kg + <usize>j * hb, qh, hd) * scale;
        store<f32>(sc + (<usize>j << 2), s);
        if (s > mx) mx = <f32>s;
      }
    } else {
      for (let j = lo; j <= p0; j++) {
        const s = dot_f16_vec(k + <usize>j * kvs + kvo, qh, hd) * scale;
        store<f32>(sc + (<usize>j << 2), s);
        if (s > mx) mx = <f32>s;
      }
    }
    // softmax: chunks of 16 slots of the (padded) KV view, aligned to 16
    let sum: f64 = 0;
    const mv = f32x4.splat(<f32>mx);
    for (let c = lo & ~15; c <= p0; c += 16) {
      let e0 = f32x4.splat(0), e1 = e0, e2 = e0, e3 = e0;
      for (let g = 0; g < 4; g++) {
        const base = c + 4 * g;
        const x = f32x4.sub(v128.load(sc + (<usize>base << 2)), mv);
        let e = f32x4_of(expf_v2(lo_f64(x)), expf_v2(hi_f64(x)));
        // slots outside [lo, p0] are exp(-inf) = 0
        const idx = i32x4.add(i32x4.splat(base), i32x4(0, 1, 2, 3));
        e = v128.and(e, v128.and(i32x4.ge_s(idx, i32x4.splat(lo)), i32x4.le_s(idx, i32x4.splat(p0))));
        v128.store(sc + (<usize>base << 2), e);
        if (g == 0) e0 = e; else if (g == 1) e1 = e; else if (g == 2) e2 = e; else e3 = e;
      }
      sum += <f64>reduce_add_16(e0, e1, e2, e3);
    }
    const inv = <f32>(1.0 / sum);
    for (let j = lo; j <= p0; j++) {
      const sp = sc + (<usize>j << 2);
      store<f32>(sp, h2f(f2h(load<f32>(sp) * inv)));
    }
    const op = o + <usize>t * os + <usize>h * hb;
    if (batch) {
      // V . weights with lane = position % 16 (the weights outside [lo, p0] of the 16-aligned chunks are 0),
      // one dim at a time over the transposed V: the 16 lanes stay in registers
      const vg = vt + g * <usize>hd * p16 * 4;
      const m0 = <usize>(lo & ~15), m1 = <usize>(p0 | 15) + 1;
      for (let i = 0; i < hd; i++) {
        const vr = vg + <usize>i * p16 * 4;
        let a0 = f32x4.splat(0), a1 = a0, a2 = a0, a3 = a0;
        for (let j = m0; j < m1; j += 16) {
          const wp = sc + (j << 2), vp = vr + (j << 2);
          a0 = f32x4.add(a0, f32x4.mul(v128.load(wp), v128.load(vp)));
          a1 = f32x4.add(a1, f32x4.mul(v128.load(wp, 16), v128.load(vp, 16)));
          a2 = f32x4.add(a2, f32x4.mul(v128.load(wp, 32), v128.load(vp, 32)));
          a3 = f32x4.add(a3, f32x4.mul(v128.load(wp, 48), v128.load(vp, 48)));
        }
        store<f32>(op + (<usize>i << 2), reduce_add_16(a0, a1, a2, a3));
      }
      continue;
    }
    // V . weights: lane accumulators acc[l][0..hd), l = position % lanes
    for (let i: usize = 0; i < <usize>(lanes * hd); i += 4) v128.store(acc + (i << 2), f32x4.splat(0));
    for (let j = lo; j <= p0; j++) {
      const wv = f32x4.splat(load<f32>(sc + (<usize>j << 2)));
      const vp = v + <usize>j * kvs + kvo, ap = acc + <usize>(j & (lanes - 1)) * hb;
      let i = 0;
      for (; i + 4 <= hd; i += 4) {
        const aa = ap + (<usize>i << 2);
        v128.store(aa, f32x4.add(v128.load(aa), f32x4.mul(wv, h2f4_finite(v128.load16x4_u(vp + (<usize>i << 1))))));
      }
      for (; i < hd; i++) {
        const aa = ap + (<usize>i << 2);
        store<f32>(aa, load<f32>(aa) + load<f32>(sc + (<usize>j << 2)) * h2f(load<u16>(vp + (<usize>i << 1))));
      }
    }
    for (let i = 0; i < hd; i++) {
      const e = <usize>i << 2;
      // lanes (a vector of 4 positions' accumulators of dim i, gathered)
      let l0: v128, l1: v128, l2: v128, l3: v128;
      if (batch) {
        l0 = gather4(acc + e, hb, 0); l1 = gather4(acc + e, hb, 4); l2 = gather4(acc + e, hb, 8); l3 = gather4(acc + e, hb, 12);
      } else {
        // ggml_vec_dot_f16: lane l = (acc[l] + acc[32+l]) + (acc[16+l] + acc[48+l])
        l0 = vec_lanes(acc + e, hb, 0); l1 = vec_lanes(acc + e, hb, 4); l2 = vec_lanes(acc + e, hb, 8); l3 = vec_lanes(acc + e, hb, 12);
      }
      store<f32>(op + e, reduce_add_16(l0, l1, l2, l3));
    }
  }
}
// tinyBLAS's 16-lane dot of two f32 rows (n % 16 == 0)
@inline function dot_f32_lanes16(w: usize, a: usize, n: i32): f32 {
  let l0 = f32x4.splat(0), l1 = l0, l2 = l0, l3 = l0;
  for (let i = 0; i < n; i += 16) {
    const wp = w + (<usize>i << 2), ap = a + (<usize>i << 2);
    l0 = f32x4.add(l0, f32x4.mul(v128.load(wp), v128.load(ap)));
    l1 = f32x4.add(l1, f32x4.mul(v128.load(wp, 16), v128.load(ap, 16)));
    l2 = f32x4.add(l2, f32x4.mul(v128.load(wp, 32), v128.load(ap, 32)));
    l3 = f32x4.add(l3, f32x4.mul(v128.load(wp, 48), v128.load(ap, 48)));
  }
  return reduce_add_16(l0, l1, l2, l3);
}
// For a batch, attn_ggml reads every K and V row once per query token and head: widen them once per call.
// Items = (kv head, 16-position chunk) over [0, p16): K rows -> kf[g][p][hd] f32, V -> vt[g][i][p] f32
// (transposed, so attn_ggml's V . weights runs along positions); positions > maxPos become 0.
// Params (i32 slots at pp): k, v, kvStride, hd, maxPos, kf, vt, p16
export function attn_kv_f32(r0: i32, r1: i32, pp: usize): void {
  const k = <usize>load<i32>(pp), v = <usize>load<i32>(pp, 4), kvs = <usize>load<i32>(pp, 8);
  const hd = load<i32>(pp, 12), maxPos = load<i32>(pp, 16);
  const kf = <usize>load<i32>(pp, 20), vt = <usize>load<i32>(pp, 24), p16 = <usize>load<i32>(pp, 28);
  const chunks = <i32>(p16 >> 4), hb = <usize>hd << 2;
  for (let r = r0; r < r1; r++) {
    const g = <usize>(r / chunks), c = <usize>(r - <i32>g * chunks) << 4;
    const kg = kf + g * p16 * hb, vg = vt + g * <usize>hd * p16 * 4;
    for (let j = c; j < c + 16; j++) {
      const kp = k + j * kvs + g * (<usize>hd << 1), vp = v + j * kvs + g * (<usize>hd << 1);
      const live = <i32>j <= maxPos;
      for (let i = 0; i < hd; i += 4) {
        const kv = live ? h2f4(v128.load16x4_u(kp + (<usize>i << 1))) : f32x4.splat(0);
        v128.store(kg + j * hb + (<usize>i << 2), kv);
        const vv = live ? h2f4(v128.load16x4_u(vp + (<usize>i << 1))) : f32x4.splat(0);
        const vo = vg + (<usize>i * p16 + j) * 4;
        store<f32>(vo, f32x4.extract_lane(vv, 0));
        store<f32>(vo + p16 * 4, f32x4.extract_lane(vv, 1));
        store<f32>(vo + p16 * 8, f32x4.extract_lane(vv, 2));
        store<f32>(vo + p16 * 12, f32x4.extract_lane(vv, 3));
      }
    }
  }
}
// the f32 at p + (l0 + 0..3) * stride as a vector
@inline function gather4(p: usize, stride: usize, l0: i32): v128 {
  const b = p + <usize>l0 * stride;
  let r = f32x4.splat(load<f32>(b));
  r = f32x4.replace_lane(r, 1, load<f32>(b + stride));
  r = f32x4.replace_lane(r, 2, load<f32>(b + 2 * stride));
  return f32x4.replace_lane(r, 3, load<f32>(b + 3 * stride));
}
@inline function vec_lanes(p: usize, stride: usize, l0: i32): v128 {
  return f32x4.add(f32x4.add(gather4(p, stride, l0), gather4(p, stride, l0 + 32)), f32x4.add(gather4(p, stride, l0 + 16), gather4(p, stride, l0 + 48)));
}

// =============================================================================================
// Free-order matmul kernels ('fast' numerics, the cpu device's default). Same integer block sums as
// above, but the float side is plain f32 vector multiply-adds in whatever order is cheapest, and each
// pass computes several weight rows (decode) or rows x tokens (prefill) so activation and weight loads
// are shared. They agree with ggml's orders to float rounding (backend-ops test) and pass the parity
// fixtures under the same tolerances; the exact kernels above remain for numerics 'exact'.

// ---- Q8_0 (activations: Q8_0 aux table, i16 quants at ax + 20*nb, f32 d at ax) ----
@inline function q8f_dot(w: usize, ap: usize): v128 {
  return i32x4.add(
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 2), v128.load(ap)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 10), v128.load(ap, 16))),
    i32x4.add(i32x4.dot_i16x8_s(v128.load8x8_s(w, 18), v128.load(ap, 32)), i32x4.dot_i16x8_s(v128.load8x8_s(w, 26), v128.load(ap, 48))));
}
// one row . one token (plain Q8_0 layout: only weights with rows % 4 != 0 stay in it in fast numerics)
@inline function dot1r_q8_0f(w: usize, ax: usize, nb: i32): f32 {
  let c0 = f32x4.splat(0);
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 34;
  while (w < we) {
    c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(q8f_dot(w, ap)), f32x4.splat(h2f(load<u16>(w)) * load<f32>(dp))));
    w += 34; dp += 4; ap += 64;
  }
  return hsum_f32x4(c0);
}
export function mmf_q8_0(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    for (let t = 0; t < nTok; t++) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r++) store<f32>(yt + (<usize>r << 2), dot1r_q8_0f(w + <usize>r * ws, xt, nb));
    }
  }
}

// ---- Q8_0 with 4 rows interleaved (Q8_0r4, [4 x f16 d][4 x 32 B quants] per block): one contiguous
// weight stream per 4 rows (4 separate short row streams defeat the hardware prefetcher at ~1 KiB rows) ----
@inline function dot4_q8_0r4f(w: usize, ax: usize, nb: i32, y: usize): void {
  let c = f32x4.splat(0);
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 136;
  while (w < we) {
    let p0 = i32x4.splat(0), p1 = p0, p2 = p0, p3 = p0;
    for (let k: usize = 0; k < 32; k += 8) {
      const a0 = v128.load(ap + (k << 1));
      p0 = i32x4.add(p0, i32x4.dot_i16x8_s(v128.load8x8_s(w + 8 + k), a0));
      p1 = i32x4.add(p1, i32x4.dot_i16x8_s(v128.load8x8_s(w + 40 + k), a0));
      p2 = i32x4.add(p2, i32x4.dot_i16x8_s(v128.load8x8_s(w + 72 + k), a0));
      p3 = i32x4.add(p3, i32x4.dot_i16x8_s(v128.load8x8_s(w + 104 + k), a0));
    }
    c = f32x4.add(c, f32x4.mul(f32x4.convert_i32x4_s(hsum4_i32(p0, p1, p2, p3)), f32x4.mul(h2f4(v128.load16x4_u(w)), f32x4.splat(load<f32>(dp)))));
    w += 136; dp += 4; ap += 64;
  }
  v128.store(y, c);
}
// 4 rows x 2 tokens
@inline function dot4x2_q8_0r4f(w: usize, ax: usize, axs: usize, nb: i32, y: usize, ys: usize): void {
  let c0 = f32x4.splat(0), c1 = c0;
  let dp = ax, ap = ax + <usize>nb * 20;
  const we = w + <usize>nb * 136;
  while (w < we) {
    let p00 = i32x4.splat(0), p10 = p00, p20 = p00, p30 = p00, p01 = p00, p11 = p00, p21 = p00, p31 = p00;
    for (let k: usize = 0; k < 32; k += 8) {
      const a0 = v128.load(ap + (k << 1)), a1 = v128.load(ap + axs + (k << 1));
      const w0 = v128.load8x8_s(w + 8 + k), w1 = v128.load8x8_s(w + 40 + k);
      const w2 = v128.load8x8_s(w + 72 + k), w3 = v128.load8x8_s(w + 104 + k);
      p00 = i32x4.add(p00, i32x4.dot_i16x8_s(w0, a0)); p01 = i32x4.add(p01, i32x4.dot_i16x8_s(w0, a1));
      p10 = i32x4.add(p10, i32x4.dot_i16x8_s(w1, a0)); p11 = i32x4.add(p11, i32x4.dot_i16x8_s(w1, a1));
      p20 = i32x4.add(p20, i32x4.dot_i16x8_s(w2, a0)); p21 = i32x4.add(p21, i32x4.dot_i16x8_s(w2, a1));
      p30 = i32x4.add(p30, i32x4.dot_i16x8_s(w3, a0)); p31 = i32x4.add(p31, i32x4.dot_i16x8_s(w3, a1));
    }
    const dw = h2f4(v128.load16x4_u(w));
    c0 = f32x4.add(c0, f32x4.mul(f32x4.convert_i32x4_s(hsum4_i32(p00, p10, p20, p30)), f32x4.mul(dw, f32x4.splat(load<f32>(dp)))));
    c1 = f32x4.add(c1, f32x4.mul(f32x4.convert_i32x4_s(hsum4_i32(p01, p11, p21, p31)), f32x4.mul(dw, f32x4.splat(load<f32>(dp + axs)))));
    w += 136; dp += 4; ap += 64;
  }
  v128.store(y, c0);
  v128.store(y + ys, c1);
}
// rows [r0, r1) are whole groups of 4 (dispatched with align 4)
export function mmf_q8_0r4(r0: i32, r1: i32, w: usize, ws: usize, a: usize, as: usize, nTok: i32, y: usize, ys: usize, nb: i32, ax: usize, axs: usize): void {
  for (let rt = r0; rt < r1; rt += ROW_TILE) {
    const re = min(rt + ROW_TILE, r1);
    let t = 0;
    for (; t + 2 <= nTok; t += 2) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4x2_q8_0r4f(w + <usize>r * ws, xt, axs, nb, yt + (<usize>r << 2), ys);
    }
    for (; t < nTok; t++) {
      const xt = ax + <usize>t * axs, yt = y + <usize>t * ys;
      for (let r = rt; r < re; r += 4) dot4_q8_0r4f(w + <usize>r * ws, xt, nb, yt + (<usize>r << 2));
    }
  }
}


// Start-up check of the relaxed build (src/backends/cpu/runtime.ts): a relaxed dot product on 48 bytes at p
// (i8 a, 7-bit b, i32x4 c), folded into one number; the simd128 build returns 0
export function simd_selftest(p: usize): i32 {
  if (ASC_FEATURE_RELAXED_SIMD) {
    const r = i32x4.relaxed_dot_i8x16_i7x16_add_s(v128.load(p), v128.load(p, 16), v128.load(p, 32));
    return i32x4.extract_lane(r, 0) + 3 * i32x4.extract_lane(r, 1) + 5 * i32x4.extract_lane(r, 2) + 7 * i32x4.extract_lane(r, 3);
  }
  return 0;
}

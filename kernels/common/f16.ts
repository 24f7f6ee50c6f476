// f16 -> f32 without touching an f32 subnormal: x86 takes a ~100-cycle assist for every subnormal operand
// (WebAssembly keeps IEEE subnormals, so no flush-to-zero), and f16 subnormals are common as Q6_K/Q4_K
// scales. Normal values rebias the exponent with an integer add; subnormals convert their mantissa.
@inline export function h2f(h: u32): f32 {
  const e = h & 0x7c00, sign = (h & 0x8000) << 16;
  if (e == 0) return reinterpret<f32>(reinterpret<u32>(<f32>(h & 0x3ff) * reinterpret<f32>(0x33800000)) | sign);
  const m = ((h & 0x7fff) << 13) + (112 << 23);
  return reinterpret<f32>((e == 0x7c00 ? m | 0x7f800000 : m) | sign);
}
// ggml's fp32_to_fp16 (round to nearest even, subnormals, inf, nan -> 0x7e00)
@inline export function f2h(f: f32): u32 {
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
@inline export function h2f4(hv: v128): v128 {
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
@inline export function h2f4_finite(h32: v128): v128 {
  // (h << 16) >> 3 (arithmetic) puts exponent and mantissa in f32 position and copies the sign into bits
  // 31..28; clearing bits 30..28 leaves sign | e<<23 | m<<13, then 2^112 rebiases the exponent
  const b = v128.and(i32x4.shr_s(i32x4.shl(h32, 16), 3), i32x4.splat(0x8fffffff));
  return f32x4.mul(b, f32x4.splat(reinterpret<f32>(0x77800000)));
}
// 4 f32 -> 4 f16 in the low 16 bits of i32 lanes (same algorithm as f2h)
@inline export function f2h4(f: v128): v128 {
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
// f16 scales at w, w+st, w+2st, w+3st -> f32x4
@inline export function h2f_4(w: usize, st: usize): v128 {
  let v = i32x4.splat(<i32>load<u16>(w));
  v = i32x4.replace_lane(v, 1, <i32>load<u16>(w + st));
  v = i32x4.replace_lane(v, 2, <i32>load<u16>(w + 2 * st));
  v = i32x4.replace_lane(v, 3, <i32>load<u16>(w + 3 * st));
  return h2f4(v);
}
@inline export function f16x4(w: usize): v128 { return h2f4_finite(v128.load16x4_u(w)); }
// 4 f32 rounded to the nearest f16 value (ties to even), returned as f32: f2h4 then h2f4 in fewer operations.
// f16 normals: round at mantissa bit 13 on the integer bits (a carry bumps the exponent; >= 65520 becomes inf);
// below 2^-14 (f16 subnormals, unit 2^-24): (|x| + 0.5) - 0.5, whose f32 add rounds to that unit, ties to even.
// NaN is not kept (becomes inf): the callers' values are finite.
@inline export function round_f16x4(x: v128): v128 {
  const a = v128.and(x, i32x4.splat(0x7fffffff));
  const lsb = v128.and(i32x4.shr_u(a, 13), i32x4.splat(1));
  let n = v128.and(i32x4.add(a, i32x4.add(lsb, i32x4.splat(0xfff))), i32x4.splat(0xffffe000));
  n = v128.bitselect(i32x4.splat(0x7f800000), n, i32x4.ge_u(n, i32x4.splat(0x47800000)));
  const sub = f32x4.sub(f32x4.add(a, f32x4.splat(0.5)), f32x4.splat(0.5));
  const r = v128.bitselect(sub, n, i32x4.lt_u(a, i32x4.splat(0x38800000)));
  return v128.or(r, v128.and(x, i32x4.splat(0x80000000)));
}

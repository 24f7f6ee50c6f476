// f16 weight scales -> f32 with a fast path for the common case: every scale of a row group normal
import { h2f4 } from './f16';

// true when the 4 f16 values at the head of each of n blocks (stride bytes apart) are all normal numbers
// (not zero, subnormal, inf or nan): exponent e + 1 has a bit in 0x7800 unless e is 0 or 31. One pass over
// the scales (4 ops per block) lets the kernels' block loops use h2f4_normal without a per-block branch.
@inline export function scales4_normal(w: usize, n: i32, stride: usize): bool {
  let acc = i32x4.splat(-1);
  const e = w + <usize>n * stride;
  for (let p = w; p < e; p += stride) acc = i32x4.min_u(acc, v128.and(i32x4.add(v128.load16x4_u(p), i32x4.splat(0x400)), i32x4.splat(0x7800)));
  return i32x4.all_true(acc);
}
// h2f4 for 4 normal f16 values (low 16 bits of i32 lanes): exponent and mantissa shifted into f32 position
// and rebiased by an integer add, the sign moved to bit 31; the same bits as h2f4 for normal inputs
@inline export function h2f4_normal(hv: v128): v128 {
  const em = i32x4.add(i32x4.shr_u(i32x4.shl(hv, 17), 4), i32x4.splat(112 << 23));
  return v128.or(em, i32x4.shl(i32x4.shr_u(hv, 15), 31));
}
// h2f4_normal when `normal` (a compile-time constant at the inlined call site), else h2f4
@inline export function h2f4_if(hv: v128, normal: bool): v128 {
  return normal ? h2f4_normal(hv) : h2f4(hv);
}

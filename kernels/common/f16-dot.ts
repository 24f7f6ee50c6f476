import { f16x4, h2f } from './f16';
import { reduce_add_16 } from './fmaf';

@inline export function dot_f16_tiny(w: usize, a: usize, n: i32): f32 {
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
@inline export function dot_f16_vec(w: usize, a: usize, n: i32): f32 {
  const np = n & ~63;
  let s = <f64>reduce_add_16(f16_vec_lanes(w, a, np, 0), f16_vec_lanes(w, a, np, 1), f16_vec_lanes(w, a, np, 2), f16_vec_lanes(w, a, np, 3));
  let i = np;
  // the leftovers in order, each f16 x f16 product exact in f32 (so computed 4 at a time), summed in double
  for (; i + 4 <= n; i += 4) {
    const p = f32x4.mul(f16x4(w + (<usize>i << 1)), v128.load(a + (<usize>i << 2)));
    s += <f64>f32x4.extract_lane(p, 0); s += <f64>f32x4.extract_lane(p, 1); s += <f64>f32x4.extract_lane(p, 2); s += <f64>f32x4.extract_lane(p, 3);
  }
  for (; i < n; i++) s += <f64>(h2f(load<u16>(w + (<usize>i << 1))) * load<f32>(a + (<usize>i << 2)));
  return <f32>s;
}
// dot_f16_vec of one f16 row w with two f32 rows a and b (each result in dot_f16_vec's order; the row's f16
// values converted once): lane 0 = w . a, lane 1 = w . b
@inline function f16_vec_lanes2(w: usize, a: usize, b: usize, np: i32, q: usize, out: usize): void {
  let s0 = f32x4.splat(0), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
  for (let i = 0; i < np; i += 64) {
    const wp = w + (<usize>i << 1) + (q << 3), o = (<usize>i << 2) + (q << 4), ap = a + o, bp = b + o;
    const w0 = f16x4(wp), w1 = f16x4(wp + 32), w2 = f16x4(wp + 64), w3 = f16x4(wp + 96);
    s0 = f32x4.add(s0, f32x4.mul(w0, v128.load(ap))); t0 = f32x4.add(t0, f32x4.mul(w0, v128.load(bp)));
    s1 = f32x4.add(s1, f32x4.mul(w1, v128.load(ap, 64))); t1 = f32x4.add(t1, f32x4.mul(w1, v128.load(bp, 64)));
    s2 = f32x4.add(s2, f32x4.mul(w2, v128.load(ap, 128))); t2 = f32x4.add(t2, f32x4.mul(w2, v128.load(bp, 128)));
    s3 = f32x4.add(s3, f32x4.mul(w3, v128.load(ap, 192))); t3 = f32x4.add(t3, f32x4.mul(w3, v128.load(bp, 192)));
  }
  v128.store(out, f32x4.add(f32x4.add(s0, s2), f32x4.add(s1, s3)));
  v128.store(out, f32x4.add(f32x4.add(t0, t2), f32x4.add(t1, t3)), 64);
}
// tmp: 128 bytes of scratch
@inline export function dot_f16_vec2(w: usize, a: usize, b: usize, n: i32, tmp: usize): v128 {
  const np = n & ~63;
  f16_vec_lanes2(w, a, b, np, 0, tmp); f16_vec_lanes2(w, a, b, np, 1, tmp + 16);
  f16_vec_lanes2(w, a, b, np, 2, tmp + 32); f16_vec_lanes2(w, a, b, np, 3, tmp + 48);
  let s = <f64>reduce_add_16(v128.load(tmp), v128.load(tmp, 16), v128.load(tmp, 32), v128.load(tmp, 48));
  let u = <f64>reduce_add_16(v128.load(tmp, 64), v128.load(tmp, 80), v128.load(tmp, 96), v128.load(tmp, 112));
  let i = np;
  for (; i + 4 <= n; i += 4) {
    const x = f16x4(w + (<usize>i << 1));
    const p = f32x4.mul(x, v128.load(a + (<usize>i << 2))), r = f32x4.mul(x, v128.load(b + (<usize>i << 2)));
    s += <f64>f32x4.extract_lane(p, 0); s += <f64>f32x4.extract_lane(p, 1); s += <f64>f32x4.extract_lane(p, 2); s += <f64>f32x4.extract_lane(p, 3);
    u += <f64>f32x4.extract_lane(r, 0); u += <f64>f32x4.extract_lane(r, 1); u += <f64>f32x4.extract_lane(r, 2); u += <f64>f32x4.extract_lane(r, 3);
  }
  return f32x4.replace_lane(f32x4.splat(<f32>s), 1, <f32>u);
}

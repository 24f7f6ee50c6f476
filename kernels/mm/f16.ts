import { dot_f16_tiny, dot_f16_vec } from '../common/f16-dot';
import { hsum_f32x4 } from '../common/simd';
import { ROW_TILE } from './tile';

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

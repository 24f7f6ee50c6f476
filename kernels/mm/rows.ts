// get_rows decoders: blocks of one weight row as f32, bit for bit as src/quant/dequantize.ts (ggml's
// dequantize_row_*). The token-embedding lookup of a decode step reads one row: the TS decoder ran cold
// (interpreted or baseline code for the first hundreds of calls, ~0.3 ms a row of 1024 Q6_K values).
import { h2f } from '../common/f16';

// Q6_K blocks [b0, b1) of the row at src into dst (256 f32 per block): d * sc (exact in f32, 11 x 8 bits), then
// times q - 32 rounded once, as dequantize_row_q6_K
export function get_rows_q6_K(b0: i32, b1: i32, src: usize, dst: usize): void {
  for (let i = b0; i < b1; i++) {
    const o = src + <usize>i * 210, y0 = dst + (<usize>i << 10);
    const d = h2f(load<u16>(o, 208));
    for (let half = 0; half < 2; half++) {
      const ql = o + (<usize>half << 6), qh = o + 128 + (<usize>half << 5), sc = o + 192 + (<usize>half << 3);
      const y = y0 + (<usize>half << 9);
      for (let l = 0; l < 32; l++) {
        const is = <usize>(l >> 4);
        const a = <i32>load<u8>(ql + l), b = <i32>load<u8>(ql + l + 32), h = <i32>load<u8>(qh + l);
        const q1 = ((a & 0xf) | ((h & 3) << 4)) - 32;
        const q2 = ((b & 0xf) | (((h >> 2) & 3) << 4)) - 32;
        const q3 = ((a >> 4) | (((h >> 4) & 3) << 4)) - 32;
        const q4 = ((b >> 4) | (((h >> 6) & 3) << 4)) - 32;
        const yl = y + (<usize>l << 2);
        store<f32>(yl, d * <f32>load<i8>(sc + is) * <f32>q1);
        store<f32>(yl, d * <f32>load<i8>(sc + is + 2) * <f32>q2, 128);
        store<f32>(yl, d * <f32>load<i8>(sc + is + 4) * <f32>q3, 256);
        store<f32>(yl, d * <f32>load<i8>(sc + is + 6) * <f32>q4, 384);
      }
    }
  }
}

// Q4_0r4 / Q8_0r4 (repack.ts: per 4-row group and block, [4 x f16 d][4 x qb quant bytes]): row j (0..3) of the
// group at g, blocks [b0, b1), as dequantize_row_q4_0 / q8_0 of the row before the repack (exact products)
export function get_rows_q4_0r4(b0: i32, b1: i32, g: usize, j: i32, dst: usize): void {
  for (let i = b0; i < b1; i++) {
    const o = g + <usize>i * 72, q = o + 8 + (<usize>j << 4), y = dst + (<usize>i << 7);
    const d = h2f(load<u16>(o + (<usize>j << 1)));
    for (let k = 0; k < 16; k++) {
      const b = <i32>load<u8>(q + k);
      store<f32>(y + (<usize>k << 2), <f32>((b & 0xf) - 8) * d);
      store<f32>(y + (<usize>k << 2), <f32>((b >> 4) - 8) * d, 64);
    }
  }
}
export function get_rows_q8_0r4(b0: i32, b1: i32, g: usize, j: i32, dst: usize): void {
  for (let i = b0; i < b1; i++) {
    const o = g + <usize>i * 136, q = o + 8 + (<usize>j << 5), y = dst + (<usize>i << 7);
    const d = h2f(load<u16>(o + (<usize>j << 1)));
    for (let k = 0; k < 32; k++) store<f32>(y + (<usize>k << 2), <f32>load<i8>(q + k) * d);
  }
}

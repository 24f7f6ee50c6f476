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

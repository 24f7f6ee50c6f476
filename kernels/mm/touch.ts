// Touch-ahead loads: WebAssembly has no prefetch instruction, and the GEMV kernels issue so many instructions
// per weight byte that the out-of-order window holds too few cache-line misses to stream from DRAM at full
// speed. One plain u32 load per 64-byte line TOUCH_DIST bytes ahead in the weight stream starts those misses
// early (a software prefetch). The loaded words are OR-ed together and the caller stores them into a result
// slot just before the real result, so the loads are live yet no result bit changes. Loads stop 4 bytes
// before `end` (the thread's weight slice end): never out of bounds, never into another tensor's range.
export const TOUCH_DIST: usize = 16384;
// the lines of [p + TOUCH_DIST, p + TOUCH_DIST + n) below end
@inline export function touch_ahead(p: usize, n: usize, end: usize, dist: usize = TOUCH_DIST): u32 {
  let t: u32 = 0;
  let q = p + dist;
  const e = min(q + n, end - 3);
  while (q < e) { t |= load<u32>(q); q += 64; }
  return t;
}

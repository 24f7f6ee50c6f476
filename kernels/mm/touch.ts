// Touch-ahead loads: WebAssembly has no prefetch instruction, and the GEMV kernels issue so many instructions
// per weight byte that the out-of-order window holds too few cache-line misses to stream from DRAM at full
// speed. One plain u32 load per 64-byte line TOUCH_DIST bytes ahead in the weight stream starts those misses
// early (a software prefetch). The loaded words are OR-ed together and the caller stores them into a result
// slot just before the real result, so the loads are live yet no result bit changes. Loads stop 4 bytes
// before `end` (the thread's weight slice end): never out of bounds, never into another tensor's range.
export const TOUCH_DIST: usize = 16384;
// The one-token kernels' own distances, tuned on the AMD EPYC VM (CPU-time A/B from DRAM, scripts/ab-matvec.mjs;
// BENCHMARKS.md has the sweeps). 0 = no touch-ahead loads at all: on the EPYC the hardware prefetchers keep up
// and every distance tried only stalled retirement. Quiet A/B 2026-12-04 03:34, no touches vs the distances below
// (1 thread / 2 threads split 1024): Q4_K 1.37x / 1.13x, Q4_0r4 1.15x / 1.26x, Q8_0r4 1.59x / 1.21x, Q6_K (against
// 4096) 1.68x / 1.43x. The Intel VMs measured the opposite (16 KiB touches 1.2-1.4x there, "Decode from DRAM on the
// Intel VM"): a machine of that kind wants TOUCH_DIST back in these four (a load-time choice is the next step).
// The 2-4-token decode kernels and the GEMM paths touch nothing either (compute-bound).
// Q4_0r4 (earlier sweep): 16384 7.4 GB/s, 8192 9.6, 6144 10.8, 4096 8.5 (2048 columns); none 1.15x over 6144
export const Q4R4_TOUCH: usize = 0;
// Q8_0r4: 16384 -> 6144 1.45x (split 1024); none 1.59x over 6144
export const Q8R4_TOUCH: usize = 0;
// Q4_K rows: 16384 -> 6144 1.17x, -> 4096 1.17x, -> 2560 1.05x; none 1.37x over 2560
export const Q4K_TOUCH: usize = 0;
// Q6_K blocks: 16384 -> 6144 1.43x, 8192 0.93x of 6144, 4096 1.23x over 8192; then (q35, load 7-10) 3072 1.17-1.25x
// over 4096 (CPU), 2048 1.11x over 3072, 1536 1.10x, 1024 1.12x, 0 (loads of the block itself) 1.11x, no loads at all
// 1.11x over that: against 4096, 1 thread 1.47x (1024 cols) and 2.2x (3584), 2 threads 1.5-1.7x, in L3 1.12x.
export const Q6K_TOUCH: usize = 0;
// the lines of [p + TOUCH_DIST, p + TOUCH_DIST + n) below end
@inline export function touch_ahead(p: usize, n: usize, end: usize, dist: usize = TOUCH_DIST): u32 {
  let t: u32 = 0;
  let q = p + dist;
  const e = min(q + n, end - 3);
  while (q < e) { t |= load<u32>(q); q += 64; }
  return t;
}

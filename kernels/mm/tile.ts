// weight rows per cache tile in the matmul kernels
export const ROW_TILE = 8;
// tokens per cache block of the 8-token Q4_K / Q6_K GEMMs: ~512 KiB of Q8_K activation rows (L2 holds them
// while the weight rows pass), 128 at most (CPU-time A/B, 512 tokens, Q4_K 3072x1024 / 1024x3072 against
// all tokens per row tile: 32 1.11x / 1.13x, 64 1.25x / 1.24x, 128 1.37x / 1.17x; 256 ~ 128)
@inline export function g8_tokens(rowBytes: usize): i32 {
  // rowBytes 0: a one-token call (mm_experts passes no stride)
  return <i32>max<usize>(16, min<usize>(128, (<usize>(512 << 10) / max<usize>(rowBytes, 64)) & ~7));
}

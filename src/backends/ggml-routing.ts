// Which ggml kernel llama.cpp's CPU backend runs for a mul_mat, in the build that made the parity fixtures
// (ggml-cpu x86, AVX-512 "zen4" variant, LLAMAFILE=1, weight repacking on, one thread). The kernel decides
// the float summation order, and the order shows in the last bit. One place for these rules: the reference
// backend follows them (src/backends/reference/matmul.ts) and the cpu device asks them whether a WASM
// kernel reproduces that order or the reference kernel must run (src/backends/cpu/policy.ts).
//   - Q4_K weights with a multiple of 8 rows are repacked (every matmul weight, including the copy
//     llama.cpp loads of tied token embeddings for the output): ggml_gemm_q4_K_8x8_q8_K for each
//     group of 4 activation rows, ggml_gemv_q4_K_8x8_q8_K for the rows left over (all of them in
//     a one-token decode). Q6_K and Q8_0 are not repacked on x86 in this build.
//   - Q4_0 weights with a multiple of 8 rows are repacked too: ggml_gemm/gemv_q4_0_8x8_q8_0.
//   - F32 and F16 weights with at least 2 activation rows (rows of a multiple of 16 values, a multiple of 4 rows):
//     llamafile's tinyBLAS (16 f32 lanes with FMA, _mm512_reduce_add_ps); F16 weights see the activations
//     rounded to f16. With 1 row tinyBLAS declines ("only for prompt processing") and
//     ggml_vec_dot_f32/_f16 run.
//   - everything else: the activations are quantized per row and each output is ggml_vec_dot_<type>
//     (Q5_K and Q3_K: not repacked on x86, so always their AVX2 vec_dot).
import { GgmlType } from '../gguf/ggml-types.js';

/** the weight rows llama.cpp's repack buffer type interleaves (block_q4_0x8, block_q4_Kx8) */
export const LLAMA_REPACK_ROWS = 8;

/** Does llama.cpp repack this weight (and so run its GEMM/GEMV kernels rather than vec_dot)? */
export function llamaRepacks(wtype: number, rows: number): boolean {
  return (wtype === GgmlType.Q4_0 || wtype === GgmlType.Q4_K) && rows % LLAMA_REPACK_ROWS === 0;
}

/**
 * Activation rows that llama.cpp's repacked Q4_K path computes with its GEMM kernel (groups of 4 rows,
 * own Q8_K tie rule) rather than the GEMV; 0 for every other type.
 */
export function q4KGemmRows(wtype: number, rows: number, nTokens: number): number {
  return wtype === GgmlType.Q4_K && llamaRepacks(wtype, rows) ? nTokens - (nTokens % 4) : 0;
}

/**
 * F32/F16 weights: tinyBLAS's 16 lanes (a batch) rather than ggml_vec_dot_f32/_f16 (one token). tinyBLAS::matmul
 * also declines weights whose row count is not a multiple of 4 (e.g. a MoE router over 6 experts).
 */
export function usesTinyBlas(nTokens: number, cols: number, rows: number): boolean {
  return nTokens >= 2 && cols % 16 === 0 && rows % 4 === 0;
}

/**
 * Weight types whose reference kernel reproduces llama.cpp's x86 float order (checked bit for bit
 * against llama.cpp on the parity fixtures). For every other type the reference uses ggml's generic
 * formulas, which match llama.cpp only to float rounding anyway.
 */
export const LLAMA_EXACT_MATMUL_TYPES: ReadonlySet<number> = new Set([GgmlType.F32, GgmlType.F16, GgmlType.Q8_0, GgmlType.Q6_K, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q3_K]);

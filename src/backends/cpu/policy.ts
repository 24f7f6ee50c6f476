// What the cpu device runs for a node: a WASM kernel, or (where no WASM kernel reproduces the reference's
// float order in the numerics asked for) the reference kernel on the same memory; and which weights it
// repacks at load. The llama.cpp routing rules themselves are src/backends/ggml-routing.ts.
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { GgmlType } from '../../gguf/ggml-types.js';
import { LLAMA_EXACT_MATMUL_TYPES, llamaRepacks, q4KGemmRows } from '../ggml-routing.js';
import { activationTypeFor, baseType, MATMUL_TYPES } from './runtime/layouts.js';

const F32 = GgmlType.F32;
const matmulTypes = new Set(MATMUL_TYPES);

/** ggml type id of a tensor's dtype ('f32' intermediates as F32, 'f16' as F16; weights may carry a CpuLayout) */
export const typeId = (t: TensorDesc): number => (typeof t.dtype === 'number' ? t.dtype : t.dtype === 'f16' ? GgmlType.F16 : F32);

/**
 * Does the WASM kernel reproduce ggml's float order for this weight type and row count (exact numerics)?
 * F32, F16, Q8_0, Q6_K, Q5_K, Q3_K always; Q4_0/Q4_K (and Q4_0r4) in the repacked GEMM/GEMV orders only, which
 * llama.cpp runs for rows % 8 == 0 (otherwise its AVX2 vec_dot, which the reference kernel reproduces).
 */
export function wasmReproducesOrder(wt: number, rows: number): boolean {
  switch (baseType(wt)) {
    case GgmlType.F32: case GgmlType.F16: case GgmlType.Q8_0: case GgmlType.Q6_K: case GgmlType.Q5_K: case GgmlType.Q3_K: return true;
    case GgmlType.Q4_0: case GgmlType.Q4_K: return llamaRepacks(baseType(wt), rows);
    default: return false;
  }
}

export interface WasmMatmul { wt: number; rows: number; cols: number; nTok: number; share: number }

/**
 * A mul_mat node the WASM kernels compute (shape and types), or null when the reference must. Types
 * outside LLAMA_EXACT_MATMUL_TYPES use their WASM kernels in both numerics (the reference only has
 * ggml's generic formulas for them). `share`: matmuls with equal keys read the same quantized activations.
 */
export function wasmMatmul(g: Graph, t: TensorDesc, fastNumerics: boolean): WasmMatmul | null {
  const w = g.tensors[t.src[0]!]!, x = g.tensors[t.src[1]!]!, wt = typeId(w);
  const rows = w.shape[1] ?? 1, cols = w.shape[0]!, nTok = x.shape[1] ?? 1;
  if (!matmulTypes.has(wt) || (!fastNumerics && LLAMA_EXACT_MATMUL_TYPES.has(baseType(wt)) && !wasmReproducesOrder(wt, rows))) return null;
  const vt = activationTypeFor(wt);
  const share = vt === F32 || oneRowOrder(wt, rows, nTok) ? -1 : ((x.id * 64 + vt) * 8192 + q4KGemmRows(wt, rows, nTok));
  return { wt, rows, cols, nTok, share };
}

/**
 * A mul_mat_id node the WASM kernels compute (its weight type and one expert's rows/cols), or null when the
 * reference must: the same rule as mul_mat, for one expert's matrix.
 */
export function wasmMatmulId(g: Graph, t: TensorDesc, fastNumerics: boolean): { wt: number; rows: number; cols: number; nExpert: number } | null {
  const w = g.tensors[t.src[0]!]!, wt = typeId(w);
  const cols = w.shape[0]!, rows = w.shape[1] ?? 1, nExpert = w.shape[2] ?? 1;
  if (!matmulTypes.has(wt) || (!fastNumerics && LLAMA_EXACT_MATMUL_TYPES.has(baseType(wt)) && !wasmReproducesOrder(wt, rows))) return null;
  return { wt, rows, cols, nExpert };
}

/**
 * F32/F16 weights whose row count is not a multiple of 4: llama.cpp's tinyBLAS declines them, so a batch runs
 * ggml_vec_dot per token (a MoE router over 6 experts); the WASM kernels' batch path is tinyBLAS's order.
 */
export function oneRowOrder(wt: number, rows: number, nTok: number): boolean {
  const b = baseType(wt);
  return nTok >= 2 && (b === F32 || b === GgmlType.F16) && rows % 4 !== 0;
}

/** attn_flash computes this flash attention node (f16 caches, equal K/V head sizes, heads of 4k) */
export function wasmFlashAttention(g: Graph, t: TensorDesc): boolean {
  const kc = g.tensors[t.src[1]!]!, vc = g.tensors[t.src[2]!]!, p = t.params, hd = p.headDimK as number;
  return kc.dtype === 'f16' && vc.dtype === 'f16' && hd === p.headDimV && hd % 4 === 0;
}

/** attn_flash_q8 computes this flash-attention node (q8_0 or q4_0 K and V caches of one type, equal K/V head sizes of 32k) */
export function wasmFlashAttentionQ8(g: Graph, t: TensorDesc): boolean {
  const kc = g.tensors[t.src[1]!]!, vc = g.tensors[t.src[2]!]!, p = t.params, hd = p.headDimK as number;
  return (kc.dtype === GgmlType.Q8_0 || kc.dtype === GgmlType.Q4_0) && vc.dtype === kc.dtype && hd === p.headDimV && hd % 32 === 0;
}

/** attn_ggml computes this attention node (f16 caches, equal K/V head sizes, heads of 16k; softcap or not) */
export function wasmAttention(g: Graph, t: TensorDesc): boolean {
  const kc = g.tensors[t.src[1]!]!, p = t.params, hd = p.headDimK as number;
  return kc.dtype === 'f16' && hd === p.headDimV && hd % 16 === 0;
}

/**
 * The layout a weight is repacked to at load: Q4_0 weights llama.cpp would repack (rows % 8 == 0; fast
 * numerics: any rows % 4 == 0) go to Q4_0r4 (4 rows' FMA chains side by side; same arithmetic, same bits);
 * with fast numerics Q8_0 weights to Q8_0r4 (free-order kernel only). null: kept as is.
 */
export function repackTarget(type: number, rows: number, fastNumerics: boolean): typeof GgmlType.Q4_0 | typeof GgmlType.Q8_0 | null {
  if (type === GgmlType.Q4_0 && rows % (fastNumerics ? 4 : 8) === 0) return GgmlType.Q4_0;
  if (type === GgmlType.Q8_0 && fastNumerics && rows % 4 === 0) return GgmlType.Q8_0;
  return null;
}

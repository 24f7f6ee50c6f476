// The KV cache's element type (llama.cpp's -ctk/-ctv): f16 (the default), f32, or a 32-value block type.
// Quantized caches store each K/V row with the CPU backend's from_float of the type as it enters the cache
// (set_rows: quantize_row_q8_0's x86 version; quantize_row_q4_0, the reference rounding), and are read only by
// flash attention (llama.cpp: "quantized V cache requires flash_attn"; graph.ts refuses the other pairing).

import { GgmlType } from '../gguf/ggml-types.js';
import type { DType, TensorDesc } from './graph.js';

export type KvType = 'f16' | 'f32' | 'q8_0' | 'q4_0';
export const KV_TYPES: readonly KvType[] = ['f16', 'f32', 'q8_0', 'q4_0'];
export type QuantKvType = 'q8_0' | 'q4_0';

export const isKvType = (v: unknown): v is KvType => typeof v === 'string' && (KV_TYPES as readonly string[]).includes(v);
export const isQuantizedKv = (t: KvType): t is QuantKvType => t === 'q8_0' || t === 'q4_0';

/** the dtype of a cache leaf of type `t` (quantized caches carry the ggml type id, as weights do) */
export function kvDType(t: KvType): DType {
  return t === 'q8_0' ? GgmlType.Q8_0 : t === 'q4_0' ? GgmlType.Q4_0 : t;
}

/** a cache leaf stored in 32-value blocks (its row length must be a multiple of 32) */
export const quantizedCache = (t: TensorDesc): boolean => t.role === 'state' && (t.dtype === GgmlType.Q8_0 || t.dtype === GgmlType.Q4_0);

/** bytes of one cache row of `n` values */
export function kvRowBytes(t: KvType, n: number): number {
  return t === 'q8_0' ? (n / 32) * 34 : t === 'q4_0' ? (n / 32) * 18 : n * (t === 'f16' ? 2 : 4);
}

/**
 * llama.cpp's rotation of a quantized cache (attn_rot_k / attn_rot_v, src/backends/reference/attention-kvq.ts):
 * the Hadamard block sizes for K (and Q) and for V (and the attention output), 0 for none. On when the cache is
 * quantized and the heads (the same size in every layer of the cache) hold a multiple of 64 values: K's block is
 * the largest power of two dividing the head, V's 64.
 */
export function kvRotation(t: KvType, headDimK: number, headDimV: number): { k: number; v: number } {
  if (!isQuantizedKv(t)) return { k: 0, v: 0 };
  let k = 0;
  if (headDimK % 64 === 0) for (k = 64; headDimK % (2 * k) === 0;) k *= 2;
  return { k, v: headDimV % 64 === 0 ? 64 : 0 };
}

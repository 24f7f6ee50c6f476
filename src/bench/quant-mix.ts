// Per-tensor weight types of a synthetic model: one type for every matrix (f32/f16/q8_0/q4_0),
// or llama.cpp's Q4_K_M mix, following llama_tensor_get_type() in llama.cpp's src/llama-quant.cpp:
//
// * the output matrix (output.weight, or token_embd.weight when there is no output.weight) is Q6_K,
//   or Q8_0 when its rows are not a multiple of 256;
// * attn_v and ffn_down are Q6_K in the layers where use_more_bits(i, n) holds
//   (i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2, integer division); fused attn_qkv is Q5_K;
// * every other matrix is Q4_K (token_embd too, when the output is separate);
// * then the fallback for rows that are not whole 256-blocks: Q4_K -> Q5_0, Q5_K -> Q5_1,
//   Q6_K -> Q8_0, and F16 when even that block does not divide the row;
// * 1-D tensors (norms, biases, rope_freqs) stay F32: llama.cpp quantizes only 2-D+ weights.
//
// llama.cpp counts attn_v / ffn_down in tensor order with the loader's layer-first name order, so
// the counter equals the layer index.

import { GgmlType, ggmlTypeInfo } from '../gguf/ggml-types.js';
import type { SyntheticType } from './shapes.js';

export function useMoreBits(iLayer: number, nLayers: number): boolean {
  const n8 = Math.floor(nLayers / 8);
  return iLayer < n8 || iLayer >= Math.floor((7 * nLayers) / 8) || (iLayer - n8) % 3 === 2;
}

function layerOf(name: string): number {
  const m = /^blk\.(\d+)\./.exec(name);
  return m ? Number(m[1]) : -1;
}

/** llama.cpp's K-quant fallback for a row length the chosen type's block does not divide. */
export function kQuantFallback(type: number, ne0: number): number {
  const bs = ggmlTypeInfo(type)!.blockSize;
  if (ne0 % bs === 0) return type;
  let t: number;
  switch (type) {
    case GgmlType.Q4_K: t = GgmlType.Q5_0; break;
    case GgmlType.Q5_K: t = GgmlType.Q5_1; break;
    case GgmlType.Q6_K: t = GgmlType.Q8_0; break;
    case GgmlType.Q2_K: case GgmlType.Q3_K: case GgmlType.IQ4_XS: t = GgmlType.IQ4_NL; break;
    default: t = type;
  }
  if (ne0 % ggmlTypeInfo(t)!.blockSize !== 0) t = GgmlType.F16;
  return t;
}

/**
 * The ggml type of tensor `name` (dims ne0-first) in a model of `nLayer` layers, `hasOutput`
 * telling whether the file has a separate output.weight.
 */
export function tensorType(mix: SyntheticType, name: string, dims: number[], nLayer: number, hasOutput: boolean): number {
  const ne0 = dims[0]!;
  if (dims.length < 2 || !name.endsWith('.weight')) return GgmlType.F32;
  switch (mix) {
    case 'f32': return GgmlType.F32;
    case 'f16': return GgmlType.F16;
    case 'q8_0': return ne0 % 32 === 0 ? GgmlType.Q8_0 : GgmlType.F16;
    case 'q4_0': return ne0 % 32 === 0 ? GgmlType.Q4_0 : GgmlType.F16;
    case 'q4_k_m': break;
  }
  let t: number = GgmlType.Q4_K;
  if (name === 'output.weight' || (!hasOutput && name === 'token_embd.weight')) {
    t = ne0 % 256 !== 0 ? GgmlType.Q8_0 : GgmlType.Q6_K;
  } else if (name === 'token_embd.weight') {
    t = GgmlType.Q4_K;
  } else if (name.includes('attn_v.weight')) {
    if (useMoreBits(layerOf(name), nLayer)) t = GgmlType.Q6_K;
  } else if (name.includes('ffn_down')) {
    if (useMoreBits(layerOf(name), nLayer)) t = GgmlType.Q6_K;
  } else if (name.includes('attn_qkv.weight')) {
    t = GgmlType.Q5_K;
  }
  return kQuantFallback(t, ne0);
}

/** general.file_type (llama_ftype) for a mix. */
export function fileTypeOf(mix: SyntheticType): number {
  return { f32: 0, f16: 1, q4_0: 2, q8_0: 7, q4_k_m: 15 }[mix];
}

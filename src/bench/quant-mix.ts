// Per-tensor weight types of a synthetic model: one type for every matrix (f32/f16/q8_0/q4_0), or one of
// llama.cpp's K-quant mixes (q4_k_m, q5_k_m, q3_k_m, q6_k, iq4_xs), following llama_tensor_get_type_impl()
// in llama.cpp's src/llama-quant.cpp (v0.4.0, without an imatrix):
//
// * the output matrix (output.weight, or token_embd.weight when there is no output.weight) is Q6_K,
//   or Q8_0 when its rows are not a multiple of 256; a separate token_embd keeps the mix's default type;
// * the default type: Q4_K (q4_k_m), Q5_K (q5_k_m), Q3_K (q3_k_m), Q6_K (q6_k), IQ4_XS (iq4_xs);
// * attn_v: q4_k_m/q5_k_m Q6_K where use_more_bits(i, n) (i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2);
//   q3_k_m Q5_K for the first 2 layers, Q4_K after; iq4_xs Q5_K when n_head/n_head_kv >= 4;
// * ffn_down: q4_k_m/q5_k_m Q6_K where use_more_bits; q3_k_m Q5_K for i < n/16, Q4_K after;
//   iq4_xs Q5_K for i < n/8;
// * attn_output: q3_k_m Q4_K; a fused attn_qkv (qwen35's Gated DeltaNet layers) takes the attn_v rule;
// * never quantized: MoE routers (ffn_gate_inp) and Gated DeltaNet conv kernels (ssm_conv1d);
// * then the fallback for rows that are not whole 256-blocks: Q4_K -> Q5_0, Q5_K -> Q5_1,
//   Q6_K -> Q8_0, Q2_K/Q3_K -> Q4_0, IQ4_XS -> IQ4_NL, and F16 when even that block does not divide the row;
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
    case GgmlType.Q2_K: case GgmlType.Q3_K: t = GgmlType.Q4_0; break;
    case GgmlType.IQ4_XS: t = GgmlType.IQ4_NL; break;
    default: t = type;
  }
  if (ne0 % ggmlTypeInfo(t)!.blockSize !== 0) t = GgmlType.F16;
  return t;
}

/** The mixes that follow llama.cpp's per-tensor rules (the others put every matrix in one type). */
const MIX_DEFAULT: Record<string, number> = { q4_k_m: GgmlType.Q4_K, q5_k_m: GgmlType.Q5_K, q3_k_m: GgmlType.Q3_K, q6_k: GgmlType.Q6_K, iq4_xs: GgmlType.IQ4_XS };

/**
 * The ggml type of tensor `name` (dims ne0-first) in a model of `nLayer` layers, `hasOutput`
 * telling whether the file has a separate output.weight, `nGqa` = n_head / n_head_kv.
 */
export function tensorType(mix: SyntheticType, name: string, dims: number[], nLayer: number, hasOutput: boolean, nGqa = 1): number {
  const ne0 = dims[0]!;
  if (dims.length < 2 || !name.endsWith('.weight')) return GgmlType.F32;
  // never quantized (llama-quant.cpp): MoE routers and the Gated DeltaNet conv kernels
  if (name.includes('ffn_gate_inp') || name.includes('ssm_conv1d')) return GgmlType.F32;
  switch (mix) {
    case 'f32': return GgmlType.F32;
    case 'f16': return GgmlType.F16;
    case 'q8_0': return ne0 % 32 === 0 ? GgmlType.Q8_0 : GgmlType.F16;
    case 'q4_0': return ne0 % 32 === 0 ? GgmlType.Q4_0 : GgmlType.F16;
    default: break;
  }
  let t = MIX_DEFAULT[mix]!;
  const il = layerOf(name);
  if (name === 'output.weight' || (!hasOutput && name === 'token_embd.weight')) {
    // llama.cpp tests the row against the default type's block (all 256 here)
    t = ne0 % 256 !== 0 ? GgmlType.Q8_0 : GgmlType.Q6_K;
  } else if (name === 'token_embd.weight') {
    // the default type
  } else if (name.includes('attn_v.weight') || name.includes('attn_qkv.weight')) {
    // llama.cpp's attn_v rule covers every attn_v-like tensor (category_is_attn_v: attn_v, the fused attn_qkv),
    // so its own attn_qkv branch is never reached; its counter equals the layer index (one per layer)
    if (mix === 'q3_k_m') t = il < 2 ? GgmlType.Q5_K : GgmlType.Q4_K;
    else if (mix === 'iq4_xs') { if (nGqa >= 4) t = GgmlType.Q5_K; }
    else if ((mix === 'q4_k_m' || mix === 'q5_k_m') && useMoreBits(il, nLayer)) t = GgmlType.Q6_K;
  } else if (name.includes('ffn_down')) {
    if (mix === 'q3_k_m') t = il < Math.floor(nLayer / 16) ? GgmlType.Q5_K : GgmlType.Q4_K;
    else if (mix === 'q4_k_m' || mix === 'q5_k_m') { if (useMoreBits(il, nLayer)) t = GgmlType.Q6_K; }
    else if (mix === 'iq4_xs' && il < Math.floor(nLayer / 8)) t = GgmlType.Q5_K; // no imatrix
  } else if (name.includes('attn_output.weight')) {
    if (mix === 'q3_k_m') t = GgmlType.Q4_K;
  }
  return kQuantFallback(t, ne0);
}

/** general.file_type (llama_ftype) for a mix. */
export function fileTypeOf(mix: SyntheticType): number {
  return { f32: 0, f16: 1, q4_0: 2, q8_0: 7, q3_k_m: 12, q4_k_m: 15, q5_k_m: 17, q6_k: 18, iq4_xs: 30 }[mix];
}

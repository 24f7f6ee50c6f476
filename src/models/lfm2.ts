// lfm2 (Liquid LFM2): layers whose attention.head_count_kv entry is 0 are short-conv layers (a gated causal
// convolution over the last shortconv.l_cache tokens, with a per-sequence conv state); the others attend
// with per-head Q/K norms and NeoX RoPE (hparams). SwiGLU FFN; the final norm is token_embd_norm.
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';

export const lfm2: ArchSpec = { ...llama, names: ['lfm2'] };

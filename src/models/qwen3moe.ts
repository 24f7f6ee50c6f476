// qwen3moe (Qwen3-30B-A3B, 235B-A22B): qwen3 attention (per-head Q/K norms, NeoX RoPE, head_dim from
// attention.key_length) with a mixture-of-experts FFN in every layer: an f32 router, softmax over
// expert_count experts, the top expert_used_count, their weights renormalised (norm_w hard-coded true in
// llama.cpp), SwiGLU experts summed in rank order (src/models/transformer.ts, hparams MOE_ARCHS).
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';

export const qwen3moe: ArchSpec = { ...llama, names: ['qwen3moe'] };

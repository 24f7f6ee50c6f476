// qwen35moe (Qwen3.5 MoE, e.g. 35B-A3B): qwen35's hybrid layers (Gated DeltaNet, and gated attention every
// full_attention_interval-th layer) with a mixture-of-experts FFN: softmax router, top expert_used_count,
// weights renormalised, plus a shared SwiGLU expert gated per token by sigmoid(ffn_gate_inp_shexp·x)
// (src/models/transformer.ts; hparams MOE_ARCHS).
import type { ArchSpec } from './transformer.js';
import { qwen35 } from './qwen35.js';

export const qwen35moe: ArchSpec = { ...qwen35, names: ['qwen35moe'] };

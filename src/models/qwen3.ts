// qwen3: qwen2 without biases, plus per-head RMS norms on Q and K before RoPE (attn_q_norm /
// attn_k_norm, picked up from the file); head_dim comes from attention.key_length.
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';

export const qwen3: ArchSpec = { ...llama, names: ['qwen3'] };

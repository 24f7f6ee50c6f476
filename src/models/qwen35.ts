// qwen35 (Qwen3.5 dense): hybrid. Gated DeltaNet layers (recurrent: a conv state and an S x S delta-rule
// state per head) and every full_attention_interval-th layer gated attention (attn_q gives [q | gate] per
// head, partial NeoX RoPE over rope.dimension_count dims, Q/K norms); the pre-FFN norm is named
// post_attention_norm (hparams).
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';

export const qwen35: ArchSpec = { ...llama, names: ['qwen35'], outputRowsAfterNorm: true };

// smollm3: llama (normal RoPE, SwiGLU, GQA), except that every 4th layer ((il + 1) % 4 == 0) applies
// no RoPE to Q and K (NoPE). llama.cpp hard-codes the step (hparams.n_no_rope_layer_step = 4); no key.
import type { ArchSpec } from './transformer.js';
import { llama } from './llama.js';

const NO_ROPE_LAYER_STEP = 4;

export const smollm3: ArchSpec = { ...llama, names: ['smollm3'], ropeLayer: (_hp, il) => (il + 1) % NO_ROPE_LAYER_STEP !== 0 };

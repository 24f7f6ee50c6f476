// llama (and llama-shaped models: TinyLlama, SmolLM, Llama 3.x with rope_freqs): pre-norm,
// SwiGLU, normal (adjacent-pair) RoPE, softmax scale 1/sqrt(head_dim).
import type { ArchSpec } from './transformer.js';

export const llama: ArchSpec = {
  names: ['llama'],
  embedScale: () => 1,
  qScale: () => 1,
  kqScale: (hp) => 1 / Math.sqrt(hp.headDimK),
  ffnAct: 'swiglu',
};

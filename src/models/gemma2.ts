// gemma2: embeddings x sqrt(n_embd); GEGLU; post-attention and post-FFN norms; Q scaled by
// 1/sqrt(head_dim) after RoPE; attention-logit and final-logit soft-capping; sliding window on
// every other layer (hparams).
import type { ArchSpec } from './transformer.js';

export const gemma2: ArchSpec = {
  names: ['gemma2'],
  embedScale: (hp) => Math.fround(Math.sqrt(hp.nEmbd)),
  qScale: (hp) => 1 / Math.sqrt(hp.headDimK),
  kqScale: () => 1,
  ffnAct: 'geglu',
};

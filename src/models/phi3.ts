// phi3: fused attn_qkv and fused ffn_up = [gate; up]; Q is scaled by 1/sqrt(head_dim) before
// attention (llama.cpp's phi3 graph), so the softmax scale is 1.
import type { ArchSpec } from './transformer.js';

export const phi3: ArchSpec = {
  names: ['phi3'],
  embedScale: () => 1,
  qScale: (hp) => 1 / Math.sqrt(hp.headDimK),
  kqScale: () => 1,
  ffnAct: 'swiglu',
};

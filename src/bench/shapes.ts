// Published shapes of small open models, for synthetic (random-weight) benchmark models.
// Random weights cost the same to compute as real ones; only the shapes, types and the
// architecture's graph matter for speed. Figures are from each model's config.json / GGUF metadata.

export interface ModelShape {
  /** e.g. "qwen3-0.6b" */
  name: string;
  /** general.architecture */
  arch: 'llama' | 'qwen3' | 'gemma3' | 'qwen35' | 'qwen3moe';
  /** where the dims come from, which values were chosen where no source gives them, what is reduced */
  description?: string;
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  headDim: number;
  nFf: number;
  nVocab: number;
  nCtxTrain: number;
  ropeBase: number;
  eps: number;
  /** no output.weight: the logits use token_embd.weight */
  tied: boolean;
  /** llama3-style rope_freqs.weight (rope scaling factors per rotated pair) */
  ropeFreqs?: { factor: number; lowFreqFactor: number; highFreqFactor: number; originalCtx: number };
  /** gemma3: sliding window size (local layers) */
  slidingWindow?: number;
  /** rope.dimension_count when RoPE covers only part of a head (qwen35: 64 of 256) */
  ropeDims?: number;
  /** qwen35: rope.dimension_sections (IMROPE; text positions make it NeoX over ropeDims) */
  ropeSections?: [number, number, number, number];
  /** qwen35: Gated DeltaNet layers, every fullAttentionInterval-th layer attention (attention/FFN dims above) */
  deltaNet?: { convKernel: number; stateSize: number; nHeadK: number; nHeadV: number; fullAttentionInterval: number };
  /** mixture-of-experts FFN in every layer (nFf is then only the file's feed_forward_length) */
  moe?: { nExpert: number; nExpertUsed: number; nFfExp: number };
}

export const SHAPES: Record<string, ModelShape> = {
  'qwen3-0.6b': {
    name: 'qwen3-0.6b', arch: 'qwen3', nEmbd: 1024, nLayer: 28, nHead: 16, nHeadKv: 8, headDim: 128, nFf: 3072,
    nVocab: 151936, nCtxTrain: 40960, ropeBase: 1e6, eps: 1e-6, tied: true,
  },
  'llama-3.2-1b': {
    name: 'llama-3.2-1b', arch: 'llama', nEmbd: 2048, nLayer: 16, nHead: 32, nHeadKv: 8, headDim: 64, nFf: 8192,
    nVocab: 128256, nCtxTrain: 131072, ropeBase: 500000, eps: 1e-5, tied: true,
    ropeFreqs: { factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalCtx: 8192 },
  },
  'smollm2-135m': {
    name: 'smollm2-135m', arch: 'llama', nEmbd: 576, nLayer: 30, nHead: 9, nHeadKv: 3, headDim: 64, nFf: 1536,
    nVocab: 49152, nCtxTrain: 8192, ropeBase: 100000, eps: 1e-5, tied: true,
  },
  'tinyllama-1.1b': {
    name: 'tinyllama-1.1b', arch: 'llama', nEmbd: 2048, nLayer: 22, nHead: 32, nHeadKv: 4, headDim: 64, nFf: 5632,
    nVocab: 32000, nCtxTrain: 2048, ropeBase: 10000, eps: 1e-5, tied: false,
  },
  'gemma3-270m': {
    name: 'gemma3-270m', arch: 'gemma3', nEmbd: 640, nLayer: 18, nHead: 4, nHeadKv: 1, headDim: 256, nFf: 2048,
    nVocab: 262144, nCtxTrain: 32768, ropeBase: 1e6, eps: 1e-6, tied: true, slidingWindow: 512,
  },
  'qwen3.5-0.8b': {
    name: 'qwen3.5-0.8b', arch: 'qwen35', nEmbd: 1024, nLayer: 24, nHead: 8, nHeadKv: 2, headDim: 256, nFf: 3584,
    nVocab: 248320, nCtxTrain: 262144, ropeBase: 1e7, eps: 1e-6, tied: true, ropeDims: 64, ropeSections: [11, 11, 10, 0],
    deltaNet: { convKernel: 4, stateSize: 128, nHeadK: 16, nHeadV: 16, fullAttentionInterval: 4 },
    description: 'Qwen3.5-0.8B at its real dims (shared/research/arch-anchors.md section 2): 24 layers = 18 Gated DeltaNet '
      + '(16 q/k and 16 v heads of 128, conv 4) + 6 gated attention (8/2 heads of 256, RoPE over 64 dims, sections '
      + '[11,11,10,0], base 1e7), FFN 3584, vocab 248320, tied. context_length 262144 is not in those notes: it is '
      + 'the HF config\'s max_position_embeddings and only sizes nothing here (the bench context is -p/-n)',
  },
  // Qwen3-30B-A3B's layer (d 2048, 32/4 heads of 128, 128 experts of width 768, top 8; vocab 151936, untied)
  // with 4 of its 48 layers: a layer's MoE work and weight traffic are the real ones, the file ~1/12 the size.
  'qwen3-30b-a3b-4l': {
    name: 'qwen3-30b-a3b-4l', arch: 'qwen3moe', nEmbd: 2048, nLayer: 4, nHead: 32, nHeadKv: 4, headDim: 128, nFf: 6144,
    nVocab: 151936, nCtxTrain: 40960, ropeBase: 1e6, eps: 1e-6, tied: false, moe: { nExpert: 128, nExpertUsed: 8, nFfExp: 768 },
    description: 'Qwen3-30B-A3B REDUCED to 4 of its 48 layers: the real file is ~17 GB at Q4_K_M, beyond wasm32\'s '
      + '4 GiB; each layer is the real one (dim 2048, 32/4 heads of 128, 128 experts, top-8, expert FFN 768; '
      + 'arch-anchors.md section 3), vocab 151936, untied, so a token costs 4/48 of the real trunk plus the full '
      + 'output head. feed_forward_length 6144, context 40960, RoPE base 1e6 and eps 1e-6 are the HF config\'s '
      + '(not in those notes; qwen3moe never reads feed_forward_length when the expert width is given)',
  },
  // Tiny shapes for tests and smoke runs (dims a multiple of 256 so K-quants need no fallback).
  'tiny-llama': {
    name: 'tiny-llama', arch: 'llama', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 64, nFf: 512,
    nVocab: 512, nCtxTrain: 512, ropeBase: 10000, eps: 1e-5, tied: false,
  },
  'tiny-qwen3': {
    name: 'tiny-qwen3', arch: 'qwen3', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 128, nFf: 512,
    nVocab: 512, nCtxTrain: 512, ropeBase: 1e6, eps: 1e-6, tied: true,
  },
  'tiny-qwen3moe': {
    name: 'tiny-qwen3moe', arch: 'qwen3moe', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 128, nFf: 512,
    nVocab: 512, nCtxTrain: 512, ropeBase: 1e6, eps: 1e-6, tied: false, moe: { nExpert: 6, nExpertUsed: 2, nFfExp: 256 },
  },
};

export const SYNTHETIC_TYPES = ['f32', 'f16', 'q8_0', 'q4_0', 'q4_k_m', 'q5_k_m', 'q3_k_m', 'q6_k', 'iq4_xs'] as const;
export type SyntheticType = (typeof SYNTHETIC_TYPES)[number];

export function shapeNames(): string[] { return Object.keys(SHAPES); }

/** Parses "SHAPE:TYPE" (e.g. "qwen3-0.6b:q4_k_m"). */
export function parseSyntheticSpec(spec: string): { shape: ModelShape; type: SyntheticType } {
  const i = spec.lastIndexOf(':');
  const name = i < 0 ? spec : spec.slice(0, i);
  const type = (i < 0 ? 'q4_k_m' : spec.slice(i + 1).toLowerCase()) as SyntheticType;
  const shape = Object.hasOwn(SHAPES, name) ? SHAPES[name] : undefined;
  if (!shape) throw Object.assign(new Error(`unknown synthetic shape "${name}" (known: ${shapeNames().join(', ')})`), { code: 'USAGE' });
  if (!SYNTHETIC_TYPES.includes(type)) throw Object.assign(new Error(`unknown synthetic type "${type}" (known: ${SYNTHETIC_TYPES.join(', ')})`), { code: 'USAGE' });
  return { shape, type };
}

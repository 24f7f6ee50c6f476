// Hyperparameters from GGUF metadata, with llama.cpp's defaults where a key is missing.
import { GgufError } from '../gguf/errors.js';
import { metaNumber, metaString, metaArray, metaArrayLength, type GgufFile } from '../gguf/reader.js';

export interface HParams {
  arch: string;
  nVocab: number;
  nCtxTrain: number;
  nEmbd: number;
  nLayer: number;
  nFf: number;
  nHead: number;
  nHeadKv: number;
  headDimK: number;
  headDimV: number;
  eps: number;
  ropeDims: number;
  ropeFreqBase: number;
  ropeFreqScale: number;
  /** RoPE base/scale for sliding-window layers (gemma3) */
  ropeFreqBaseSwa: number;
  ropeFreqScaleSwa: number;
  /** NeoX-style rotation (halves) instead of adjacent pairs */
  ropeNeox: boolean;
  /** sliding window size, 0 = none */
  slidingWindow: number;
  /** layer il uses the sliding window when swaLayers[il] */
  swaLayers: boolean[];
  attnSoftcap: number;
  finalSoftcap: number;
}

export function readHParams(f: GgufFile): HParams {
  const arch = metaString(f, 'general.architecture');
  if (!arch) throw new GgufError('MISSING_KEY', 'general.architecture is missing', f.name);
  const key = (k: string) => `${arch}.${k}`;
  const num = (k: string, def?: number): number => {
    const v = metaNumber(f, key(k));
    if (v !== undefined) return v;
    if (def === undefined) throw new GgufError('MISSING_KEY', `required metadata key ${key(k)} is missing`, f.name);
    return def;
  };
  // per-layer arrays (e.g. head_count_kv per layer in some files): take the first value
  const numOrFirst = (k: string, def?: number): number => {
    const v = f.metadata.get(key(k));
    if (v !== undefined && typeof v === 'object') {
      const a = metaArray(f, key(k)) as ArrayLike<number>;
      return Number(a[0]);
    }
    return num(k, def);
  };
  const nEmbd = num('embedding_length');
  const nHead = numOrFirst('attention.head_count');
  const nTokens = metaArrayLength(f, 'tokenizer.ggml.tokens');
  const embd = f.tensorsByName.get('token_embd.weight');
  const nVocab = num('vocab_size', nTokens !== undefined ? nTokens : embd ? embd.dims[1] ?? 0 : 0);
  const headDimK = num('attention.key_length', nEmbd / nHead);
  const nLayer = num('block_count');
  const gemma = arch === 'gemma2' || arch === 'gemma3';
  const ropeNeox = ['qwen2', 'qwen3', 'gemma2', 'gemma3', 'phi3', 'qwen2moe', 'qwen3moe', 'gemma', 'phi2', 'stablelm', 'gptneox'].includes(arch);
  const slidingWindow = num('attention.sliding_window', 0);
  // llama.cpp's SWA patterns: gemma2 alternates (every 2nd layer global), gemma3 has 5 local : 1 global.
  const pattern = arch === 'gemma2' ? 2 : arch === 'gemma3' ? 6 : slidingWindow > 0 ? 1 : 0;
  const swaLayers = Array.from({ length: nLayer }, (_, il) => slidingWindow > 0 && (pattern === 1 || il % pattern < pattern - 1));
  const scaleType = metaString(f, key('rope.scaling.type'));
  const scaleFactor = metaNumber(f, key('rope.scaling.factor')) ?? metaNumber(f, key('rope.scale_linear'));
  const ropeFreqScale = scaleFactor && scaleFactor > 0 && scaleType !== 'none' && scaleType !== 'yarn' ? 1 / scaleFactor : 1;
  return {
    arch,
    nVocab,
    nCtxTrain: num('context_length', 2048),
    nEmbd,
    nLayer,
    nFf: numOrFirst('feed_forward_length', 0),
    nHead,
    nHeadKv: numOrFirst('attention.head_count_kv', nHead),
    headDimK,
    headDimV: num('attention.value_length', headDimK),
    eps: num('attention.layer_norm_rms_epsilon', gemma ? 1e-6 : 1e-5),
    ropeDims: num('rope.dimension_count', headDimK),
    ropeFreqBase: num('rope.freq_base', 10000),
    ropeFreqScale,
    ropeFreqBaseSwa: num('rope.freq_base_swa', arch === 'gemma3' ? 10000 : num('rope.freq_base', 10000)),
    ropeFreqScaleSwa: arch === 'gemma3' ? 1 : ropeFreqScale,
    ropeNeox,
    slidingWindow,
    swaLayers,
    attnSoftcap: num('attn_logit_softcapping', arch === 'gemma2' ? 50 : 0),
    finalSoftcap: num('final_logit_softcapping', arch === 'gemma2' ? 30 : 0),
  };
}

// Hyperparameters from GGUF metadata, with llama.cpp's defaults where a key is missing; every value
// is checked as it is read (src/models/validate.ts).
import { GgufError } from '../gguf/errors.js';
import { metaString, metaArrayLength, type GgufFile } from '../gguf/reader.js';
import { checkHParams, MAX_DIM, MAX_HEADS, MAX_LAYERS, readIntKey, readIntOrPerLayer, readRealKey } from './validate.js';

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
  const required = <T>(k: string, v: T | undefined): T => {
    if (v === undefined) throw new GgufError('MISSING_KEY', `required metadata key ${key(k)} is missing`, f.name, undefined, { key: key(k) });
    return v;
  };
  // Every value is range-checked as it is read (src/models/validate.ts), block_count first: the
  // per-layer arrays and the layer loop are sized by it.
  const int = (k: string, min: number, max: number) => readIntKey(f, key(k), min, max);
  const real = (k: string, min: number, inclusive: boolean, max?: number) => readRealKey(f, key(k), min, inclusive, max);
  const nLayer = required('block_count', int('block_count', 0, MAX_LAYERS));
  const perLayer = (k: string, min: number, max: number) => readIntOrPerLayer(f, key(k), nLayer, min, max);
  const nEmbd = required('embedding_length', int('embedding_length', 1, MAX_DIM));
  const nHead = required('attention.head_count', perLayer('attention.head_count', 1, MAX_HEADS));
  const nHeadKv = perLayer('attention.head_count_kv', 1, MAX_HEADS) ?? nHead;
  let headDimK = int('attention.key_length', 1, MAX_DIM);
  if (headDimK === undefined) {
    // llama.cpp: n_embd_head_k = n_embd / n_head when the file does not say
    if (nEmbd % nHead !== 0) {
      throw new GgufError('BAD_HPARAM', `metadata ${key('embedding_length')} ${nEmbd} is not a multiple of ${key('attention.head_count')} ${nHead} and there is no ${key('attention.key_length')}`,
        f.name, f.metaEntries.get(key('embedding_length'))?.offset, { key: key('embedding_length'), expected: `a multiple of head_count ${nHead}`, found: String(nEmbd) });
    }
    headDimK = nEmbd / nHead;
  }
  const headDimV = int('attention.value_length', 1, MAX_DIM) ?? headDimK;
  const nTokens = metaArrayLength(f, 'tokenizer.ggml.tokens');
  const embd = f.tensorsByName.get('token_embd.weight');
  const nVocab = int('vocab_size', 1, MAX_DIM) ?? nTokens ?? embd?.dims[1] ?? 0;
  if (nVocab < 1) throw new GgufError('BAD_HPARAM', 'the vocabulary is empty (no tokens, no vocab_size, no token_embd rows)', f.name, undefined, { key: 'tokenizer.ggml.tokens', expected: 'at least 1 token', found: String(nVocab) });
  const gemma = arch === 'gemma2' || arch === 'gemma3';
  const ropeNeox = ['qwen2', 'qwen3', 'gemma2', 'gemma3', 'phi3', 'qwen2moe', 'qwen3moe', 'gemma', 'phi2', 'stablelm', 'gptneox'].includes(arch);
  const slidingWindow = int('attention.sliding_window', 0, MAX_DIM) ?? 0;
  // llama.cpp's SWA patterns: gemma2 alternates (every 2nd layer global), gemma3 has 5 local : 1 global.
  const pattern = arch === 'gemma2' ? 2 : arch === 'gemma3' ? 6 : slidingWindow > 0 ? 1 : 0;
  const swaLayers = Array.from({ length: nLayer }, (_, il) => slidingWindow > 0 && (pattern === 1 || il % pattern < pattern - 1));
  const scaleType = metaString(f, key('rope.scaling.type'));
  // 0 = no scaling (llama.cpp); negative or non-finite factors are refused
  const scaleFactor = real('rope.scaling.factor', 0, true) ?? real('rope.scale_linear', 0, true);
  const ropeFreqScale = scaleFactor && scaleFactor > 0 && scaleType !== 'none' && scaleType !== 'yarn' ? 1 / scaleFactor : 1;
  const ropeFreqBase = real('rope.freq_base', 0, false) ?? 10000;
  const hp: HParams = {
    arch,
    nVocab,
    nCtxTrain: int('context_length', 1, MAX_DIM) ?? 2048,
    nEmbd,
    nLayer,
    nFf: perLayer('feed_forward_length', 0, MAX_DIM) ?? 0,
    nHead,
    nHeadKv,
    headDimK,
    headDimV,
    eps: real('attention.layer_norm_rms_epsilon', 0, false, 1) ?? (gemma ? 1e-6 : 1e-5),
    ropeDims: int('rope.dimension_count', 2, MAX_DIM) ?? headDimK,
    ropeFreqBase,
    ropeFreqScale,
    ropeFreqBaseSwa: real('rope.freq_base_swa', 0, false) ?? (arch === 'gemma3' ? 10000 : ropeFreqBase),
    ropeFreqScaleSwa: arch === 'gemma3' ? 1 : ropeFreqScale,
    ropeNeox,
    slidingWindow,
    swaLayers,
    attnSoftcap: real('attn_logit_softcapping', 0, true) ?? (arch === 'gemma2' ? 50 : 0),
    finalSoftcap: real('final_logit_softcapping', 0, true) ?? (arch === 'gemma2' ? 30 : 0),
  };
  checkHParams(f, hp);
  return hp;
}

// Hyperparameters from GGUF metadata, with llama.cpp's defaults where a key is missing; every value
// is checked as it is read (src/models/validate.ts).
import { GgufError } from '../gguf/errors.js';
import { metaString, metaArrayLength, type GgufFile } from '../gguf/reader.js';
import { checkHParams, MAX_DIM, MAX_EXPERTS, MAX_HEADS, MAX_LAYERS, readBoolPerLayer, readIntKey, readIntOrPerLayer, readPerLayerInts, readRealKey } from './validate.js';

/**
 * What mixes the tokens in a layer: softmax attention over the KV cache, lfm2's short convolution, or
 * qwen35's Gated DeltaNet. The last two keep a fixed-size recurrent state per sequence instead of a cache.
 */
export type LayerKind = 'attention' | 'shortconv' | 'gdn';

/** The Gated DeltaNet layers' sizes (qwen35: the ssm.* keys). */
export interface DeltaNetHParams {
  /** ssm.conv_kernel: width of the causal conv over q, k and v */
  convKernel: number;
  /** ssm.state_size: head size S of q, k and v (each head's state is S x S) */
  headDim: number;
  /** ssm.group_count: q/k heads */
  nHeadK: number;
  /** ssm.time_step_rank: v-heads */
  nHeadV: number;
}

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
  /** the token mixer of each layer */
  layerKinds: LayerKind[];
  /** lfm2: the short convolution's width (shortconv.l_cache) */
  shortConvKernel: number;
  /** qwen35: the Gated DeltaNet layers' sizes */
  deltaNet?: DeltaNetHParams;
  /** qwen35: attn_q gives per head [q | gate], the attention output is multiplied by sigmoid(gate) */
  attnGate: boolean;
  /** the norm before the FFN (qwen35 names it post_attention_norm) */
  ffnNormTensor: 'ffn_norm' | 'post_attention_norm';
  /** the final norm (lfm2 names it token_embd_norm) */
  outputNormTensor: 'output_norm' | 'token_embd_norm';
  /** mixture of experts: experts per layer (0 = dense FFN), experts used per token, an expert's FFN width */
  nExpert: number;
  nExpertUsed: number;
  nFfExp: number;
  /** qwen35moe: the shared expert's FFN width (0 = none), gated per token by sigmoid(ffn_gate_inp_shexp·x) */
  nFfShexp: number;
  /** the routing weights are multiplied by this unless it is 0 or 1 (expert_weights_scale) */
  expertWeightsScale: number;
  /** gemma4: the FFN width of each layer (every other architecture: nFf for every layer) */
  nFfLayers: number[];
  /** gemma4: head size and RoPE dims on sliding-window layers (key_length_swa, rope.dimension_count_swa) */
  headDimSwa: number;
  ropeDimsSwa: number;
  /** gemma4: the last nKvShared layers have no K/V and attend over earlier layers' caches */
  nKvShared: number;
  /** gemma4: width of each layer's slice of the per-layer token embeddings (0 = none) */
  nEmbdPerLayer: number;
}

/** Layer kinds from the file: lfm2's head_count_kv of 0, qwen35's recurrent_layers or full_attention_interval. */
function readLayerKinds(f: GgufFile, arch: string, nLayer: number, kvPerLayer: number[] | undefined): LayerKind[] {
  if (arch === 'lfm2') return Array.from({ length: nLayer }, (_, il) => (kvPerLayer && kvPerLayer[il] === 0 ? 'shortconv' : 'attention'));
  if (arch === 'qwen35' || arch === 'qwen35moe') {
    const rec = f.metadata.get(`${arch}.attention.recurrent_layers`);
    if (rec !== undefined) {
      const a = readPerLayerInts(f, `${arch}.attention.recurrent_layers`, nLayer, 0, 1)!;
      return a.map((v) => (v ? 'gdn' : 'attention'));
    }
    const interval = readIntKey(f, `${arch}.full_attention_interval`, 1, MAX_LAYERS) ?? 4;
    return Array.from({ length: nLayer }, (_, il) => ((il + 1) % interval !== 0 ? 'gdn' : 'attention'));
  }
  return Array.from({ length: nLayer }, () => 'attention');
}


function badKey(f: GgufFile, key: string, expected: string, found: string): never {
  throw new GgufError('BAD_HPARAM', `metadata ${key} is ${found}; expected ${expected}`, f.name, f.metaEntries.get(key)?.offset, { key, expected, found });
}

/** architectures built with a mixture-of-experts FFN in every layer */
export const MOE_ARCHS = ['qwen3moe', 'qwen35moe'];

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
  // lfm2 writes head_count_kv per layer, 0 on its short-conv layers; the attention layers' values must agree
  const kvPerLayer = arch === 'lfm2' ? readPerLayerInts(f, key('attention.head_count_kv'), nLayer, 0, MAX_HEADS) : undefined;
  const layerKinds = readLayerKinds(f, arch, nLayer, kvPerLayer);
  let nHeadKv: number;
  if (kvPerLayer) {
    const attn = kvPerLayer.filter((v) => v > 0);
    const first = attn[0] ?? nHead;
    const other = attn.find((v) => v !== first);
    if (other !== undefined) {
      throw new GgufError('BAD_HPARAM', `metadata ${key('attention.head_count_kv')} has ${first} and ${other} on attention layers; expected the same value on every attention layer (gguf-edge computes uniform layers only)`,
        f.name, f.metaEntries.get(key('attention.head_count_kv'))?.offset, { key: key('attention.head_count_kv'), expected: 'one value for every attention layer', found: `${first} and ${other}` });
    }
    nHeadKv = first;
  } else nHeadKv = perLayer('attention.head_count_kv', 1, MAX_HEADS) ?? nHead;
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
  const gemma4 = arch === 'gemma4';
  // qwen35's IMROPE with text positions (p, p, p, 0) rotates like NEOX (fixtures README, Gated attention layer)
  const ropeNeox = ['qwen2', 'qwen3', 'gemma2', 'gemma3', 'gemma4', 'phi3', 'qwen2moe', 'qwen3moe', 'gemma', 'phi2', 'stablelm', 'gptneox', 'lfm2', 'qwen35', 'qwen35moe'].includes(arch);
  let deltaNet: DeltaNetHParams | undefined;
  if (layerKinds.includes('gdn')) {
    deltaNet = {
      convKernel: required('ssm.conv_kernel', int('ssm.conv_kernel', 2, 64)),
      headDim: required('ssm.state_size', int('ssm.state_size', 1, MAX_HEADS)),
      nHeadK: required('ssm.group_count', int('ssm.group_count', 1, MAX_HEADS)),
      nHeadV: required('ssm.time_step_rank', int('ssm.time_step_rank', 1, MAX_HEADS)),
    };
    const inner = int('ssm.inner_size', 1, MAX_DIM);
    if (inner !== undefined && inner !== deltaNet.headDim * deltaNet.nHeadV) {
      throw new GgufError('BAD_HPARAM', `metadata ${key('ssm.inner_size')} is ${inner}; expected state_size ${deltaNet.headDim} x time_step_rank ${deltaNet.nHeadV}`,
        f.name, f.metaEntries.get(key('ssm.inner_size'))?.offset, { key: key('ssm.inner_size'), expected: String(deltaNet.headDim * deltaNet.nHeadV), found: String(inner) });
    }
    if (deltaNet.nHeadV % deltaNet.nHeadK !== 0) {
      throw new GgufError('BAD_HPARAM', `metadata ${key('ssm.time_step_rank')} is ${deltaNet.nHeadV}; expected a multiple of ssm.group_count ${deltaNet.nHeadK} (each v-head reads one q/k head)`,
        f.name, f.metaEntries.get(key('ssm.time_step_rank'))?.offset, { key: key('ssm.time_step_rank'), expected: `a multiple of ${deltaNet.nHeadK}`, found: String(deltaNet.nHeadV) });
    }
  }
  const slidingWindow = int('attention.sliding_window', 0, MAX_DIM) ?? 0;
  // llama.cpp's SWA patterns: gemma2 alternates (every 2nd layer global), gemma3 has 5 local : 1 global.
  const pattern = arch === 'gemma2' ? 2 : arch === 'gemma3' ? 6 : slidingWindow > 0 ? 1 : 0;
  // gemma4 writes the pattern per layer (attention.sliding_window_pattern, required by llama.cpp)
  const swaLayers = gemma4 ? required('attention.sliding_window_pattern', readBoolPerLayer(f, key('attention.sliding_window_pattern'), nLayer))
    : Array.from({ length: nLayer }, (_, il) => slidingWindow > 0 && (pattern === 1 || il % pattern < pattern - 1));
  const scaleType = metaString(f, key('rope.scaling.type'));
  // 0 = no scaling (llama.cpp); negative or non-finite factors are refused
  const scaleFactor = real('rope.scaling.factor', 0, true) ?? real('rope.scale_linear', 0, true);
  const ropeFreqScale = scaleFactor && scaleFactor > 0 && scaleType !== 'none' && scaleType !== 'yarn' ? 1 / scaleFactor : 1;
  const ropeFreqBase = real('rope.freq_base', 0, false) ?? 10000;
  // the architectures whose graph has a mixture-of-experts FFN (others never read these keys)
  const moe = MOE_ARCHS.includes(arch);
  const qwen35Family = arch === 'qwen35' || arch === 'qwen35moe';
  const nExpert = moe ? required('expert_count', int('expert_count', 1, MAX_EXPERTS)) : 0;
  const nExpertUsed = moe ? required('expert_used_count', int('expert_used_count', 1, MAX_EXPERTS)) : 0;
  // gemma4's FFN width differs per layer (wider on the KV-shared layers); elsewhere layers are uniform
  const nFfLayers = gemma4 ? readPerLayerInts(f, key('feed_forward_length'), nLayer, 1, MAX_DIM) ?? [] : undefined;
  const nFf = nFfLayers ? Math.max(0, ...nFfLayers) : perLayer('feed_forward_length', 0, MAX_DIM) ?? 0;
  const hp: HParams = {
    arch,
    nVocab,
    nCtxTrain: int('context_length', 1, MAX_DIM) ?? 2048,
    nEmbd,
    nLayer,
    nFf,
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
    layerKinds,
    shortConvKernel: layerKinds.includes('shortconv') ? required('shortconv.l_cache', int('shortconv.l_cache', 2, 64)) : 0,
    deltaNet,
    attnGate: qwen35Family,
    ffnNormTensor: qwen35Family ? 'post_attention_norm' : 'ffn_norm',
    outputNormTensor: arch === 'lfm2' ? 'token_embd_norm' : 'output_norm',
    nExpert,
    nExpertUsed,
    // llama.cpp (qwen3moe): n_ff / n_expert_used when the file has no expert width
    nFfExp: moe ? int('expert_feed_forward_length', 0, MAX_DIM) ?? Math.floor(nFf / nExpertUsed) : 0,
    expertWeightsScale: moe ? real('expert_weights_scale', 0, true) ?? 0 : 0,
    nFfShexp: moe ? int('expert_shared_feed_forward_length', 0, MAX_DIM) ?? 0 : 0,
    nFfLayers: nFfLayers ?? Array.from({ length: nLayer }, () => nFf),
    headDimSwa: int('attention.key_length_swa', 1, MAX_DIM) ?? headDimK,
    ropeDimsSwa: 0,
    nKvShared: gemma4 ? int('attention.shared_kv_layers', 0, nLayer) ?? 0 : 0,
    nEmbdPerLayer: gemma4 ? int('embedding_length_per_layer_input', 0, MAX_DIM) ?? 0 : 0,
  };
  hp.ropeDimsSwa = int('rope.dimension_count_swa', 2, MAX_DIM) ?? (int('rope.dimension_count', 2, MAX_DIM) ?? hp.headDimSwa);
  if (gemma4) {
    // llama.cpp: Gemma 4 requires K and V head sizes to agree (on SWA layers too)
    const vSwa = int('attention.value_length_swa', 1, MAX_DIM) ?? hp.headDimSwa;
    if (vSwa !== hp.headDimSwa) badKey(f, key('attention.value_length_swa'), `key_length_swa ${hp.headDimSwa}`, String(vSwa));
    if (headDimV !== headDimK) badKey(f, key('attention.value_length'), `key_length ${headDimK}`, String(headDimV));
    if (hp.ropeDimsSwa > hp.headDimSwa || hp.ropeDimsSwa % 2 !== 0) badKey(f, key('rope.dimension_count_swa'), `an even number of dims <= key_length_swa ${hp.headDimSwa}`, String(hp.ropeDimsSwa));
    // a shared layer reuses the cache of layer n_kv - 2 (SWA) or n_kv - 1 (full)
    if (hp.nKvShared > 0 && nLayer - hp.nKvShared < 2) badKey(f, key('attention.shared_kv_layers'), `at most block_count - 2 = ${nLayer - 2}`, String(hp.nKvShared));
  }
  checkHParams(f, hp);
  return hp;
}

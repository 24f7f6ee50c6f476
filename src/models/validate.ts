// A GGUF file is untrusted input: every hyperparameter the graph is built from and every tensor the
// graph reads is checked here, before anything is allocated, so that a corrupt or hostile file ends
// in a GgufError naming the key or tensor (expected vs found) rather than in a hang, an absurd
// allocation or a kernel writing past a buffer sized from a different number.
//
// Hyperparameters: integer keys must be integers within range; head counts must divide (GQA);
// head dims must follow from the embedding width when not given; RoPE must rotate an even number of
// dims within the head; eps, bases and soft-caps must be finite. Per-layer arrays must have one value
// per layer (gguf-edge computes uniform layers only, so their values must agree).
// Tensors: exactly the set src/models/transformer.ts reads (required, optional and fused variants),
// each with the shape the hyperparameters imply (like llama.cpp's create_tensor shape check), vectors
// in F32 (the element-wise ops read them as F32), and no tensor the architecture does not use
// (llama.cpp refuses those too: "wrong number of tensors").

import { GgufError } from '../gguf/errors.js';
import { ggmlTypeName, GgmlType } from '../gguf/ggml-types.js';
import { metaArray, metaArrayLength, metaNumber, type GgufFile, type GgufTensorInfo } from '../gguf/reader.js';
import { isSupportedType } from '../quant/dequantize.js';
import type { HParams } from './hparams.js';

/** llama.cpp's LLAMA_MAX_LAYERS */
export const MAX_LAYERS = 512;
/** Bounds for sizes that are tied to tensor shapes anyway; they only keep arithmetic sane before that check. */
export const MAX_DIM = 2 ** 31 - 1;
export const MAX_HEADS = 1 << 16;
/** llama.cpp's LLAMA_MAX_EXPERTS */
export const MAX_EXPERTS = 512;

function badHParam(f: GgufFile, key: string, expected: string, found: string): never {
  throw new GgufError('BAD_HPARAM', `metadata ${key} is ${found}; expected ${expected}`, f.name, f.metaEntries.get(key)?.offset, { key, expected, found });
}

/** An integer-valued key: undefined when absent, else an integer in [min, max]. */
export function readIntKey(f: GgufFile, key: string, min: number, max: number): number | undefined {
  const v = metaNumber(f, key);
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < min || v > max) badHParam(f, key, `an integer in [${min}, ${max}]`, String(v));
  return v;
}

/** A real-valued key: undefined when absent, else finite and above `min` (or at least, when `inclusive`). */
export function readRealKey(f: GgufFile, key: string, min: number, inclusive: boolean, max = Infinity): number | undefined {
  const v = metaNumber(f, key);
  if (v === undefined) return undefined;
  if (!Number.isFinite(v) || (inclusive ? v < min : v <= min) || v > max) {
    badHParam(f, key, `a finite number ${inclusive ? '>=' : '>'} ${min}${max < Infinity ? ` and <= ${max}` : ''}`, String(v));
  }
  return v;
}

/**
 * A key that may be a scalar or a per-layer array (llama.cpp's get_key_or_arr): an array must hold
 * exactly one value per layer, each an integer in range, and (gguf-edge builds uniform layers) all equal.
 */
export function readIntOrPerLayer(f: GgufFile, key: string, nLayer: number, min: number, max: number): number | undefined {
  const raw = f.metadata.get(key);
  if (raw === undefined || typeof raw !== 'object') return readIntKey(f, key, min, max);
  const n = metaArrayLength(f, key) ?? 0;
  if (n !== nLayer) badHParam(f, key, `${nLayer} values (one per layer, block_count)`, `an array of ${n}`);
  const a = metaArray(f, key) as ArrayLike<unknown>;
  let first: number | undefined;
  for (let i = 0; i < n; i++) {
    const e = a[i];
    const v = typeof e === 'bigint' ? Number(e) : typeof e === 'number' ? e : NaN;
    if (!Number.isInteger(v) || v < min || v > max) badHParam(f, `${key}[${i}]`, `an integer in [${min}, ${max}]`, String(e));
    if (first === undefined) first = v;
    else if (v !== first) badHParam(f, key, 'the same value for every layer (gguf-edge computes uniform layers only)', `${first} for layer 0 and ${v} for layer ${i}`);
  }
  return first;
}

/** A per-layer integer array (one value per layer, each in range), or undefined when the key is absent or a scalar. */
export function readPerLayerInts(f: GgufFile, key: string, nLayer: number, min: number, max: number): number[] | undefined {
  const raw = f.metadata.get(key);
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object') { const v = readIntKey(f, key, min, max)!; return Array.from({ length: nLayer }, () => v); }
  const n = metaArrayLength(f, key) ?? 0;
  if (n !== nLayer) badHParam(f, key, `${nLayer} values (one per layer, block_count)`, `an array of ${n}`);
  const a = metaArray(f, key) as ArrayLike<unknown>;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const e = a[i];
    const v = typeof e === 'bigint' ? Number(e) : typeof e === 'number' ? e : typeof e === 'boolean' ? Number(e) : NaN;
    if (!Number.isInteger(v) || v < min || v > max) badHParam(f, `${key}[${i}]`, `an integer in [${min}, ${max}]`, String(e));
    out.push(v);
  }
  return out;
}

/** A per-layer bool array (gemma4's attention.sliding_window_pattern): one bool per layer. */
export function readBoolPerLayer(f: GgufFile, key: string, nLayer: number): boolean[] | undefined {
  const raw = f.metadata.get(key);
  if (raw === undefined) return undefined;
  const n = typeof raw === 'object' ? metaArrayLength(f, key) ?? 0 : -1;
  if (n !== nLayer) badHParam(f, key, `an array of ${nLayer} bools (one per layer, block_count)`, n < 0 ? String(raw) : `an array of ${n}`);
  const a = metaArray(f, key) as ArrayLike<unknown>;
  return Array.from({ length: n }, (_, i) => {
    if (typeof a[i] !== 'boolean') badHParam(f, `${key}[${i}]`, 'a bool', String(a[i]));
    return a[i] as boolean;
  });
}

/** Relations between hyperparameters (each was range-checked when read). */
export function checkHParams(f: GgufFile, hp: HParams): void {
  const k = (s: string) => `${hp.arch}.${s}`;
  if (hp.nHead % hp.nHeadKv !== 0) {
    badHParam(f, k('attention.head_count_kv'), `a divisor of head_count ${hp.nHead} (grouped-query attention)`, String(hp.nHeadKv));
  }
  if (hp.nHeadKv > hp.nHead) badHParam(f, k('attention.head_count_kv'), `at most head_count ${hp.nHead}`, String(hp.nHeadKv));
  if (hp.nExpert > 0 || hp.nExpertUsed > 0) {
    // llama.cpp: n_expert_used must be in (0, n_expert]
    if (hp.nExpertUsed < 1 || hp.nExpertUsed > hp.nExpert) badHParam(f, k('expert_used_count'), `an integer in [1, expert_count ${hp.nExpert}]`, String(hp.nExpertUsed));
    if (hp.nFfExp < 1) badHParam(f, k('expert_feed_forward_length'), 'a positive expert FFN width', String(hp.nFfExp));
  }
  if (hp.ropeDims > hp.headDimK || hp.ropeDims % 2 !== 0) {
    badHParam(f, k('rope.dimension_count'), `an even number of dims <= the head dim ${hp.headDimK}`, String(hp.ropeDims));
  }
}

/** Padded to 4 dims with trailing 1s, as ggml compares shapes. */
function ne4(dims: readonly number[]): number[] {
  const out = [1, 1, 1, 1];
  for (let i = 0; i < dims.length; i++) out[i] = dims[i]!;
  return out;
}
const sameShape = (a: readonly number[], b: readonly number[]) => ne4(a).every((v, i) => v === ne4(b)[i]);
const showShape = (d: readonly number[]) => `[${d.join(', ')}]`;

interface Expected {
  dims: number[];
  /** vectors are read as F32 by add/mul/rope; matrices go through get_rows/mul_mat (any computable type) */
  vector: boolean;
  /** what the expected shape follows from, for the message */
  why: string;
}

/**
 * The feed-forward width: feed_forward_length when the file gives it, else the row length of
 * blk.0.ffn_down (llama.cpp reads it from the key; some converters leave the key out).
 */
function ffnWidth(f: GgufFile, hp: HParams): number {
  if (hp.nFf > 0) return hp.nFf;
  const down = f.tensorsByName.get('blk.0.ffn_down.weight');
  return down ? down.dims[0]! : 0;
}

/** gemma4's tensors (src/models/gemma4.ts reads exactly these): per-layer head sizes and FFN widths, no K/V on the KV-shared layers, per-layer embeddings. */
function gemma4Tensors(hp: HParams): { required: Map<string, Expected>; optional: Map<string, Expected> } {
  const required = new Map<string, Expected>();
  const optional = new Map<string, Expected>();
  const E = hp.nEmbd, V = hp.nVocab, pl = hp.nEmbdPerLayer, L = hp.nLayer;
  const vec = (n: number, why: string): Expected => ({ dims: [n], vector: true, why });
  const mat = (cols: number, rows: number, why: string): Expected => ({ dims: [cols, rows], vector: false, why });
  const eWhy = `embedding_length ${E}`;
  required.set('token_embd.weight', mat(E, V, `${eWhy} x vocabulary of ${V}`));
  optional.set('output.weight', mat(E, V, `${eWhy} x vocabulary of ${V}`));
  required.set('output_norm.weight', vec(E, eWhy));
  optional.set('rope_freqs.weight', vec(hp.ropeDims / 2, `rope.dimension_count ${hp.ropeDims} / 2`));
  if (pl > 0) {
    const plWhy = `embedding_length_per_layer_input ${pl} x block_count ${L}`;
    required.set('per_layer_token_embd.weight', mat(pl * L, V, `${plWhy} x vocabulary of ${V}`));
    required.set('per_layer_model_proj.weight', mat(E, pl * L, `${eWhy} -> ${plWhy}`));
    required.set('per_layer_proj_norm.weight', vec(pl, `embedding_length_per_layer_input ${pl}`));
  }
  const nKvLayers = L - hp.nKvShared;
  for (let il = 0; il < L; il++) {
    const p = `blk.${il}`, swa = hp.swaLayers[il]!;
    const hd = swa ? hp.headDimSwa : hp.headDimK, ff = hp.nFfLayers[il]!;
    const hdWhy = swa ? `key_length_swa ${hd}` : `key_length ${hd}`;
    required.set(`${p}.attn_norm.weight`, vec(E, eWhy));
    required.set(`${p}.attn_q.weight`, mat(E, hp.nHead * hd, `head_count ${hp.nHead} x ${hdWhy}`));
    required.set(`${p}.attn_q_norm.weight`, vec(hd, hdWhy));
    if (il < nKvLayers) {
      required.set(`${p}.attn_k.weight`, mat(E, hp.nHeadKv * hd, `head_count_kv ${hp.nHeadKv} x ${hdWhy}`));
      optional.set(`${p}.attn_v.weight`, mat(E, hp.nHeadKv * hd, `head_count_kv ${hp.nHeadKv} x ${hdWhy}`));
      required.set(`${p}.attn_k_norm.weight`, vec(hd, hdWhy));
    }
    required.set(`${p}.attn_output.weight`, mat(hp.nHead * hd, E, `head_count ${hp.nHead} x ${hdWhy} -> ${eWhy}`));
    required.set(`${p}.post_attention_norm.weight`, vec(E, eWhy));
    optional.set(`${p}.layer_output_scale.weight`, vec(1, 'one scale per layer'));
    const ffWhy = `${eWhy} -> feed_forward_length[${il}] ${ff}`;
    required.set(`${p}.ffn_norm.weight`, vec(E, eWhy));
    required.set(`${p}.ffn_gate.weight`, mat(E, ff, ffWhy));
    required.set(`${p}.ffn_up.weight`, mat(E, ff, ffWhy));
    required.set(`${p}.ffn_down.weight`, mat(ff, E, ffWhy));
    required.set(`${p}.post_ffw_norm.weight`, vec(E, eWhy));
    if (pl > 0) {
      required.set(`${p}.inp_gate.weight`, mat(E, pl, `${eWhy} -> embedding_length_per_layer_input ${pl}`));
      required.set(`${p}.proj.weight`, mat(pl, E, `embedding_length_per_layer_input ${pl} -> ${eWhy}`));
      required.set(`${p}.post_norm.weight`, vec(E, eWhy));
    }
  }
  return { required, optional };
}

/** Every tensor the transformer reads for these hyperparameters, with its shape (GGUF order). */
export function expectedTensors(f: GgufFile, hp: HParams): { required: Map<string, Expected>; optional: Map<string, Expected> } {
  if (hp.arch === 'gemma4') return gemma4Tensors(hp);
  const required = new Map<string, Expected>();
  const optional = new Map<string, Expected>();
  const E = hp.nEmbd, V = hp.nVocab;
  const qw = hp.nHead * hp.headDimK, kw = hp.nHeadKv * hp.headDimK, vw = hp.nHeadKv * hp.headDimV;
  const nFf = ffnWidth(f, hp);
  const vec = (n: number, why: string): Expected => ({ dims: [n], vector: true, why });
  const mat = (cols: number, rows: number, why: string): Expected => ({ dims: [cols, rows], vector: false, why });
  const linear = (into: Map<string, Expected>, name: string, cols: number, rows: number, why: string) => {
    into.set(`${name}.weight`, mat(cols, rows, why));
    optional.set(`${name}.bias`, vec(rows, why));
  };
  const vocabWhy = `embedding_length ${E} x vocabulary of ${V}`;
  required.set('token_embd.weight', mat(E, V, vocabWhy));
  required.set(`${hp.outputNormTensor}.weight`, vec(E, `embedding_length ${E}`));
  optional.set('output.weight', mat(E, V, vocabWhy));
  optional.set('rope_freqs.weight', vec(hp.ropeDims / 2, `rope.dimension_count ${hp.ropeDims} / 2`));
  const qWhy = `head_count ${hp.nHead} x key_length ${hp.headDimK}`;
  const kWhy = `head_count_kv ${hp.nHeadKv} x key_length ${hp.headDimK}`;
  const vWhy = `head_count_kv ${hp.nHeadKv} x value_length ${hp.headDimV}`;
  for (let il = 0; il < hp.nLayer; il++) {
    const p = `blk.${il}`;
    required.set(`${p}.attn_norm.weight`, vec(E, `embedding_length ${E}`));
    const kind = hp.layerKinds[il];
    if (kind === 'shortconv') {
      linear(required, `${p}.shortconv.in_proj`, E, 3 * E, `embedding_length ${E} -> B, C and x of ${E} each`);
      required.set(`${p}.shortconv.conv.weight`, { dims: [hp.shortConvKernel, E], vector: true, why: `shortconv.l_cache ${hp.shortConvKernel} x embedding_length ${E}` });
      linear(required, `${p}.shortconv.out_proj`, E, E, `embedding_length ${E}`);
    } else if (kind === 'gdn') {
      const dn = hp.deltaNet!, S = dn.headDim;
      const qkvWhy = `2 x group_count ${dn.nHeadK} x state_size ${S} + time_step_rank ${dn.nHeadV} x state_size ${S}`;
      const vWhy2 = `time_step_rank ${dn.nHeadV} x state_size ${S}`;
      linear(required, `${p}.attn_qkv`, E, (2 * dn.nHeadK + dn.nHeadV) * S, qkvWhy);
      linear(required, `${p}.attn_gate`, E, dn.nHeadV * S, vWhy2);
      required.set(`${p}.ssm_conv1d.weight`, { dims: [dn.convKernel, (2 * dn.nHeadK + dn.nHeadV) * S], vector: true, why: `ssm.conv_kernel ${dn.convKernel} x (${qkvWhy})` });
      required.set(`${p}.ssm_dt.bias`, vec(dn.nHeadV, `time_step_rank ${dn.nHeadV}`));
      required.set(`${p}.ssm_a`, vec(dn.nHeadV, `time_step_rank ${dn.nHeadV}`));
      linear(required, `${p}.ssm_beta`, E, dn.nHeadV, `embedding_length ${E} -> time_step_rank ${dn.nHeadV}`);
      linear(required, `${p}.ssm_alpha`, E, dn.nHeadV, `embedding_length ${E} -> time_step_rank ${dn.nHeadV}`);
      required.set(`${p}.ssm_norm.weight`, vec(S, `state_size ${S}`));
      linear(required, `${p}.ssm_out`, dn.nHeadV * S, E, `${vWhy2} -> embedding_length ${E}`);
    } else if (f.tensorsByName.has(`${p}.attn_qkv.weight`)) {
      linear(required, `${p}.attn_qkv`, E, qw + kw + vw, `(${qWhy}) + (${kWhy}) + (${vWhy})`);
    } else {
      linear(required, `${p}.attn_q`, E, hp.attnGate ? 2 * qw : qw, hp.attnGate ? `${qWhy}, twice (query and gate per head)` : qWhy);
      linear(required, `${p}.attn_k`, E, kw, kWhy);
      linear(required, `${p}.attn_v`, E, vw, vWhy);
    }
    if (kind === 'attention') {
      optional.set(`${p}.attn_q_norm.weight`, vec(hp.headDimK, `key_length ${hp.headDimK}`));
      optional.set(`${p}.attn_k_norm.weight`, vec(hp.headDimK, `key_length ${hp.headDimK}`));
      linear(required, `${p}.attn_output`, hp.nHead * hp.headDimV, E, `head_count ${hp.nHead} x value_length ${hp.headDimV} -> embedding_length ${E}`);
    }
    if (hp.ffnNormTensor === 'ffn_norm') optional.set(`${p}.post_attention_norm.weight`, vec(E, `embedding_length ${E}`));
    required.set(`${p}.${hp.ffnNormTensor}.weight`, vec(E, `embedding_length ${E}`));
    const ffWhy = `embedding_length ${E} -> feed_forward_length ${nFf}`;
    if (hp.nExpert > 0) {
      // mixture of experts (qwen3moe): router [E, nExpert], experts 3-D [cols, rows, nExpert]
      const X = hp.nExpert, Fx = hp.nFfExp;
      const xWhy = `expert_count ${X}, expert_feed_forward_length ${Fx}`;
      required.set(`${p}.ffn_gate_inp.weight`, mat(E, X, `embedding_length ${E} -> expert_count ${X}`));
      required.set(`${p}.ffn_gate_exps.weight`, { dims: [E, Fx, X], vector: false, why: xWhy });
      required.set(`${p}.ffn_up_exps.weight`, { dims: [E, Fx, X], vector: false, why: xWhy });
      required.set(`${p}.ffn_down_exps.weight`, { dims: [Fx, E, X], vector: false, why: xWhy });
      if (hp.nFfShexp > 0) {
        // qwen35moe's shared expert and its per-token gate (a 1-row f32 matrix)
        const Fs = hp.nFfShexp, sWhy = `embedding_length ${E} -> expert_shared_feed_forward_length ${Fs}`;
        linear(required, `${p}.ffn_gate_shexp`, E, Fs, sWhy);
        linear(required, `${p}.ffn_up_shexp`, E, Fs, sWhy);
        linear(required, `${p}.ffn_down_shexp`, Fs, E, `expert_shared_feed_forward_length ${Fs} -> embedding_length ${E}`);
        required.set(`${p}.ffn_gate_inp_shexp.weight`, vec(E, `embedding_length ${E}`));
      }
    } else if (f.tensorsByName.has(`${p}.ffn_gate.weight`)) {
      linear(required, `${p}.ffn_gate`, E, nFf, ffWhy);
      linear(required, `${p}.ffn_up`, E, nFf, ffWhy);
    } else {
      linear(required, `${p}.ffn_up`, E, 2 * nFf, `${ffWhy}, gate and up fused`);
    }
    if (hp.nExpert === 0) linear(required, `${p}.ffn_down`, nFf, E, `feed_forward_length ${nFf} -> embedding_length ${E}`);
    optional.set(`${p}.post_ffw_norm.weight`, vec(E, `embedding_length ${E}`));
  }
  return { required, optional };
}

function tensorError(f: GgufFile, code: 'BAD_TENSOR_SHAPE' | 'BAD_TENSOR_TYPE' | 'MISSING_TENSOR' | 'UNEXPECTED_TENSOR', t: string, msg: string, expected?: string, found?: string, info?: GgufTensorInfo): never {
  throw new GgufError(code, msg, f.name, info?.fileOffset, { tensor: t, expected, found });
}

/**
 * The file's tensors against the architecture: every required tensor present, none unknown, each with
 * the expected shape and a type its ops can read. Also the vocabulary: token ids are bounded by the
 * vocabulary size, so it must be token_embd's row count (and output's), as llama.cpp requires.
 */
export function validateTensors(f: GgufFile, hp: HParams): void {
  const nTokens = metaArrayLength(f, 'tokenizer.ggml.tokens');
  const vs = `${hp.arch}.vocab_size`;
  if (nTokens !== undefined && metaNumber(f, vs) !== undefined && nTokens !== hp.nVocab) {
    badHParam(f, vs, `the number of tokens in tokenizer.ggml.tokens (${nTokens})`, String(hp.nVocab));
  }
  if (hp.nLayer > 0 && hp.nExpert === 0 && hp.arch !== 'gemma4' && ffnWidth(f, hp) <= 0) {
    badHParam(f, `${hp.arch}.feed_forward_length`, 'a positive width (or a blk.0.ffn_down tensor to take it from)', String(hp.nFf));
  }
  const { required, optional } = expectedTensors(f, hp);
  for (const [name] of required) {
    if (!f.tensorsByName.has(name)) tensorError(f, 'MISSING_TENSOR', name, `model is missing tensor "${name}", which ${hp.arch} with block_count ${hp.nLayer} needs`);
  }
  for (const t of f.tensors) {
    const e = required.get(t.name) ?? optional.get(t.name);
    if (!e) {
      const m = /^blk\.(\d+)\./.exec(t.name);
      const why = m && Number(m[1]) >= hp.nLayer ? ` (block_count is ${hp.nLayer})` : '';
      tensorError(f, 'UNEXPECTED_TENSOR', t.name, `tensor "${t.name}" is not used by ${hp.arch}${why}; refusing a file whose layout is not understood`, undefined, undefined, t);
    }
    if (!sameShape(t.dims, e.dims)) {
      const vocab = t.name === 'token_embd.weight' || t.name === 'output.weight'
        ? ` (the vocabulary size ${hp.nVocab} comes from ${nTokens !== undefined ? 'tokenizer.ggml.tokens' : 'the file'})` : '';
      tensorError(f, 'BAD_TENSOR_SHAPE', t.name, `tensor "${t.name}" has shape ${showShape(t.dims)}; expected ${showShape(e.dims)} (${e.why})${vocab}`, showShape(e.dims), showShape(t.dims), t);
    }
    if (e.vector && t.type !== GgmlType.F32) {
      tensorError(f, 'BAD_TENSOR_TYPE', t.name, `tensor "${t.name}" has type ${ggmlTypeName(t.type)}; expected F32 (it is read element-wise)`, 'F32', ggmlTypeName(t.type), t);
    }
    if (!e.vector && !isSupportedType(t.type)) {
      throw new GgufError('UNKNOWN_GGML_TYPE', `tensor "${t.name}" has type ${ggmlTypeName(t.type)}, which gguf-edge cannot compute yet`, f.name, t.fileOffset, { tensor: t.name, found: ggmlTypeName(t.type) });
    }
  }
}

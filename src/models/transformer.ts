// The decoder-only transformer every supported architecture is a variant of, as one readable
// graph builder (in the spirit of llama2.c's forward pass). Architecture files supply an ArchSpec:
// the few choices that differ (embedding scale, where the attention scale goes, GELU vs SiLU).
// Optional tensors (biases, fused QKV, fused gate/up, Q/K norms, post-norms) are used when the
// file has them, so the spec stays small.

import { GraphBuilder, type Graph, type TensorDesc } from '../graph/graph.js';
import { kvDType, kvRotation, type KvType } from '../graph/kv-type.js';
import type { HParams } from './hparams.js';

export interface WeightInfo {
  dtype: number;
  dims: number[];
}

export interface ArchSpec {
  /** general.architecture values this spec handles */
  names: string[];
  /** multiply token embeddings by this (gemma: sqrt(n_embd)) */
  embedScale(hp: HParams): number;
  /** multiply Q by this after RoPE (gemma, phi3 pre-scale Q; others use kq scale) */
  qScale(hp: HParams): number;
  /** scale applied to Q·K inside softmax */
  kqScale(hp: HParams): number;
  ffnAct: 'swiglu' | 'geglu';
  /** false for layers that apply no RoPE to Q and K (smollm3's NoPE layers); default: every layer */
  ropeLayer?(hp: HParams, il: number): boolean;
  /**
   * Select the output rows after the final norm rather than before the last layer's residual add (qwen35
   * in llama.cpp v0.4.0): the last layer then runs at the full batch, which decides its matmuls' summation
   * order (tinyBLAS for batches, vec_dot for one row).
   */
  outputRowsAfterNorm?: boolean;
  /** an architecture too far from this block for the options above builds its own graph (gemma4) */
  build?(hp: HParams, weights: Map<string, WeightInfo>, o: BuildOptions): Graph;
}

export interface BuildOptions {
  nTokens: number;
  nOutputs: number;
  nCtx: number;
  kvType: KvType;
  /**
   * Several sequences share the cache (nCtx = their regions of seqStride rows each): the graph gets the
   * inp_kv_rows input and its kv_store / attention nodes address rows with it (src/graph/graph.ts).
   */
  seqStride?: number;
  /** attention with llama.cpp's flash-attention numerics (graph.ts flashAttention) */
  flashAttn?: boolean;
  /**
   * Sliding-window layers keep a ring instead of nCtx rows (graph.ts: sliding-window rings): their caches have
   * `rows` rows (all sequences), written through inp_swa_rows and inp_swa_mirror; `seqStride`: the rows of one
   * sequence's ring region (several sequences only).
   */
  swaRing?: { rows: number; seqStride?: number };
}

/** The ring inputs of a graph whose sliding-window layers keep rings (undefined: they keep nCtx rows). */
export function swaRingInputs(b: GraphBuilder, o: BuildOptions): { rows: TensorDesc; mirror: TensorDesc } | undefined {
  if (!o.swaRing) return undefined;
  return { rows: b.leaf('inp_swa_rows', 'input', 'i32', [o.nTokens]), mirror: b.leaf('inp_swa_mirror', 'input', 'i32', [o.nTokens]) };
}

export function buildTransformer(spec: ArchSpec, hp: HParams, weights: Map<string, WeightInfo>, o: BuildOptions): Graph {
  if (spec.build) return spec.build(hp, weights, o);
  const b = new GraphBuilder();
  const has = (n: string) => weights.has(n);
  const w = (n: string): TensorDesc => {
    const info = weights.get(n);
    if (!info) throw new Error(`model is missing tensor ${n}`);
    return b.leaf(n, 'weight', info.dtype, info.dims);
  };
  const opt = (n: string) => (has(n) ? w(n) : undefined);
  const tokens = b.leaf('inp_tokens', 'input', 'i32', [o.nTokens]);
  const pos = b.leaf('inp_pos', 'input', 'i32', [o.nTokens]);
  const outRows = b.leaf('inp_out_ids', 'input', 'i32', [o.nOutputs]);
  const kvRows = o.seqStride ? b.leaf('inp_kv_rows', 'input', 'i32', [o.nTokens]) : pos;
  const rot = kvRotation(o.kvType, hp.headDimK, hp.headDimV);
  const batchRows = o.seqStride ? b.leaf('inp_batch_rows', 'input', 'i32', [2]) : undefined;
  const ring = swaRingInputs(b, o);
  // which count of inp_batch_rows the matmuls' rows follow: the tokens', then (after the output gather) the outputs'
  let rowsOf: 0 | 1 = 0;
  const mm = (wt: TensorDesc, x: TensorDesc, name?: string) => b.mulMat(wt, x, name, batchRows && { input: batchRows, index: rowsOf });
  const ropeFactors = opt('rope_freqs.weight');
  const norm = (x: TensorDesc, weight: TensorDesc, rowLen?: number) => b.mul(b.rmsNorm(x, hp.eps, rowLen), weight);
  const linear = (x: TensorDesc, name: string) => {
    let y = mm(w(`${name}.weight`), x, name);
    const bias = opt(`${name}.bias`);
    if (bias) y = b.addT(y, bias);
    return y;
  };

  b.setGroup('input');
  let x = b.getRows(w('token_embd.weight'), tokens, 'inp_embd');
  const es = spec.embedScale(hp);
  if (es !== 1) x = b.scale(x, es);

  const qw = hp.nHead * hp.headDimK;
  const kw = hp.nHeadKv * hp.headDimK;
  const vw = hp.nHeadKv * hp.headDimV;

  /** Softmax attention over the layer's KV cache (qwen35: gated by sigmoid of a per-head gate from attn_q). */
  const attentionBlock = (h: TensorDesc, il: number): TensorDesc => {
    const p = `blk.${il}`;
    const swa = hp.swaLayers[il]!;
    let q: TensorDesc, k: TensorDesc, v: TensorDesc, gate: TensorDesc | undefined;
    if (has(`${p}.attn_qkv.weight`)) {
      const qkv = linear(h, `${p}.attn_qkv`);
      q = b.viewCols(qkv, 0, qw);
      k = b.viewCols(qkv, qw, kw);
      v = b.viewCols(qkv, qw + kw, vw);
    } else {
      q = linear(h, `${p}.attn_q`);
      if (hp.attnGate) {
        // per head [q | gate]
        const qg = q, hd = hp.headDimK;
        q = b.viewBlocks(qg, 0, hd, 2 * hd, hp.nHead);
        gate = b.viewBlocks(qg, hd, hd, 2 * hd, hp.nHead);
      }
      k = linear(h, `${p}.attn_k`);
      v = linear(h, `${p}.attn_v`);
    }
    const qn = opt(`${p}.attn_q_norm.weight`);
    if (qn) q = norm(q, qn, hp.headDimK);
    const kn = opt(`${p}.attn_k_norm.weight`);
    if (kn) k = norm(k, kn, hp.headDimK);
    const rp = { headDim: hp.headDimK, nDims: hp.ropeDims, neox: hp.ropeNeox, freqBase: swa ? hp.ropeFreqBaseSwa : hp.ropeFreqBase, freqScale: swa ? hp.ropeFreqScaleSwa : hp.ropeFreqScale };
    if (spec.ropeLayer?.(hp, il) ?? true) {
      q = b.rope(q, pos, rp, ropeFactors);
      k = b.rope(k, pos, rp, ropeFactors);
    }
    const qs = spec.qScale(hp);
    if (qs !== 1) q = b.scale(q, qs);
    // a quantized cache stores K and V rotated (kv-type.ts kvRotation; undone on the output below)
    if (rot.k) { q = b.hadamard(q, rot.k); k = b.hadamard(k, rot.k); }
    if (rot.v) v = b.hadamard(v, rot.v);
    const inRing = swa && ring !== undefined && hp.slidingWindow > 0;
    const slots = inRing ? o.swaRing!.rows : o.nCtx;
    const kc = b.leaf(`cache_k_l${il}`, 'state', kvDType(o.kvType), [kw, slots]);
    const vc = b.leaf(`cache_v_l${il}`, 'state', kvDType(o.kvType), [vw, slots]);
    const rows = inRing ? ring.rows : kvRows;
    const stores = [b.kvStore(kc, k, rows), b.kvStore(vc, v, rows)];
    if (inRing) stores.push(b.kvStore(kc, k, ring.mirror), b.kvStore(vc, v, ring.mirror));
    const regions = inRing ? (o.swaRing!.seqStride ? { seqStride: o.swaRing!.seqStride } : {}) : o.seqStride ? { seqStride: o.seqStride } : {};
    let a = b.attention(q, kc, vc, rows, {
      nHead: hp.nHead, nHeadKv: hp.nHeadKv, headDimK: hp.headDimK, headDimV: hp.headDimV,
      scale: spec.kqScale(hp), softcap: hp.attnSoftcap, window: swa ? hp.slidingWindow : 0, ...regions, ...(o.flashAttn ? { flash: true } : {}),
    }, stores);
    if (rot.v) a = b.hadamard(a, rot.v);
    if (gate) a = b.mul(a, b.sigmoid(gate));
    return linear(a, `${p}.attn_output`);
  };

  /**
   * lfm2's short convolution: [B | C | x] = in_proj·h; C ⊙ conv(B ⊙ x) through out_proj, the conv causal
   * over the last shortconv.l_cache tokens (the previous ones in the layer's conv state).
   */
  const shortConvBlock = (h: TensorDesc, il: number): TensorDesc => {
    const p = `blk.${il}`, E = hp.nEmbd;
    const bcx = linear(h, `${p}.shortconv.in_proj`);
    const bx = b.mul(b.viewCols(bcx, 0, E), b.viewCols(bcx, 2 * E, E));
    const state = b.leaf(`conv_state_l${il}`, 'state', 'f32', [(hp.shortConvKernel - 1) * E]);
    const conv = b.ssmConv(state, bx, w(`${p}.shortconv.conv.weight`));
    return linear(b.mul(b.viewCols(bcx, E, E), conv), `${p}.shortconv.out_proj`);
  };

  /**
   * qwen35's Gated DeltaNet: q, k, v from a causal conv (then SiLU) over attn_qkv·h, q and k L2-normalized
   * per head; beta = sigmoid(ssm_beta·h), decay g = softplus(ssm_alpha·h + dt_bias)·ssm_a; the delta rule
   * over the layer's S x S state per v-head; then rms(o)·ssm_norm ⊙ silu(z), z = attn_gate·h, through ssm_out.
   */
  const deltaNetBlock = (h: TensorDesc, il: number): TensorDesc => {
    const p = `blk.${il}`, dn = hp.deltaNet!;
    const S = dn.headDim, qkw = dn.nHeadK * S, vdw = dn.nHeadV * S;
    const qkv = linear(h, `${p}.attn_qkv`);
    const z = linear(h, `${p}.attn_gate`);
    const beta = b.sigmoid(linear(h, `${p}.ssm_beta`));
    const g = b.mul(b.softplus(b.addT(linear(h, `${p}.ssm_alpha`), w(`${p}.ssm_dt.bias`))), w(`${p}.ssm_a`));
    const convState = b.leaf(`conv_state_l${il}`, 'state', 'f32', [(dn.convKernel - 1) * (2 * qkw + vdw)]);
    const conv = b.silu(b.ssmConv(convState, qkv, w(`${p}.ssm_conv1d.weight`)));
    const q = b.l2Norm(b.viewCols(conv, 0, qkw), hp.eps, S);
    const k = b.l2Norm(b.viewCols(conv, qkw, qkw), hp.eps, S);
    const v = b.viewCols(conv, 2 * qkw, vdw);
    const state = b.leaf(`ssm_state_l${il}`, 'state', 'f32', [S * S * dn.nHeadV]);
    const out = b.gatedDeltaNet(state, q, k, v, g, beta, dn);
    return linear(b.mul(norm(out, w(`${p}.ssm_norm.weight`), S), b.silu(z, S)), `${p}.ssm_out`);
  };

  for (let il = 0; il < hp.nLayer; il++) {
    const p = `blk.${il}`;
    b.setGroup(p);
    const h = norm(x, w(`${p}.attn_norm.weight`));
    const kind = hp.layerKinds[il]!;
    let a = kind === 'shortconv' ? shortConvBlock(h, il) : kind === 'gdn' ? deltaNetBlock(h, il) : attentionBlock(h, il);
    const pan = hp.ffnNormTensor === 'post_attention_norm' ? undefined : opt(`${p}.post_attention_norm.weight`);
    if (pan) a = norm(a, pan);
    if (il === hp.nLayer - 1 && o.nOutputs !== o.nTokens && !spec.outputRowsAfterNorm) {
      // Only the output rows matter from here on (every later op is row-wise), as llama.cpp does.
      a = b.getRows(a, outRows);
      x = b.getRows(x, outRows);
      rowsOf = 1;
    }
    x = b.addT(x, a);

    const f = norm(x, w(`${p}.${hp.ffnNormTensor}.weight`));
    let act: TensorDesc;
    if (hp.nExpert > 0) {
      // mixture of experts (llama.cpp's build_moe_ffn: softmax router, top-k, renormalised weights)
      const probs = b.softMax(b.mulMat(w(`${p}.ffn_gate_inp.weight`), f, `${p}.ffn_moe_logits`));
      const ids = b.topK(probs, hp.nExpertUsed, `${p}.ffn_moe_topk`);
      const weights = b.moeWeights(probs, ids, { norm: true, scale: hp.expertWeightsScale });
      const up = b.mulMatId(w(`${p}.ffn_up_exps.weight`), f, ids, `${p}.ffn_moe_up`);
      const gate = b.mulMatId(w(`${p}.ffn_gate_exps.weight`), f, ids, `${p}.ffn_moe_gate`);
      const down = b.mulMatId(w(`${p}.ffn_down_exps.weight`), b.swiglu(gate, up), ids, `${p}.ffn_moe_down`);
      let moeOut = b.moeSum(down, weights);
      if (hp.nFfShexp > 0) {
        // qwen35moe's shared expert: SwiGLU, times sigmoid of its own gate, added after the routed sum
        const sh = linear(b.swiglu(linear(f, `${p}.ffn_gate_shexp`), linear(f, `${p}.ffn_up_shexp`)), `${p}.ffn_down_shexp`);
        moeOut = b.addT(moeOut, b.scaleRows(sh, b.sigmoid(b.mulMat(w(`${p}.ffn_gate_inp_shexp.weight`), f))));
      }
      x = b.addT(x, moeOut, `l_out_${il}`);
      continue;
    }
    if (!has(`${p}.ffn_gate.weight`)) {
      // fused [gate; up] in ffn_up (phi3)
      const gu = linear(f, `${p}.ffn_up`);
      const ff = gu.shape[0]! / 2;
      const g = b.viewCols(gu, 0, ff);
      const u = b.viewCols(gu, ff, ff);
      act = spec.ffnAct === 'geglu' ? b.geglu(g, u) : b.swiglu(g, u);
    } else {
      const g = linear(f, `${p}.ffn_gate`);
      const u = linear(f, `${p}.ffn_up`);
      act = spec.ffnAct === 'geglu' ? b.geglu(g, u) : b.swiglu(g, u);
    }
    let d = linear(act, `${p}.ffn_down`);
    const pfn = opt(`${p}.post_ffw_norm.weight`);
    if (pfn) d = norm(d, pfn);
    x = b.addT(x, d, `l_out_${il}`);
  }
  b.setGroup('output');
  x = norm(x, w(`${hp.outputNormTensor}.weight`));
  if ((hp.nLayer === 0 || spec.outputRowsAfterNorm) && o.nOutputs !== o.nTokens) { x = b.getRows(x, outRows); rowsOf = 1; }
  const out = has('output.weight') ? w('output.weight') : w('token_embd.weight');
  let logits = mm(out, x, 'result_output');
  if (hp.finalSoftcap > 0) logits = b.softcap(logits, hp.finalSoftcap);
  const inputs = {
    tokens: tokens.id, positions: pos.id, outputRows: outRows.id, ...(batchRows ? { kvRows: kvRows.id, batchRows: batchRows.id } : {}),
    ...(ring ? { swaRows: ring.rows.id, swaMirror: ring.mirror.id } : {}),
  };
  return b.finish(inputs, logits, o.nTokens, o.nOutputs);
}

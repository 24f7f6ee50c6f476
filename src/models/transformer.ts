// The decoder-only transformer every supported architecture is a variant of, as one readable
// graph builder (in the spirit of llama2.c's forward pass). Architecture files supply an ArchSpec:
// the few choices that differ (embedding scale, where the attention scale goes, GELU vs SiLU).
// Optional tensors (biases, fused QKV, fused gate/up, Q/K norms, post-norms) are used when the
// file has them, so the spec stays small.

import { GraphBuilder, type Graph, type TensorDesc } from '../graph/graph.js';
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
}

export interface BuildOptions {
  nTokens: number;
  nOutputs: number;
  nCtx: number;
  kvType: 'f16' | 'f32';
}

export function buildTransformer(spec: ArchSpec, hp: HParams, weights: Map<string, WeightInfo>, o: BuildOptions): Graph {
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
  const ropeFactors = opt('rope_freqs.weight');
  const norm = (x: TensorDesc, weight: TensorDesc, rowLen?: number) => b.mul(b.rmsNorm(x, hp.eps, rowLen), weight);
  const linear = (x: TensorDesc, name: string) => {
    let y = b.mulMat(w(`${name}.weight`), x, name);
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
  for (let il = 0; il < hp.nLayer; il++) {
    const p = `blk.${il}`;
    b.setGroup(p);
    const swa = hp.swaLayers[il]!;
    const h = norm(x, w(`${p}.attn_norm.weight`));
    let q: TensorDesc, k: TensorDesc, v: TensorDesc;
    if (has(`${p}.attn_qkv.weight`)) {
      const qkv = linear(h, `${p}.attn_qkv`);
      q = b.viewCols(qkv, 0, qw);
      k = b.viewCols(qkv, qw, kw);
      v = b.viewCols(qkv, qw + kw, vw);
    } else {
      q = linear(h, `${p}.attn_q`);
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
    const kc = b.leaf(`cache_k_l${il}`, 'state', o.kvType, [kw, o.nCtx]);
    const vc = b.leaf(`cache_v_l${il}`, 'state', o.kvType, [vw, o.nCtx]);
    const sk = b.kvStore(kc, k, pos);
    const sv = b.kvStore(vc, v, pos);
    let a = b.attention(q, kc, vc, pos, {
      nHead: hp.nHead, nHeadKv: hp.nHeadKv, headDimK: hp.headDimK, headDimV: hp.headDimV,
      scale: spec.kqScale(hp), softcap: hp.attnSoftcap, window: swa ? hp.slidingWindow : 0,
    }, [sk, sv]);
    a = linear(a, `${p}.attn_output`);
    const pan = opt(`${p}.post_attention_norm.weight`);
    if (pan) a = norm(a, pan);
    if (il === hp.nLayer - 1 && o.nOutputs !== o.nTokens) {
      // Only the output rows matter from here on (every later op is row-wise), as llama.cpp does.
      a = b.getRows(a, outRows);
      x = b.getRows(x, outRows);
    }
    x = b.addT(x, a);

    const f = norm(x, w(`${p}.ffn_norm.weight`));
    let act: TensorDesc;
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
  if (hp.nLayer === 0 && o.nOutputs !== o.nTokens) x = b.getRows(x, outRows);
  x = norm(x, w('output_norm.weight'));
  const out = has('output.weight') ? w('output.weight') : w('token_embd.weight');
  let logits = b.mulMat(out, x, 'result_output');
  if (hp.finalSoftcap > 0) logits = b.softcap(logits, hp.finalSoftcap);
  return b.finish({ tokens: tokens.id, positions: pos.id, outputRows: outRows.id }, logits, o.nTokens, o.nOutputs);
}

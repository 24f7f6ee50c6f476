// gemma4 (the dense E2B/E4B layout; llama.cpp v0.4.0 src/models/gemma4.cpp), its own graph: too far from the
// shared block (src/models/transformer.ts) for a few options.
// - Embeddings x sqrt(n_embd); per-layer inputs computed once per token from per_layer_token_embd (x sqrt(pl))
//   and per_layer_model_proj . h0 / sqrt(n_embd), RMS-normed per layer slice, summed and scaled by 1/sqrt(2).
// - Layers alternate sliding-window (head size key_length_swa, rope base freq_base_swa, all dims) and full
//   attention (key_length, NeoX RoPE with rope_freqs factors); Q/K RMS norms, V RMS-normed without weight,
//   attention scale 1. The last shared_kv_layers layers have no K/V: they attend over the cache of layer
//   n_kv - 2 (SWA) or n_kv - 1 (full), n_kv = block_count - shared_kv_layers.
// - post-attention and post-FFN norms, GEGLU FFN of a per-layer width, then the per-layer input block
//   h += rms(proj . (gelu(inp_gate . h) * inp_l)) * post_norm, then h *= layer_output_scale.
// - Every layer runs over every token of the batch: llama.cpp keeps only the output rows after the final norm
//   (embeddings_nextn_masked is off), which decides the kernels of the last layer's matmuls. Final softcap.
import { GraphBuilder, type Graph, type TensorDesc } from '../graph/graph.js';
import { kvDType, kvRotation } from '../graph/kv-type.js';
import type { HParams } from './hparams.js';
import { swaRingInputs, type ArchSpec, type BuildOptions, type WeightInfo } from './transformer.js';
import { gemma2 } from './gemma2.js';

const sqrtf = (x: number) => Math.fround(Math.sqrt(x));

function buildGemma4(hp: HParams, weights: Map<string, WeightInfo>, o: BuildOptions): Graph {
  const b = new GraphBuilder();
  const w = (n: string): TensorDesc => {
    const info = weights.get(n);
    if (!info) throw new Error(`model is missing tensor ${n}`);
    return b.leaf(n, 'weight', info.dtype, info.dims);
  };
  const opt = (n: string) => (weights.has(n) ? w(n) : undefined);
  const norm = (x: TensorDesc, weight: TensorDesc, rowLen?: number) => b.mul(b.rmsNorm(x, hp.eps, rowLen), weight);
  const tokens = b.leaf('inp_tokens', 'input', 'i32', [o.nTokens]);
  const pos = b.leaf('inp_pos', 'input', 'i32', [o.nTokens]);
  const outRows = b.leaf('inp_out_ids', 'input', 'i32', [o.nOutputs]);
  const L = hp.nLayer, pl = hp.nEmbdPerLayer;
  const ring = swaRingInputs(b, o);

  b.setGroup('input');
  let x = b.scale(b.getRows(w('token_embd.weight'), tokens, 'inp_embd'), sqrtf(hp.nEmbd));
  let perLayer: TensorDesc | undefined;
  if (pl > 0) {
    const sel = b.scale(b.getRows(w('per_layer_token_embd.weight'), tokens), sqrtf(pl));
    let proj = b.scale(b.mulMat(w('per_layer_model_proj.weight'), x), Math.fround(1 / sqrtf(hp.nEmbd)));
    proj = norm(proj, w('per_layer_proj_norm.weight'), pl);
    perLayer = b.scale(b.addT(proj, sel), Math.fround(1 / sqrtf(2)), 'inp_per_layer');
  }
  const ropeFreqs = opt('rope_freqs.weight');
  const nKvLayers = L - hp.nKvShared;
  const caches: { k: TensorDesc; v: TensorDesc; stores: TensorDesc[]; rows: TensorDesc }[] = [];
  for (let il = 0; il < L; il++) {
    const p = `blk.${il}`;
    b.setGroup(p);
    const swa = hp.swaLayers[il]!;
    const hd = swa ? hp.headDimSwa : hp.headDimK;
    const rp = {
      headDim: hd, nDims: swa ? hp.ropeDimsSwa : hp.ropeDims, neox: true,
      freqBase: swa ? hp.ropeFreqBaseSwa : hp.ropeFreqBase, freqScale: swa ? hp.ropeFreqScaleSwa : hp.ropeFreqScale,
    };
    const factors = swa ? undefined : ropeFreqs;
    const h = norm(x, w(`${p}.attn_norm.weight`));
    let q = b.mulMat(w(`${p}.attn_q.weight`), h, `${p}.attn_q`);
    q = b.rope(norm(q, w(`${p}.attn_q_norm.weight`), hd), pos, rp, factors);
    // a quantized cache is stored rotated (kv-type.ts kvRotation), per cache: the SWA and the full layers' heads
    const rot = kvRotation(o.kvType, hd, hd);
    if (rot.k) q = b.hadamard(q, rot.k);
    let cache: { k: TensorDesc; v: TensorDesc; stores: TensorDesc[]; rows: TensorDesc };
    if (il < nKvLayers) {
      let k = b.mulMat(w(`${p}.attn_k.weight`), h, `${p}.attn_k`);
      let v = weights.has(`${p}.attn_v.weight`) ? b.mulMat(w(`${p}.attn_v.weight`), h, `${p}.attn_v`) : k;
      k = b.rope(norm(k, w(`${p}.attn_k_norm.weight`), hd), pos, rp, factors);
      v = b.rmsNorm(v, hp.eps, hd);
      if (rot.k) k = b.hadamard(k, rot.k);
      if (rot.v) v = b.hadamard(v, rot.v);
      // a sliding-window layer's ring (graph.ts: sliding-window rings) is written twice, read through inp_swa_rows
      const inRing = swa && ring !== undefined && hp.slidingWindow > 0;
      const slots = inRing ? o.swaRing!.rows : o.nCtx, rows = inRing ? ring.rows : pos;
      const kc = b.leaf(`cache_k_l${il}`, 'state', kvDType(o.kvType), [hp.nHeadKv * hd, slots]);
      const vc = b.leaf(`cache_v_l${il}`, 'state', kvDType(o.kvType), [hp.nHeadKv * hd, slots]);
      const stores = [b.kvStore(kc, k, rows), b.kvStore(vc, v, rows)];
      if (inRing) stores.push(b.kvStore(kc, k, ring.mirror), b.kvStore(vc, v, ring.mirror));
      cache = { k: kc, v: vc, stores, rows };
    } else {
      cache = caches[nKvLayers - (swa ? 2 : 1)]!;
    }
    caches.push(cache);
    let a = b.attention(q, cache.k, cache.v, cache.rows, {
      nHead: hp.nHead, nHeadKv: hp.nHeadKv, headDimK: hd, headDimV: hd, scale: 1, softcap: 0, window: swa ? hp.slidingWindow : 0,
      ...(o.flashAttn ? { flash: true } : {}),
    }, cache.stores);
    if (rot.v) a = b.hadamard(a, rot.v);
    a = norm(b.mulMat(w(`${p}.attn_output.weight`), a, `${p}.attn_output`), w(`${p}.post_attention_norm.weight`));
    x = b.addT(a, x);
    const f = norm(x, w(`${p}.ffn_norm.weight`));
    const g = b.mulMat(w(`${p}.ffn_gate.weight`), f, `${p}.ffn_gate`);
    const u = b.mulMat(w(`${p}.ffn_up.weight`), f, `${p}.ffn_up`);
    const d = norm(b.mulMat(w(`${p}.ffn_down.weight`), b.geglu(g, u), `${p}.ffn_down`), w(`${p}.post_ffw_norm.weight`));
    x = b.addT(d, x);
    if (perLayer) {
      // gelu(inp_gate . h) * inp_l is ggml_gelu then ggml_mul: the same f16-table GELU and f32 product as geglu
      const gate = b.mulMat(w(`${p}.inp_gate.weight`), x, `${p}.inp_gate`);
      const pe = b.geglu(gate, b.viewCols(perLayer, il * pl, pl));
      x = b.addT(x, norm(b.mulMat(w(`${p}.proj.weight`), pe, `${p}.proj`), w(`${p}.post_norm.weight`)));
    }
    const os = opt(`${p}.layer_output_scale.weight`);
    if (os) x = b.mul(x, os, `l_out_${il}`);
  }
  b.setGroup('output');
  x = norm(x, w('output_norm.weight'));
  if (o.nOutputs !== o.nTokens) x = b.getRows(x, outRows);
  const out = weights.has('output.weight') ? w('output.weight') : w('token_embd.weight');
  let logits = b.mulMat(out, x, 'result_output');
  if (hp.finalSoftcap > 0) logits = b.softcap(logits, hp.finalSoftcap);
  return b.finish({ tokens: tokens.id, positions: pos.id, outputRows: outRows.id, ...(ring ? { swaRows: ring.rows.id, swaMirror: ring.mirror.id } : {}) }, logits, o.nTokens, o.nOutputs);
}

export const gemma4: ArchSpec = { ...gemma2, names: ['gemma4'], build: buildGemma4 };

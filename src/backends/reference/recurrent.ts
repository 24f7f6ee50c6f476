// Reference kernels of the recurrent layers' ops, as ggml's CPU backend computes them in the build that
// made the parity fixtures (llama.cpp v0.4.0, x86 AVX-512): the short causal convolution (GGML_OP_SSM_CONV,
// lfm2's short-conv layers and the Gated DeltaNet's input conv) and the fused Gated DeltaNet recurrence
// (GGML_OP_GATED_DELTA_NET, qwen35). Both read and update a persistent per-sequence state in place.

import { fmaf } from '../../quant/rounding.js';
import { expf } from './libm.js';
import { reduceAdd16 } from './f16-dot.js';

const f = Math.fround;

/**
 * Causal depthwise convolution of width `kernel` over `nTok` tokens of `channels` values (x: [channels, nTok]),
 * the `kernel - 1` previous inputs of each channel taken from `state` ([channels][kernel - 1], oldest first;
 * zeros at the start of a sequence): y[t][c] = sum_k w[c][k] * in[c][t - kernel + 1 + k], tap 0 the oldest.
 * ggml_compute_forward_ssm_conv_f32 sums in f32 in tap order (GCC contracts it into FMAs). The state then
 * holds the last `kernel - 1` inputs.
 */
export function ssmConv(state: Float32Array, x: Float32Array, w: Float32Array, nTok: number, channels: number, kernel: number, y: Float32Array): void {
  const h = kernel - 1;
  for (let t = 0; t < nTok; t++) {
    for (let c = 0; c < channels; c++) {
      let s = 0;
      for (let k = 0; k < kernel; k++) {
        const j = t + k; // window index: the state's h columns, then the batch
        s = fmaf(j < h ? state[c * h + j]! : x[(j - h) * channels + c]!, w[c * kernel + k]!, s);
      }
      y[t * channels + c] = s;
    }
  }
  // new state: window columns nTok .. nTok + h - 1 (each read ahead of the writes, so in place is safe)
  for (let c = 0; c < channels; c++) {
    for (let j = 0; j < h; j++) {
      const jw = nTok + j;
      state[c * h + j] = jw < h ? state[c * h + jw]! : x[(jw - h) * channels + c]!;
    }
  }
}

const acc = new Float64Array(64);
const lanes = new Float64Array(16);
/**
 * ggml_vec_dot_f32 (AVX-512): 4 accumulators x 16 lanes by FMA per 64 elements, reduced (0+2)+(1+3) then
 * _mm512_reduce_add_ps; the remaining n % 64 elements multiplied and added in f32 one by one, not fused
 * (the qwen35-f32 fixture, head size 32, where the whole dot is that tail, tells the two apart).
 */
export function dotF32Vec(n: number, x: Float32Array, xo: number, y: Float32Array, yo: number): number {
  const np = n & ~63;
  let s = 0;
  if (np > 0) {
    acc.fill(0);
    for (let i = 0; i < np; i++) acc[i & 63] = fmaf(x[xo + i]!, y[yo + i]!, acc[i & 63]!);
    for (let l = 0; l < 16; l++) lanes[l] = f(f(acc[l]! + acc[32 + l]!) + f(acc[16 + l]! + acc[48 + l]!));
    s = reduceAdd16(lanes);
  }
  for (let i = np; i < n; i++) s = f(s + f(x[xo + i]! * y[yo + i]!));
  return s;
}

export interface DeltaNetShape {
  /** head size S (k and v heads alike) */
  headDim: number;
  /** k-heads (q and k); v-head h reads q/k head h % nHeadK (the tiled order of qwen35 files) */
  nHeadK: number;
  /** v-heads: one S x S state each */
  nHeadV: number;
}

/**
 * The gated delta rule, one token at a time (ggml_compute_forward_gated_delta_net_one_chunk, which v0.4.0
 * runs for prompts too). Per v-head h, with its S x S state stored transposed (M[j][i] = S[i][j]):
 * M *= exp(g); delta[j] = (v[j] - M[j]·k) * beta; M[j] += k * delta[j]; out[j] = (M[j]·q) / sqrt(S).
 * q, k: [S * nHeadK, nTok] (L2-normalized); v, out: [S * nHeadV, nTok]; g, beta: [nHeadV, nTok].
 * `delta`: scratch of S values.
 */
export function gatedDeltaNet(state: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, g: Float32Array, beta: Float32Array,
  nTok: number, p: DeltaNetShape, y: Float32Array, delta: Float32Array): void {
  const S = p.headDim, hk = p.nHeadK, hv = p.nHeadV;
  const scale = f(1 / f(Math.sqrt(S)));
  for (let h = 0; h < hv; h++) {
    const mo = h * S * S;
    for (let t = 0; t < nTok; t++) {
      const qo = t * S * hk + (h % hk) * S, vo = t * S * hv + h * S;
      const decay = expf(g[t * hv + h]!), b = beta[t * hv + h]!;
      for (let i = mo; i < mo + S * S; i++) state[i] = f(state[i]! * decay); // ggml_vec_scale_f32
      for (let j = 0; j < S; j++) delta[j] = f(f(v[vo + j]! - dotF32Vec(S, state, mo + j * S, k, qo)) * b);
      for (let j = 0; j < S; j++) { // ggml_vec_mad_f32: fused multiply-adds
        const d = delta[j]!, ro = mo + j * S;
        for (let i = 0; i < S; i++) state[ro + i] = fmaf(k[qo + i]!, d, state[ro + i]!);
      }
      for (let j = 0; j < S; j++) y[vo + j] = f(dotF32Vec(S, state, mo + j * S, q, qo) * scale);
    }
  }
}

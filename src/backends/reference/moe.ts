// Mixture-of-experts kernels as llama.cpp's CPU backend computes them (build_moe_ffn's op sequence; the
// contract is in src/graph/graph.ts above GraphBuilder.softMax). Allocation-free: callers pass every buffer,
// so the cpu device binds these once per plan and runs them while decoding.
import { rowBytes } from '../../gguf/ggml-types.js';
import { reduceAdd16 } from './f16-dot.js';
import { glibcExpfInto } from './glibc-expf.js';
import { mulMat } from './matmul.js';
import { expfV } from './ops.js';

const f = Math.fround;

/**
 * ggml_compute_forward_soft_max_f32 without mask (scale 1): per row, the max; ggml_vec_soft_max_f32 (AVX-512)
 * takes v_expf(x - max) over 16-value chunks summed by _mm512_reduce_add_ps, then glibc expf for the last
 * n % 16 values, every partial sum added in double; then y *= f32(1 / sum). `lanes`: 16 doubles of scratch.
 */
export function softMax(x: Float32Array, n: number, nRows: number, y: Float32Array, lanes: Float64Array): void {
  for (let r = 0; r < nRows; r++) {
    const o = r * n;
    let max = -Infinity;
    for (let i = 0; i < n; i++) if (x[o + i]! > max) max = x[o + i]!;
    let sum = 0, i = 0;
    for (; i + 15 < n; i += 16) {
      for (let l = 0; l < 16; l++) { const e = expfV(f(x[o + i + l]! - max)); y[o + i + l] = e; lanes[l] = e; }
      sum += reduceAdd16(lanes);
    }
    for (; i < n; i++) { glibcExpfInto(f(x[o + i]! - max), y, o + i); sum += y[o + i]!; }
    const inv = f(1 / sum);
    for (let j = 0; j < n; j++) y[o + j] = y[o + j]! * inv;
  }
}

/**
 * ggml_argsort_top_k: the indices of each row's k largest values, largest first. ggml sorts with std::sort
 * (descending); for rows of up to 16 that is an insertion sort, which keeps equal values in index order: so
 * here, always (beyond 16 an introsort may order exact ties differently).
 */
export function topK(x: Float32Array, n: number, nRows: number, k: number, ids: Int32Array): void {
  for (let r = 0; r < nRows; r++) {
    const o = r * n, io = r * k;
    let filled = 0;
    for (let j = 0; j < n; j++) {
      const v = x[o + j]!;
      if (filled === k && !(v > x[o + ids[io + k - 1]!]!)) continue;
      // insertion into the sorted prefix: after every value >= v (equal values keep index order)
      let p = filled < k ? filled++ : k - 1;
      while (p > 0 && x[o + ids[io + p - 1]!]! < v) { ids[io + p] = ids[io + p - 1]!; p--; }
      ids[io + p] = j;
    }
  }
}

/**
 * The selected experts' weights: get_rows of probs at ids; with `norm`, divided by
 * clamp(sum_rows, 6.103515625e-5) (ggml_vec_sum_f32 sums in double, rounded to f32; f32 divide); then times
 * `scale` unless it is 0 or 1 (build_moe_ffn's w_scale).
 */
export function moeWeights(probs: Float32Array, nExpert: number, ids: Int32Array, k: number, nTok: number, norm: boolean, scale: number, y: Float32Array): void {
  const s = f(scale);
  for (let t = 0; t < nTok; t++) {
    const o = t * k;
    for (let i = 0; i < k; i++) y[o + i] = probs[t * nExpert + ids[o + i]!]!;
    if (norm) {
      let sum = 0;
      for (let i = 0; i < k; i++) sum += y[o + i]!;
      const d = Math.max(f(sum), f(6.103515625e-5));
      for (let i = 0; i < k; i++) y[o + i] = y[o + i]! / d;
    }
    if (scale !== 0 && scale !== 1) for (let i = 0; i < k; i++) y[o + i] = y[o + i]! * s;
  }
}

/** An expert id outside [0, nExpert): the weights it would select do not exist. */
export class ExpertIdError extends Error {
  readonly code = 'OUT_OF_BOUNDS';
  constructor(node: string, id: number, nExpert: number) {
    super(`${node} (mul_mat_id): expert id ${id} outside [0, ${nExpert})`);
    this.name = 'ExpertIdError';
  }
}

/**
 * mul_mat_id: y[:, i, t] = W[ids[i, t]] . x[:, i % nB, t] (nB = 1: the token's row for every slot; nB = k: a
 * row per slot), each output row the one-row matmul of its expert's matrix (llama.cpp's vec_dot or GEMV per
 * row, whatever the batch). `act`: room for one row's quantized activations (mulMatScratchBytes(type, cols, 1)).
 */
export function mulMatId(wType: number, w: Uint8Array, cols: number, rows: number, nExpert: number, x: Float32Array, nB: number, ids: Int32Array, k: number, nTok: number, y: Float32Array, act: Uint8Array | undefined, node = 'mul_mat_id'): void {
  const expertBytes = rowBytes(wType, cols) * rows;
  for (let j = 0; j < k * nTok; j++) if (!(ids[j]! >= 0 && ids[j]! < nExpert)) throw new ExpertIdError(node, ids[j]!, nExpert);
  for (let t = 0; t < nTok; t++) {
    for (let i = 0; i < k; i++) {
      const e = ids[t * k + i]!;
      const xr = x.subarray((t * nB + (nB === 1 ? 0 : i)) * cols, (t * nB + (nB === 1 ? 0 : i) + 1) * cols);
      const yr = y.subarray((t * k + i) * rows, (t * k + i + 1) * rows);
      mulMat(wType, w.subarray(e * expertBytes, (e + 1) * expertBytes), cols, rows, xr, 1, yr, act);
    }
  }
}

/** moe_sum: out[:, t] = ((y[:, 0, t]*w0 + y[:, 1, t]*w1) + ...): f32 products, f32 adds in rank order. */
export function moeSum(yIn: Float32Array, n: number, k: number, nTok: number, w: Float32Array, out: Float32Array): void {
  for (let t = 0; t < nTok; t++) {
    const o = t * n, b = t * k * n;
    const w0 = w[t * k]!;
    for (let c = 0; c < n; c++) out[o + c] = yIn[b + c]! * w0;
    for (let i = 1; i < k; i++) {
      const wi = w[t * k + i]!, bi = b + i * n;
      for (let c = 0; c < n; c++) out[o + c] = out[o + c]! + f(yIn[bi + c]! * wi);
    }
  }
}

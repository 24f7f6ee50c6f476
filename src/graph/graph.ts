// The op set and the graph a model builds for one batch shape.
//
// A tensor is a plain descriptor: shape in ggml order (ne0 = row length first, then rows),
// element type, the op that produces it and its sources. Leaves are weights (placed on a device
// at load), inputs (token ids, positions, output rows: written before each compute) and
// persistent state (the KV cache; the recurrent layers' conv and delta-rule states). A model builds the graph once per batch size; the same graph
// is then computed for every batch of that size, so decoding allocates nothing.
//
// The op set is small on purpose (tinygrad-style): anything a new architecture needs is a
// composition of these, and every backend implements exactly this list.

import { quantizedCache } from './kv-type.js';

export type Op =
  | 'none' // leaf: weight, input or state
  | 'get_rows' // src0: matrix (any weight type), src1: i32 ids -> f32 rows
  | 'mul_mat' // src0: weight [k, n] (any type), src1: f32 [k, m] -> f32 [n, m]; optional src2: inp_batch_rows (below)
  | 'add' // a + b, b broadcast over rows (b.ne0 divides a.ne0, b has 1 row or a's rows)
  | 'mul' // a * b, same broadcasting as add
  | 'scale' // a * params.scale
  | 'rms_norm' // per chunk of params.rowLen values (= ne0 unless per-head): x / sqrt(mean(x^2) + eps)
  | 'rope' // src0: [headDim*nHeads, nTok], src1: i32 positions; optional src2: f32 freq factors
  | 'swiglu' // silu(a) * b
  | 'geglu' // gelu_tanh(a) * b (ggml's f16-table GELU)
  | 'softcap' // tanh(a / cap) * cap
  | 'view_cols' // columns [params.offset, params.offset + ne0) of every row of src0
  | 'kv_store' // src0: cache (state), src1: f32 [rowLen, nTok], src2: i32 cache rows (the positions, or inp_kv_rows); writes row src2[t]
  | 'attention' // src0: q [headDim*nHead, nTok], src1: k cache, src2: v cache, src3: i32 cache rows (see seqStride below)
  | 'hadamard' // each run of params.n values times the orthonormal n x n Hadamard matrix (a quantized KV cache's rotation, kv-type.ts)
  | 'view_blocks' // per row: params.count blocks of params.block columns, from params.offset every params.stride
  | 'silu' // x * sigmoid(x) per row (ggml's SIMD order within rows)
  | 'sigmoid' // 1 / (1 + exp(-x))
  | 'softplus' // log(1 + exp(x)), x past 20 passed through
  | 'l2_norm' // per chunk of params.rowLen values: x / max(sqrt(sum(x^2)), eps)
  | 'ssm_conv' // src0: conv state (state), src1: f32 [channels, nTok], src2: f32 weight [kernel, channels]; causal depthwise conv, updates the state
  | 'scale_rows' // src0 f32 [n, rows], src1 f32 [1, rows] -> each row times its own scalar (a gate per token)
  | 'gated_delta_net' // src0: S x S state per v-head (state), src1: q, src2: k [S*nHeadK, nTok], src3: v [S*nHeadV, nTok], src4: g, src5: beta [nHeadV, nTok]; updates the state
  // Mixture of experts (llama.cpp's build_moe_ffn, see the contract above GraphBuilder.mulMatId):
  | 'soft_max' // softmax over each row of ne0 values (ggml_soft_max: no mask, scale 1)
  | 'top_k' // src0 f32 [n, rows] -> i32 [k, rows]: the k largest per row, largest first (ggml_argsort_top_k)
  | 'moe_weights' // src0 probs f32 [nExpert, nTok], src1 i32 ids [k, nTok] -> f32 [k, nTok]: the selected probs, renormalised
  | 'mul_mat_id' // src0 weights [cols, rows, nExpert], src1 f32 [cols, nTok] or [cols, k, nTok], src2 i32 ids [k, nTok] -> f32 [rows, k, nTok]
  | 'moe_sum'; // src0 f32 [n, k, nTok], src1 f32 weights [k, nTok] -> f32 [n, nTok]: sum of weighted expert outputs in rank order

// Several sequences in one cache (a Context with nSeq > 1): the cache holds one region of
// params.seqStride rows per sequence, and a graph carries one more input, inp_kv_rows (the cache row
// of each token: its sequence's first row + its position), which kv_store and attention read in place
// of the positions (RoPE keeps the positions). An attention node with params.seqStride > 0 attends, for
// the token at row r, the rows [b + window start, r] of its own region, b = r - r % seqStride. Only
// devices with `multiSequence` set run such nodes (the scheduler's rule); single-sequence graphs never
// carry the input or the parameter, so they are what they always were.
// Such graphs also carry inp_batch_rows, i32 [2], a numerics hint for mul_mat (its src2, element
// params.batchRow): activation rows >= that count are computed in the float order a one-token
// evaluation uses (llama.cpp's GEMV), the rows before it as one batch. The Context stages each
// sequence's rows so that every sequence gets the kernel orders it would get evaluated alone; a device
// may ignore the hint (the product is the same up to float rounding).
//
// Sliding-window rings (src/runtime/swa-ring.ts): a sliding-window layer's cache may hold only a ring of
// `period` rows (the window plus the largest batch, padded to 256) plus a mirror of its first `window` rows
// after it, per sequence. Its kv_store nodes write each token twice (inp_swa_rows, inp_swa_mirror: the same row
// when there is no mirror copy) and its attention node reads inp_swa_rows, the one of the two copies from which
// the token's whole window is the run of rows just before it: the kernels see what they always see (a row and
// the window rows before it), and since the period is a multiple of 256 every row sits in the SIMD lane and
// 16-row chunk its position would, so a ring sums in the full cache's float order.

export type DType = 'f32' | 'f16' | 'i32' | number; // number = a ggml type id for weights

export type TensorRole = 'weight' | 'input' | 'state' | 'intermediate' | 'output';

export interface TensorDesc {
  id: number;
  name: string;
  op: Op;
  role: TensorRole;
  /** element type: 'f32', 'f16', 'i32', or a ggml type id (weights) */
  dtype: DType;
  /** ne0 first */
  shape: number[];
  src: number[];
  params: Record<string, number | boolean | undefined>;
  /**
   * The structural unit the node belongs to ('input', 'blk.3', 'output'), the same name at every
   * batch shape. Devices that take work in whole units (an NPU compiles one engine per layer) group
   * nodes by it; per-op devices ignore it. Leaves have none.
   */
  group?: string;
}

export interface Graph {
  tensors: TensorDesc[];
  /** ids of the non-leaf tensors in execution order */
  nodes: number[];
  /**
   * kvRows: the cache row of each token, only in graphs of several sequences (see seqStride above); swaRows /
   * swaMirror: each token's two rows in the sliding-window layers' rings (see the ring note above)
   */
  inputs: { tokens: number; positions: number; outputRows: number; kvRows?: number; batchRows?: number; swaRows?: number; swaMirror?: number };
  /** the logits tensor [nVocab, nOutputs] */
  output: number;
  nTokens: number;
  nOutputs: number;
}

/**
 * A graph whose shapes do not fit together (e.g. a K projection wider than the cache row it is
 * stored into). The model loader validates files so that this never happens; the builder checks
 * again because kernels trust these shapes with raw memory.
 */
export class GraphShapeError extends Error {
  readonly code = 'BAD_SHAPE';
  constructor(op: Op, message: string) {
    super(`${op}: ${message}`);
    this.name = 'GraphShapeError';
  }
}

function need(ok: boolean, op: Op, message: () => string): void {
  if (!ok) throw new GraphShapeError(op, message());
}
const rows = (t: TensorDesc) => t.shape.slice(1).reduce((a, b) => a * b, 1);
const isDim = (n: number) => Number.isSafeInteger(n) && n > 0;

/** an attention node over several sequences' regions of its cache (only multiSequence devices run it) */
export const multiSequence = (t: TensorDesc): boolean => t.op === 'attention' && ((t.params.seqStride as number | undefined) ?? 0) > 0;
/**
 * an attention node with llama.cpp's flash-attention numerics (params.flash: GGML_OP_FLASH_ATTN_EXT's online
 * softmax with an f16 accumulator, src/backends/reference/ops.ts flashAttention); only devices that declare
 * `flashAttention` run it. Graphs without flash attention never carry the parameter.
 */
export const flashAttention = (t: TensorDesc): boolean => t.op === 'attention' && t.params.flash === true;

export function nElements(t: TensorDesc): number {
  return t.shape.reduce((a, b) => a * b, 1);
}

/** Builds a graph step by step; model files call these helpers and never touch data. */
export class GraphBuilder {
  readonly tensors: TensorDesc[] = [];
  readonly nodes: number[] = [];
  private group: string | undefined;

  /** Nodes added from now on belong to this unit (see TensorDesc.group). */
  setGroup(name: string): void { this.group = name; }

  private add(op: Op, role: TensorRole, dtype: DType, shape: number[], src: TensorDesc[], params: TensorDesc['params'] = {}, name = ''): TensorDesc {
    const t: TensorDesc = { id: this.tensors.length, name: name || `${op}#${this.tensors.length}`, op, role, dtype, shape, src: src.map((s) => s.id), params };
    if (op !== 'none' && this.group !== undefined) t.group = this.group;
    this.tensors.push(t);
    if (op !== 'none') this.nodes.push(t.id);
    return t;
  }

  leaf(name: string, role: 'weight' | 'input' | 'state', dtype: DType, shape: number[]): TensorDesc {
    return this.add('none', role, dtype, shape, [], {}, name);
  }

  getRows(w: TensorDesc, ids: TensorDesc, name?: string): TensorDesc {
    need(ids.dtype === 'i32' && ids.shape.length === 1, 'get_rows', () => `ids ${ids.name} must be a 1-D i32 tensor`);
    return this.add('get_rows', 'intermediate', 'f32', [w.shape[0]!, ids.shape[0]!], [w, ids], {}, name);
  }
  /** `batchRows`: the inp_batch_rows input and which of its two counts applies to x's rows (see above) */
  mulMat(w: TensorDesc, x: TensorDesc, name?: string, batchRows?: { input: TensorDesc; index: 0 | 1 }): TensorDesc {
    need(w.shape[0] === x.shape[0], 'mul_mat', () => `${w.name} rows of ${w.shape[0]} vs input rows of ${x.shape[0]}`);
    if (!batchRows) return this.add('mul_mat', 'intermediate', 'f32', [w.shape[1] ?? 1, x.shape[1] ?? 1], [w, x], {}, name);
    need(batchRows.input.dtype === 'i32' && batchRows.input.shape[0] === 2, 'mul_mat', () => `${batchRows.input.name} must be an i32 [2] input`);
    return this.add('mul_mat', 'intermediate', 'f32', [w.shape[1] ?? 1, x.shape[1] ?? 1], [w, x, batchRows.input], { batchRow: batchRows.index }, name);
  }
  /** b broadcasts over a: b.ne0 divides a.ne0 and b has one row or a's rows */
  private broadcast(op: Op, a: TensorDesc, b: TensorDesc): void {
    const ok = isDim(b.shape[0]!) && a.shape[0]! % b.shape[0]! === 0 && (rows(b) === 1 || (rows(b) === rows(a) && b.shape[0] === a.shape[0]));
    need(ok, op, () => `${b.name} [${b.shape.join(', ')}] does not broadcast over ${a.name} [${a.shape.join(', ')}]`);
  }
  addT(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    this.broadcast('add', a, b);
    return this.add('add', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  mul(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    this.broadcast('mul', a, b);
    return this.add('mul', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  scale(a: TensorDesc, scale: number, name?: string): TensorDesc {
    return this.add('scale', 'intermediate', 'f32', [...a.shape], [a], { scale }, name);
  }
  rmsNorm(a: TensorDesc, eps: number, rowLen = a.shape[0]!, name?: string): TensorDesc {
    need(isDim(rowLen) && a.shape[0]! % rowLen === 0, 'rms_norm', () => `chunks of ${rowLen} do not tile rows of ${a.shape[0]}`);
    need(Number.isFinite(eps) && eps > 0, 'rms_norm', () => `eps ${eps}`);
    return this.add('rms_norm', 'intermediate', 'f32', [...a.shape], [a], { eps, rowLen }, name);
  }
  rope(a: TensorDesc, pos: TensorDesc, p: { headDim: number; nDims: number; neox: boolean; freqBase: number; freqScale: number }, freqFactors?: TensorDesc, name?: string): TensorDesc {
    need(isDim(p.headDim) && a.shape[0]! % p.headDim === 0, 'rope', () => `head dim ${p.headDim} does not tile rows of ${a.shape[0]}`);
    need(p.nDims > 0 && p.nDims % 2 === 0 && p.nDims <= p.headDim, 'rope', () => `rotating ${p.nDims} of ${p.headDim} dims`);
    need(pos.dtype === 'i32' && pos.shape[0] === (a.shape[1] ?? 1), 'rope', () => `${pos.shape[0]} positions for ${a.shape[1] ?? 1} tokens`);
    need(!freqFactors || (freqFactors.shape[0] === p.nDims / 2 && rows(freqFactors) === 1), 'rope', () => `${freqFactors!.name} has ${freqFactors!.shape[0]} factors for ${p.nDims / 2} dim pairs`);
    const src = freqFactors ? [a, pos, freqFactors] : [a, pos];
    return this.add('rope', 'intermediate', 'f32', [...a.shape], src, { ...p }, name);
  }
  swiglu(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    need(a.shape.join() === b.shape.join(), 'swiglu', () => `[${a.shape.join(', ')}] vs [${b.shape.join(', ')}]`);
    return this.add('swiglu', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  geglu(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    need(a.shape.join() === b.shape.join(), 'geglu', () => `[${a.shape.join(', ')}] vs [${b.shape.join(', ')}]`);
    return this.add('geglu', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  softcap(a: TensorDesc, cap: number, name?: string): TensorDesc {
    return this.add('softcap', 'intermediate', 'f32', [...a.shape], [a], { cap }, name);
  }
  viewCols(a: TensorDesc, offset: number, width: number, name?: string): TensorDesc {
    need(Number.isSafeInteger(offset) && offset >= 0 && isDim(width) && offset + width <= a.shape[0]!, 'view_cols', () => `columns [${offset}, ${offset + width}) of rows of ${a.shape[0]}`);
    return this.add('view_cols', 'intermediate', 'f32', [width, ...a.shape.slice(1)], [a], { offset }, name);
  }
  kvStore(cache: TensorDesc, x: TensorDesc, pos: TensorDesc, name?: string): TensorDesc {
    // a row wider than the cache's would write into the next slot (and past the last one)
    need(cache.role === 'state' && x.shape[0] === cache.shape[0], 'kv_store', () => `${x.name} rows of ${x.shape[0]} into ${cache.name} rows of ${cache.shape[0]}`);
    need(pos.dtype === 'i32' && pos.shape[0] === (x.shape[1] ?? 1), 'kv_store', () => `${pos.shape[0]} positions for ${x.shape[1] ?? 1} rows`);
    // a quantized cache stores whole 32-value blocks per row (ggml: ne0 % blck_size == 0)
    need(!quantizedCache(cache) || cache.shape[0]! % 32 === 0, 'kv_store', () => `${cache.name} rows of ${cache.shape[0]} values are not whole 32-value blocks`);
    return this.add('kv_store', 'intermediate', 'f32', [0], [cache, x, pos], {}, name);
  }
  attention(q: TensorDesc, k: TensorDesc, v: TensorDesc, pos: TensorDesc, p: { nHead: number; nHeadKv: number; headDimK: number; headDimV: number; scale: number; softcap: number; window: number; seqStride?: number; flash?: boolean }, deps: TensorDesc[], name?: string): TensorDesc {
    need(isDim(p.nHead) && isDim(p.nHeadKv) && p.nHead % p.nHeadKv === 0, 'attention', () => `${p.nHead} query heads over ${p.nHeadKv} KV heads`);
    need(q.shape[0] === p.nHead * p.headDimK, 'attention', () => `q rows of ${q.shape[0]} for ${p.nHead} heads of ${p.headDimK}`);
    need(k.shape[0] === p.nHeadKv * p.headDimK, 'attention', () => `${k.name} rows of ${k.shape[0]} for ${p.nHeadKv} heads of ${p.headDimK}`);
    need(v.shape[0] === p.nHeadKv * p.headDimV && v.shape[1] === k.shape[1], 'attention', () => `${v.name} [${v.shape.join(', ')}] for ${p.nHeadKv} heads of ${p.headDimV} and ${k.shape[1]} slots`);
    need(pos.shape[0] === q.shape[1], 'attention', () => `${pos.shape[0]} positions for ${q.shape[1]} tokens`);
    need(p.seqStride === undefined || (isDim(p.seqStride) && k.shape[1]! % p.seqStride === 0), 'attention', () => `sequence regions of ${p.seqStride} rows in a cache of ${k.shape[1]}`);
    // as llama.cpp: only flash attention reads a quantized cache, per head (whole blocks per head)
    need(!(quantizedCache(k) || quantizedCache(v)) || p.flash === true, 'attention', () => `a quantized KV cache (${k.name}) needs flash attention`);
    need(!quantizedCache(k) || p.headDimK % 32 === 0, 'attention', () => `a quantized K cache needs heads of a multiple of 32 values, got ${p.headDimK}`);
    need(!quantizedCache(v) || p.headDimV % 32 === 0, 'attention', () => `a quantized V cache needs heads of a multiple of 32 values, got ${p.headDimV}`);
    // deps (the kv_store nodes) only order execution: attention must run after this batch's K/V are stored.
    const t = this.add('attention', 'intermediate', 'f32', [p.headDimV * p.nHead, q.shape[1]!], [q, k, v, pos, ...deps], { ...p }, name);
    return t;
  }

  /** x with each run of n values (n a power of two dividing ne0) rotated by the normalized n x n Hadamard matrix */
  hadamard(x: TensorDesc, n: number, name?: string): TensorDesc {
    need(isDim(n) && (n & (n - 1)) === 0 && x.shape[0]! % n === 0, 'hadamard', () => `blocks of ${n} in rows of ${x.shape[0]}`);
    return this.add('hadamard', 'intermediate', 'f32', [...x.shape], [x], { n }, name);
  }
  viewBlocks(a: TensorDesc, offset: number, block: number, stride: number, count: number, name?: string): TensorDesc {
    const ok = Number.isSafeInteger(offset) && offset >= 0 && isDim(block) && isDim(count) && isDim(stride) && block <= stride && offset + (count - 1) * stride + block <= a.shape[0]!;
    need(ok, 'view_blocks', () => `${count} blocks of ${block} every ${stride} from ${offset} in rows of ${a.shape[0]}`);
    return this.add('view_blocks', 'intermediate', 'f32', [block * count, ...a.shape.slice(1)], [a], { offset, block, stride, count }, name);
  }
  /** rowLen: ggml's row length (its SIMD runs within rows), a divisor of ne0 */
  silu(a: TensorDesc, rowLen = a.shape[0]!, name?: string): TensorDesc {
    need(isDim(rowLen) && a.shape[0]! % rowLen === 0, 'silu', () => `rows of ${rowLen} do not tile rows of ${a.shape[0]}`);
    return this.add('silu', 'intermediate', 'f32', [...a.shape], [a], { rowLen }, name);
  }
  sigmoid(a: TensorDesc, name?: string): TensorDesc { return this.add('sigmoid', 'intermediate', 'f32', [...a.shape], [a], {}, name); }
  softplus(a: TensorDesc, name?: string): TensorDesc { return this.add('softplus', 'intermediate', 'f32', [...a.shape], [a], {}, name); }
  l2Norm(a: TensorDesc, eps: number, rowLen: number, name?: string): TensorDesc {
    need(isDim(rowLen) && a.shape[0]! % rowLen === 0, 'l2_norm', () => `chunks of ${rowLen} do not tile rows of ${a.shape[0]}`);
    need(Number.isFinite(eps) && eps > 0, 'l2_norm', () => `eps ${eps}`);
    return this.add('l2_norm', 'intermediate', 'f32', [...a.shape], [a], { eps, rowLen }, name);
  }
  /** state: [(kernel - 1) * channels] f32, per channel its kernel - 1 previous inputs (oldest first) */
  ssmConv(state: TensorDesc, x: TensorDesc, w: TensorDesc, name?: string): TensorDesc {
    const channels = x.shape[0]!, kernel = w.shape[0]!;
    need(kernel >= 2 && w.shape[1] === channels && rows(w) === channels, 'ssm_conv', () => `weight ${w.name} [${w.shape.join(', ')}] for ${channels} channels`);
    need(state.role === 'state' && state.dtype === 'f32' && nElements(state) === (kernel - 1) * channels, 'ssm_conv', () => `state ${state.name} of ${nElements(state)} values for ${channels} channels x ${kernel - 1}`);
    return this.add('ssm_conv', 'intermediate', 'f32', [...x.shape], [state, x, w], { kernel }, name);
  }
  /** each row of a times the matching value of s ([1, rows]): ggml_mul broadcasting a per-token scalar (qwen35moe's shared-expert gate) */
  scaleRows(a: TensorDesc, s: TensorDesc, name?: string): TensorDesc {
    need(s.shape[0] === 1 && rows(s) === rows(a), 'scale_rows', () => `scalars [${s.shape.join(', ')}] for rows of [${a.shape.join(', ')}]`);
    return this.add('scale_rows', 'intermediate', 'f32', [...a.shape], [a, s], {}, name);
  }
  /** state: [S * S * nHeadV] f32 */
  gatedDeltaNet(state: TensorDesc, q: TensorDesc, k: TensorDesc, v: TensorDesc, g: TensorDesc, beta: TensorDesc, p: { headDim: number; nHeadK: number; nHeadV: number }, name?: string): TensorDesc {
    const S = p.headDim, nTok = v.shape[1] ?? 1;
    need(isDim(S) && isDim(p.nHeadK) && isDim(p.nHeadV) && p.nHeadV % p.nHeadK === 0, 'gated_delta_net', () => `${p.nHeadV} v-heads over ${p.nHeadK} k-heads of ${S}`);
    need(q.shape[0] === S * p.nHeadK && k.shape[0] === S * p.nHeadK && v.shape[0] === S * p.nHeadV, 'gated_delta_net', () => `q/k/v rows of ${q.shape[0]}/${k.shape[0]}/${v.shape[0]} for heads of ${S}`);
    need(g.shape[0] === p.nHeadV && beta.shape[0] === p.nHeadV, 'gated_delta_net', () => `g/beta rows of ${g.shape[0]}/${beta.shape[0]} for ${p.nHeadV} v-heads`);
    need([q, k, g, beta].every((t) => (t.shape[1] ?? 1) === nTok), 'gated_delta_net', () => `operands of different token counts`);
    need(state.role === 'state' && state.dtype === 'f32' && nElements(state) === S * S * p.nHeadV, 'gated_delta_net', () => `state ${state.name} of ${nElements(state)} values for ${p.nHeadV} heads of ${S} x ${S}`);
    return this.add('gated_delta_net', 'intermediate', 'f32', [...v.shape], [state, q, k, v, g, beta], { ...p }, name);
  }

  // ---- Mixture of experts: the op sequence of llama.cpp's build_moe_ffn (src/llama-graph.cpp, v0.4.0):
  //   logits = mul_mat(router, x)             [nExpert, nTok]
  //   probs  = soft_max(logits)               ggml_soft_max: max, exp(x - max) (v_expf over 16-lane chunks,
  //                                           glibc expf for the rest), sum in double, x * f32(1/sum)
  //   ids    = top_k(probs, k)                ggml_argsort_top_k: descending (equal values: lower index first)
  //   w      = moe_weights(probs, ids)        get_rows; with norm: w / max(sum_rows(w), 2^-14) (sum in
  //                                           double, rounded to f32; f32 divide); then times scale if not 0 or 1
  //   y      = mul_mat_id(W_exps, x, ids)     per (slot i, token t): W[ids[i, t]] . x[:, t] (x [cols, nTok]),
  //                                           or W[ids[i, t]] . x[:, i, t] (x [cols, k, nTok], e.g. the down projection)
  //   out    = moe_sum(y_down, w)             ((y0*w0 + y1*w1) + y2*w2) ...: f32 products, f32 adds, rank order
  // mul_mat_id contract: only the selected experts' weight rows are read. Each output row is the one-row
  // matmul of its expert's matrix: the activations quantized per row as for mul_mat, and the float order
  // of llama.cpp's one-token kernel for that weight type (ggml_compute_forward_mul_mat_id runs vec_dot per
  // row, the repack buffer's forward_mul_mat_id runs the GEMV for every row; tinyBLAS and the Q4_K GEMM
  // never run for experts), so the result does not depend on how many tokens a batch routes to an expert.
  // A device may group the batch's rows by expert to stream each expert's weights once. ids outside
  // [0, nExpert) are an error (the kernels check them before reading weights).
  softMax(a: TensorDesc, name?: string): TensorDesc {
    return this.add('soft_max', 'intermediate', 'f32', [...a.shape], [a], {}, name);
  }
  topK(a: TensorDesc, k: number, name?: string): TensorDesc {
    need(Number.isSafeInteger(k) && k > 0 && k <= a.shape[0]!, 'top_k', () => `top ${k} of rows of ${a.shape[0]}`);
    return this.add('top_k', 'intermediate', 'i32', [k, ...a.shape.slice(1)], [a], { k }, name);
  }
  moeWeights(probs: TensorDesc, ids: TensorDesc, p: { norm: boolean; scale: number }, name?: string): TensorDesc {
    need(ids.dtype === 'i32' && rows(ids) === rows(probs) && ids.shape[0]! <= probs.shape[0]!, 'moe_weights', () => `ids [${ids.shape.join(', ')}] for probs [${probs.shape.join(', ')}]`);
    need(Number.isFinite(p.scale), 'moe_weights', () => `scale ${p.scale}`);
    return this.add('moe_weights', 'intermediate', 'f32', [...ids.shape], [probs, ids], { ...p }, name);
  }
  mulMatId(w: TensorDesc, x: TensorDesc, ids: TensorDesc, name?: string): TensorDesc {
    const k = ids.shape[0]!, nTok = ids.shape[1] ?? 1;
    need(w.shape.length === 3 && isDim(w.shape[2]!), 'mul_mat_id', () => `${w.name} [${w.shape.join(', ')}] is not [cols, rows, nExpert]`);
    need(w.shape[0] === x.shape[0], 'mul_mat_id', () => `${w.name} rows of ${w.shape[0]} vs input rows of ${x.shape[0]}`);
    need(ids.dtype === 'i32' && ids.shape.length <= 2, 'mul_mat_id', () => `ids ${ids.name} must be a 2-D i32 tensor [k, nTok]`);
    // x [cols, nTok]: every slot reads its token's row; x [cols, k, nTok]: slot i reads row i of its token
    const shapeOk = x.shape.length === 3 ? x.shape[1] === k && x.shape[2] === nTok : (x.shape[1] ?? 1) === nTok;
    need(shapeOk, 'mul_mat_id', () => `input [${x.shape.join(', ')}] for ${k} slots of ${nTok} tokens`);
    return this.add('mul_mat_id', 'intermediate', 'f32', [w.shape[1]!, k, nTok], [w, x, ids], {}, name);
  }
  moeSum(y: TensorDesc, w: TensorDesc, name?: string): TensorDesc {
    need(y.shape.length === 3 && w.shape[0] === y.shape[1] && (w.shape[1] ?? 1) === y.shape[2], 'moe_sum', () => `weights [${w.shape.join(', ')}] for expert outputs [${y.shape.join(', ')}]`);
    return this.add('moe_sum', 'intermediate', 'f32', [y.shape[0]!, y.shape[2]!], [y, w], {}, name);
  }
  finish(inputs: Graph['inputs'], output: TensorDesc, nTokens: number, nOutputs: number): Graph {
    output.role = 'output';
    return { tensors: this.tensors, nodes: this.nodes, inputs, output: output.id, nTokens, nOutputs };
  }
}

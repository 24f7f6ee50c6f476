// The op set and the graph a model builds for one batch shape.
//
// A tensor is a plain descriptor: shape in ggml order (ne0 = row length first, then rows),
// element type, the op that produces it and its sources. Leaves are weights (placed on a device
// at load), inputs (token ids, positions, output rows: written before each compute) and
// persistent state (the KV cache). A model builds the graph once per batch size; the same graph
// is then computed for every batch of that size, so decoding allocates nothing.
//
// The op set is small on purpose (tinygrad-style): anything a new architecture needs is a
// composition of these, and every backend implements exactly this list.

export type Op =
  | 'none' // leaf: weight, input or state
  | 'get_rows' // src0: matrix (any weight type), src1: i32 ids -> f32 rows
  | 'mul_mat' // src0: weight [k, n] (any type), src1: f32 [k, m] -> f32 [n, m]
  | 'add' // a + b, b broadcast over rows (b.ne0 divides a.ne0, b has 1 row or a's rows)
  | 'mul' // a * b, same broadcasting as add
  | 'scale' // a * params.scale
  | 'rms_norm' // per chunk of params.rowLen values (= ne0 unless per-head): x / sqrt(mean(x^2) + eps)
  | 'rope' // src0: [headDim*nHeads, nTok], src1: i32 positions; optional src2: f32 freq factors
  | 'swiglu' // silu(a) * b
  | 'geglu' // gelu_tanh(a) * b (ggml's f16-table GELU)
  | 'softcap' // tanh(a / cap) * cap
  | 'view_cols' // columns [params.offset, params.offset + ne0) of every row of src0
  | 'kv_store' // src0: cache (state), src1: f32 [rowLen, nTok], src2: i32 positions; writes rows at slot=pos
  | 'attention'; // src0: q [headDim*nHead, nTok], src1: k cache, src2: v cache, src3: i32 positions

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
  inputs: { tokens: number; positions: number; outputRows: number };
  /** the logits tensor [nVocab, nOutputs] */
  output: number;
  nTokens: number;
  nOutputs: number;
}

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
    return this.add('get_rows', 'intermediate', 'f32', [w.shape[0]!, ids.shape[0]!], [w, ids], {}, name);
  }
  mulMat(w: TensorDesc, x: TensorDesc, name?: string): TensorDesc {
    if (w.shape[0] !== x.shape[0]) throw new Error(`mul_mat: ${w.name} rows of ${w.shape[0]} vs input rows of ${x.shape[0]}`);
    return this.add('mul_mat', 'intermediate', 'f32', [w.shape[1] ?? 1, x.shape[1] ?? 1], [w, x], {}, name);
  }
  addT(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    return this.add('add', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  mul(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    return this.add('mul', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  scale(a: TensorDesc, scale: number, name?: string): TensorDesc {
    return this.add('scale', 'intermediate', 'f32', [...a.shape], [a], { scale }, name);
  }
  rmsNorm(a: TensorDesc, eps: number, rowLen = a.shape[0]!, name?: string): TensorDesc {
    return this.add('rms_norm', 'intermediate', 'f32', [...a.shape], [a], { eps, rowLen }, name);
  }
  rope(a: TensorDesc, pos: TensorDesc, p: { headDim: number; nDims: number; neox: boolean; freqBase: number; freqScale: number }, freqFactors?: TensorDesc, name?: string): TensorDesc {
    const src = freqFactors ? [a, pos, freqFactors] : [a, pos];
    return this.add('rope', 'intermediate', 'f32', [...a.shape], src, { ...p }, name);
  }
  swiglu(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    return this.add('swiglu', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  geglu(a: TensorDesc, b: TensorDesc, name?: string): TensorDesc {
    return this.add('geglu', 'intermediate', 'f32', [...a.shape], [a, b], {}, name);
  }
  softcap(a: TensorDesc, cap: number, name?: string): TensorDesc {
    return this.add('softcap', 'intermediate', 'f32', [...a.shape], [a], { cap }, name);
  }
  viewCols(a: TensorDesc, offset: number, width: number, name?: string): TensorDesc {
    return this.add('view_cols', 'intermediate', 'f32', [width, ...a.shape.slice(1)], [a], { offset }, name);
  }
  kvStore(cache: TensorDesc, x: TensorDesc, pos: TensorDesc, name?: string): TensorDesc {
    return this.add('kv_store', 'intermediate', 'f32', [0], [cache, x, pos], {}, name);
  }
  attention(q: TensorDesc, k: TensorDesc, v: TensorDesc, pos: TensorDesc, p: { nHead: number; nHeadKv: number; headDimK: number; headDimV: number; scale: number; softcap: number; window: number }, deps: TensorDesc[], name?: string): TensorDesc {
    // deps (the kv_store nodes) only order execution: attention must run after this batch's K/V are stored.
    const t = this.add('attention', 'intermediate', 'f32', [p.headDimV * p.nHead, q.shape[1]!], [q, k, v, pos, ...deps], { ...p }, name);
    return t;
  }

  finish(inputs: Graph['inputs'], output: TensorDesc, nTokens: number, nOutputs: number): Graph {
    output.role = 'output';
    return { tensors: this.tensors, nodes: this.nodes, inputs, output: output.id, nTokens, nOutputs };
  }
}

// Compiling a split's nodes for the cpu device, once per plan: every node's operands checked against their
// placements (so no kernel writes outside its buffers whatever the file says), then bound into a runner
// with its pointers, typed-array views, argument objects and scratch fixed, so computing a node allocates
// nothing. Nodes no WASM kernel reproduces run the reference kernel on views of the same memory, bound
// here too (with its scratch) so they allocate nothing either.
import type { Placement } from '../backend.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { multiSequence, nElements } from '../../graph/graph.js';
import { GgmlType } from '../../gguf/ggml-types.js';
import { computeNode } from '../reference/device.js';
import { mulMat, mulMatScratchBytes } from '../reference/matmul.js';
import * as ref from '../reference/ops.js';
import { gatedDeltaNet, ssmConv } from '../reference/recurrent.js';
import type { CpuBuffer } from './buffer.js';
import { profiled, profileKey } from './profile.js';
import { oneRowOrder, typeId, wasmAttention, wasmFlashAttention, wasmFlashAttentionQ8, wasmMatmul, wasmMatmulId } from './policy.js';
import * as moe from '../reference/moe.js';
import { flashAttentionKvq, hadamardRows, kvCacheView, kvqWorkspace, kvStoreQuant } from '../reference/attention-kvq.js';
import { quantizedCache } from '../../graph/kv-type.js';
import { CpuRuntimeError } from './runtime/errors.js';
import { rowBytesOf } from './runtime/layouts.js';
import type { CpuRuntime, GgmlAttentionArgs, RopeArgs } from './runtime.js';

export interface Program {
  placement: (id: number) => Placement;
  /** the memory's size when compiled: views bound here are over that buffer */
  bytes: number;
  run: (() => void)[];
}

const ptrOf = (p: Placement) => (p.buffer as CpuBuffer).ptr + p.offset;

/** Bytes a tensor's shape and type occupy. */
export function tensorBytes(t: TensorDesc): number {
  const rows = t.shape.slice(1).reduce((a, b) => a * b, 1);
  if (typeof t.dtype === 'number') return rowBytesOf(t.dtype, t.shape[0] ?? 1) * rows;
  return nElements(t) * (t.dtype === 'f16' ? 2 : 4);
}

function outOfBounds(g: Graph, t: TensorDesc, what: string): CpuRuntimeError {
  return new CpuRuntimeError('OUT_OF_BOUNDS', `cpu device: node ${t.name} (${t.op}): ${what}`);
}

/**
 * Checks that every operand of node t fits its placement (its shape's bytes within the placement, the
 * placement within its buffer) and that the shapes the kernels combine agree (row widths, head counts,
 * cache rows), so every kernel's reads and writes stay inside the tensors' placements.
 */
export function checkNode(g: Graph, t: TensorDesc, at: (id: number) => Placement): void {
  const fits = (x: TensorDesc) => {
    const p = at(x.id), need = tensorBytes(x);
    if (need > p.nBytes) throw outOfBounds(g, t, `${x.name} needs ${need} bytes (shape [${x.shape}]) but its placement holds ${p.nBytes}`);
    if (p.offset < 0 || p.offset + p.nBytes > p.buffer.size) throw outOfBounds(g, t, `${x.name}'s placement [${p.offset}, ${p.offset + p.nBytes}) lies outside its ${p.buffer.size}-byte buffer`);
  };
  fits(t);
  for (const s of t.src) fits(g.tensors[s]!);
  const src = (i: number) => g.tensors[t.src[i]!]!;
  const need = (ok: boolean, what: string) => { if (!ok) throw outOfBounds(g, t, what); };
  const n = nElements(t);
  switch (t.op) {
    case 'mul_mat': {
      const w = src(0), x = src(1);
      need(x.shape[0] === w.shape[0], `activation rows of ${x.shape[0]} values for weight ${w.name} rows of ${w.shape[0]}`);
      need(t.shape[0] === (w.shape[1] ?? 1) && nElements(t) === (w.shape[1] ?? 1) * (x.shape[1] ?? 1), `result [${t.shape}] is not [${w.shape[1] ?? 1}, ${x.shape[1] ?? 1}]`);
      break;
    }
    case 'mul_mat_id': {
      const w = src(0), x = src(1), ids = src(2), k = ids.shape[0]!, nTok = ids.shape[1] ?? 1;
      need(w.shape.length === 3 && x.shape[0] === w.shape[0], `activation rows of ${x.shape[0]} values for expert weights ${w.name} [${w.shape}]`);
      need(nElements(x) === w.shape[0]! * nTok * (x.shape.length === 3 ? k : 1), `input [${x.shape}] for ${k} slots of ${nTok} tokens`);
      need(ids.dtype === 'i32' && n === w.shape[1]! * k * nTok, `result [${t.shape}] is not [${w.shape[1]}, ${k}, ${nTok}]`);
      break;
    }
    case 'soft_max':
      need(nElements(src(0)) === n && n % t.shape[0]! === 0, `input of ${nElements(src(0))} values for a result of ${n}`);
      break;
    case 'top_k': {
      const a = src(0), k = t.shape[0]!;
      need(k <= a.shape[0]! && n / k === nElements(a) / a.shape[0]!, `top ${k} of [${a.shape}] into [${t.shape}]`);
      break;
    }
    case 'moe_weights': {
      const probs = src(0), ids = src(1);
      need(nElements(ids) === n && n / t.shape[0]! === nElements(probs) / probs.shape[0]!, `ids [${ids.shape}] and probs [${probs.shape}] for [${t.shape}]`);
      break;
    }
    case 'moe_sum': {
      const e = src(0), wts = src(1);
      need(e.shape.length === 3 && nElements(wts) === e.shape[1]! * e.shape[2]! && n === e.shape[0]! * e.shape[2]!, `expert outputs [${e.shape}] and weights [${wts.shape}] for [${t.shape}]`);
      break;
    }
    case 'get_rows': {
      const w = src(0), ids = src(1);
      need(t.shape[0] === w.shape[0] && n === w.shape[0]! * ids.shape[0]!, `result [${t.shape}] is not ${ids.shape[0]} rows of ${w.shape[0]}`);
      break;
    }
    case 'add': case 'mul': {
      const na = nElements(src(0)), nb = nElements(src(1));
      need(na >= n && nb > 0 && n % nb === 0, `operands of ${na} and ${nb} values for a result of ${n}`);
      break;
    }
    case 'scale': case 'softcap': case 'rms_norm':
      need(nElements(src(0)) >= n, `input of ${nElements(src(0))} values for a result of ${n}`);
      if (t.op === 'rms_norm') need((t.params.rowLen as number) > 0 && n % (t.params.rowLen as number) === 0, `rows of ${t.params.rowLen} in ${n} values`);
      break;
    case 'swiglu': case 'geglu':
      need(nElements(src(0)) >= n && nElements(src(1)) >= n, `inputs of ${nElements(src(0))} and ${nElements(src(1))} values for a result of ${n}`);
      break;
    case 'view_cols': {
      const w = t.shape[0]!, srcW = src(0).shape[0]!, off = t.params.offset as number;
      need(off >= 0 && off + w <= srcW && nElements(src(0)) >= (n / w) * srcW, `columns [${off}, ${off + w}) of rows of ${srcW}`);
      break;
    }
    case 'kv_store': {
      const cache = src(0), x = src(1), pos = src(2);
      need(x.shape[0] === cache.shape[0], `rows of ${x.shape[0]} values stored into a cache with rows of ${cache.shape[0]}`);
      need(pos.shape[0]! >= (x.shape[1] ?? 1), `${pos.shape[0]} positions for ${x.shape[1] ?? 1} rows`);
      break;
    }
    case 'rope': {
      const hd = t.params.headDim as number, nDims = t.params.nDims as number, rowLen = t.shape[0]!;
      need(hd > 0 && rowLen % hd === 0 && nDims > 0 && nDims <= hd && nDims % 2 === 0, `rope over ${nDims} of head ${hd} in rows of ${rowLen}`);
      need(nElements(src(0)) >= n && src(1).shape[0]! >= t.shape[1]!, `input of ${nElements(src(0))} values and ${src(1).shape[0]} positions for [${t.shape}]`);
      if (t.src.length > 2) need(nElements(src(2)) >= nDims / 2, `${nElements(src(2))} frequency factors for ${nDims / 2} pairs`);
      break;
    }
    case 'hadamard':
      need(nElements(src(0)) === n && n % (t.params.n as number) === 0, `input of ${nElements(src(0))} values in blocks of ${t.params.n}`);
      break;
    case 'silu': case 'sigmoid': case 'softplus': case 'l2_norm': {
      need(nElements(src(0)) >= n, `input of ${nElements(src(0))} values for a result of ${n}`);
      const rowLen = t.params.rowLen as number | undefined;
      if (rowLen !== undefined) need(rowLen > 0 && t.shape[0]! % rowLen === 0, `rows of ${rowLen} in rows of ${t.shape[0]}`);
      break;
    }
    case 'scale_rows':
      need(nElements(src(0)) >= n && nElements(src(1)) >= n / t.shape[0]!, `input of ${nElements(src(0))} values and ${nElements(src(1))} scalars for [${t.shape}]`);
      break;
    case 'view_blocks': {
      const p = t.params, srcW = src(0).shape[0]!, off = p.offset as number, block = p.block as number, stride = p.stride as number, count = p.count as number;
      need(off >= 0 && block > 0 && count > 0 && block <= stride && off + (count - 1) * stride + block <= srcW && t.shape[0] === block * count, `${count} blocks of ${block} every ${stride} from ${off} in rows of ${srcW}`);
      need(nElements(src(0)) >= (n / t.shape[0]!) * srcW, `input of ${nElements(src(0))} values for ${n / t.shape[0]!} rows of ${srcW}`);
      break;
    }
    case 'ssm_conv': {
      const st = src(0), x = src(1), w = src(2), kernel = t.params.kernel as number, ch = x.shape[0]!;
      need(kernel >= 2 && w.shape[0] === kernel && nElements(w) === kernel * ch, `weight [${w.shape}] for ${ch} channels of width ${kernel}`);
      need(nElements(st) === (kernel - 1) * ch && n === nElements(x), `state of ${nElements(st)} values / result of ${n} for ${ch} channels x ${kernel - 1}`);
      break;
    }
    case 'gated_delta_net': {
      const p = t.params, S = p.headDim as number, hk = p.nHeadK as number, hv = p.nHeadV as number, nTok = t.shape[1] ?? 1;
      need(S > 0 && hk > 0 && hv > 0 && hv % hk === 0 && t.shape[0] === S * hv, `result [${t.shape}] for ${hv} v-heads of ${S}`);
      need(nElements(src(0)) === S * S * hv, `state of ${nElements(src(0))} values for ${hv} heads of ${S} x ${S}`);
      need(nElements(src(1)) >= S * hk * nTok && nElements(src(2)) >= S * hk * nTok && nElements(src(3)) >= S * hv * nTok, `q/k/v of ${nElements(src(1))}/${nElements(src(2))}/${nElements(src(3))} values for ${nTok} tokens`);
      need(nElements(src(4)) >= hv * nTok && nElements(src(5)) >= hv * nTok, `g/beta of ${nElements(src(4))}/${nElements(src(5))} values for ${nTok} tokens of ${hv} heads`);
      break;
    }
    case 'attention': {
      const q = src(0), kc = src(1), vc = src(2), pos = src(3), p = t.params;
      const nHead = p.nHead as number, nKv = p.nHeadKv as number, dk = p.headDimK as number, dv = p.headDimV as number;
      const nTok = q.shape[1] ?? 1;
      need(nHead > 0 && nKv > 0 && nHead % nKv === 0, `${nHead} heads over ${nKv} kv heads`);
      need(q.shape[0] === nHead * dk && n === nTok * nHead * dv, `queries [${q.shape}] / result [${t.shape}] for ${nHead} heads of ${dk}/${dv}`);
      need(kc.shape[0] === nKv * dk && vc.shape[0] === nKv * dv && kc.shape[1] === vc.shape[1], `caches [${kc.shape}] and [${vc.shape}] for ${nKv} kv heads of ${dk}/${dv}`);
      need(pos.shape[0]! >= nTok, `${pos.shape[0]} positions for ${nTok} queries`);
      break;
    }
  }
}

/** A position outside [0, slots) would address memory outside the cache: the only per-token check, an integer compare. */
function positionError(t: TensorDesc, pos: number, slots: number): CpuRuntimeError {
  return new CpuRuntimeError('OUT_OF_BOUNDS', `cpu device: node ${t.name} (${t.op}): position ${pos} outside the cache's ${slots} slots`);
}

/**
 * rms_norm nodes immediately followed (in `nodes`) by a mul with a weight of one row length that is
 * the norm's only reader: rms id -> mul id, and -(mul id)-1 -> rms id.
 */
function rmsMulFusions(g: Graph, nodes: readonly number[], at: (id: number) => Placement): Map<number, number> {
  const readers = new Map<number, number>();
  for (const id of g.nodes) for (const s of g.tensors[id]!.src) readers.set(s, (readers.get(s) ?? 0) + 1);
  const fuse = new Map<number, number>();
  for (let i = 0; i + 1 < nodes.length; i++) {
    const t = g.tensors[nodes[i]!]!, m = g.tensors[nodes[i + 1]!]!;
    if (t.op !== 'rms_norm' || m.op !== 'mul' || m.src[0] !== t.id || readers.get(t.id) !== 1 || t.id === g.output) continue;
    const w = g.tensors[m.src[1]!]!;
    if (w.role !== 'weight' || typeId(w) !== GgmlType.F32 || nElements(w) !== t.params.rowLen) continue;
    // the arena may give the mul's result the bytes of the norm's input (dead after the norm): fusing
    // then works in place, but not over a partial overlap (a row written before it is read)
    const x = ptrOf(at(t.src[0]!)), y = ptrOf(at(m.id)), bytes = 4 * nElements(t);
    if (x !== y && x < y + bytes && y < x + bytes) continue;
    fuse.set(t.id, m.id);
    fuse.set(-m.id - 1, t.id);
  }
  return fuse;
}

/** byte ranges [a, a + na) and [b, b + nb) share a byte */
function overlaps(a: number, na: number, b: number, nb: number): boolean { return a < b + nb && b < a + na; }

/**
 * mul_mat_id nodes immediately followed (in `nodes`) by another of the same input, expert ids, weight type and
 * shape (the MoE FFN's up and gate): first id -> second id, and -(second id)-1 -> first id. The first's runner
 * computes both (one dispatch over both nodes' experts); the second's does nothing. Only where the WASM
 * kernels compute them.
 */
function mulMatIdPairs(g: Graph, nodes: readonly number[], fastNumerics: boolean): Map<number, number> {
  const pairs = new Map<number, number>();
  for (let i = 0; i + 1 < nodes.length; i++) {
    const a = g.tensors[nodes[i]!]!, b = g.tensors[nodes[i + 1]!]!;
    if (a.op !== 'mul_mat_id' || b.op !== 'mul_mat_id' || a.src[1] !== b.src[1] || a.src[2] !== b.src[2]) continue;
    const wa = g.tensors[a.src[0]!]!, wb = g.tensors[b.src[0]!]!;
    if (typeId(wa) !== typeId(wb) || wa.shape.join() !== wb.shape.join() || !wasmMatmulId(g, a, fastNumerics)) continue;
    pairs.set(a.id, b.id);
    pairs.set(-b.id - 1, a.id);
    i++;
  }
  return pairs;
}

/** The most cache slots any attention node of the graph has (bounds positions; sizes rope tables). */
function maxCacheSlots(g: Graph): number {
  let slots = 0;
  for (const id of g.nodes) {
    const t = g.tensors[id]!;
    if (t.op === 'attention') slots = Math.max(slots, g.tensors[t.src[1]!]!.shape[1] ?? 0);
  }
  return slots;
}

export class Compiler {
  constructor(private readonly rt: CpuRuntime, private readonly fastNumerics: boolean, private readonly profile: boolean) {}

  program(g: Graph, nodes: readonly number[], at: (id: number) => Placement): Program {
    for (const id of nodes) checkNode(g, g.tensors[id]!, at);
    const fuse = rmsMulFusions(g, nodes, at);
    const slots = maxCacheSlots(g);
    const idPairs = mulMatIdPairs(g, nodes, this.fastNumerics);
    let lastShare = -1;
    const run = nodes.map((id) => {
      const t = g.tensors[id]!;
      // mul_mat_id quantizes into the activation scratch too: the next mul_mat shares nothing
      if (t.op === 'mul_mat_id') lastShare = -1;
      const second = idPairs.get(-id - 1);
      if (second !== undefined) return this.profile ? profiled(profileKey(g, t) + ' (with the one before)', () => {}) : () => {};
      const first = idPairs.get(id);
      if (first !== undefined) {
        const fn = this.mulMatId(g, t, at, g.tensors[first]!)!;
        return this.profile ? profiled(profileKey(g, t) + ' x2', fn) : fn;
      }
      let shared = false;
      if (t.op === 'mul_mat') {
        const mm = wasmMatmul(g, t, this.fastNumerics);
        if (mm) { shared = mm.share >= 0 && mm.share === lastShare; lastShare = mm.share; }
      }
      const fn = this.node(g, t, at, shared, fuse, slots) ?? this.reference(g, t, at);
      return this.profile ? profiled(profileKey(g, t), fn) : fn;
    });
    return { placement: at, bytes: this.rt.memory.buffer.byteLength, run };
  }

  private f32(p: Placement, n: number): Float32Array { return new Float32Array(this.rt.memory.buffer, ptrOf(p), n); }
  private i32(p: Placement, n: number): Int32Array { return new Int32Array(this.rt.memory.buffer, ptrOf(p), n); }

  /**
   * The WASM runner of one node, or null: no WASM kernel reproduces the reference for this node.
   * `shared`: the previous WASM matmul of this program quantized the same activations, and no other
   * matmul runs in between (nothing else writes the runtime's activation scratch).
   */
  private node(g: Graph, t: TensorDesc, at: (id: number) => Placement, shared: boolean, fuse: Map<number, number>, slots: number): (() => void) | null {
    const rt = this.rt;
    const src = (i: number) => g.tensors[t.src[i]!]!;
    const p = (i: number) => ptrOf(at(t.src[i]!));
    const y = ptrOf(at(t.id));
    const n = nElements(t);
    switch (t.op) {
      case 'mul_mat': {
        const mm = wasmMatmul(g, t, this.fastNumerics);
        if (!mm) return null;
        const { wt, rows, cols, nTok } = mm;
        rt.reserve(nTok, cols);
        const wp = p(0), xp = p(1);
        if (oneRowOrder(wt, rows, nTok)) return () => rt.matmulRows(wt, wp, rows, cols, xp, nTok, y);
        if (t.src.length > 2) {
          // graph.ts inp_batch_rows: rows from br[i] on in the one-token order
          const br = this.i32(at(t.src[2]!), 2), i = t.params.batchRow as number;
          if (shared) return () => rt.matmulShared(wt, wp, rows, cols, nTok, y, br[i]!);
          return () => rt.matmul(wt, wp, rows, cols, xp, nTok, y, undefined, undefined, br[i]!);
        }
        if (shared) return () => rt.matmulShared(wt, wp, rows, cols, nTok, y);
        return () => rt.matmul(wt, wp, rows, cols, xp, nTok, y);
      }
      case 'mul_mat_id': return this.mulMatId(g, t, at);
      case 'soft_max': {
        const rowLen = t.shape[0]!, xv = this.f32(at(t.src[0]!), n), yv = this.f32(at(t.id), n), lanes = new Float64Array(16);
        return () => moe.softMax(xv, rowLen, n / rowLen, yv, lanes);
      }
      case 'top_k': {
        const a = src(0), rowLen = a.shape[0]!, nRows = nElements(a) / rowLen;
        const xv = this.f32(at(a.id), nElements(a)), idv = this.i32(at(t.id), n);
        return () => moe.topK(xv, rowLen, nRows, t.shape[0]!, idv);
      }
      case 'moe_weights': {
        const probs = src(0), ids = src(1), nExpert = probs.shape[0]!, k = t.shape[0]!, nTok = t.shape[1] ?? 1;
        const pv = this.f32(at(probs.id), nElements(probs)), idv = this.i32(at(ids.id), nElements(ids)), yv = this.f32(at(t.id), n);
        const norm = !!t.params.norm, sc = t.params.scale as number;
        return () => {
          for (let i = 0; i < k * nTok; i++) if (!(idv[i]! >= 0 && idv[i]! < nExpert)) throw new CpuRuntimeError('OUT_OF_BOUNDS', `cpu device: node ${t.name} (moe_weights): expert ${idv[i]} of ${nExpert}`);
          moe.moeWeights(pv, nExpert, idv, k, nTok, norm, sc, yv);
        };
      }
      case 'moe_sum': {
        const e = src(0), width = e.shape[0]!, k = e.shape[1]!, nTok = e.shape[2]!;
        // the WASM kernel: the same f32 operations per element (the output never overlaps the inputs it reads)
        const ep = ptrOf(at(e.id)), wp = ptrOf(at(t.src[1]!));
        if (!overlaps(ep, 4 * nElements(e), y, 4 * n) && !overlaps(wp, 4 * k * nTok, y, 4 * n)) return () => rt.moeSum(ep, wp, y, width, k, nTok);
        const ev = this.f32(at(e.id), nElements(e)), wv = this.f32(at(t.src[1]!), k * nTok), yv = this.f32(at(t.id), n);
        return () => moe.moeSum(ev, width, k, nTok, wv, yv);
      }
      case 'get_rows': {
        const w = src(0), ids = src(1), wt = typeId(w), cols = w.shape[0]!, rows = w.shape[1] ?? 1;
        const wp = p(0), idv = this.i32(at(ids.id), ids.shape[0]!);
        return () => {
          for (let i = 0; i < idv.length; i++) if (!(idv[i]! >= 0 && idv[i]! < rows)) throw new CpuRuntimeError('OUT_OF_BOUNDS', `cpu device: node ${t.name} (get_rows): row ${idv[i]} of a ${rows}-row table`);
          rt.getRows(wt, wp, cols, idv, y);
        };
      }
      case 'rms_norm': {
        const rowLen = t.params.rowLen as number, eps = t.params.eps as number, xp = p(0);
        // fused with the mul by its weight that follows (same f32 operations: (x*scale)*w)
        const mulId = fuse.get(t.id);
        if (mulId !== undefined) {
          const m = g.tensors[mulId]!, yy = ptrOf(at(mulId)), wp = ptrOf(at(m.src[1]!));
          return () => rt.rmsNorm(xp, yy, rowLen, n / rowLen, eps, wp);
        }
        return () => rt.rmsNorm(xp, y, rowLen, n / rowLen, eps);
      }
      case 'add': case 'mul': {
        if (t.op === 'mul' && fuse.has(-t.id - 1)) return () => {}; // done by the rms_norm before it
        const nb = nElements(src(1)), a = p(0), b = p(1);
        if (nb === n) return t.op === 'add' ? () => rt.add(a, b, y, n) : () => rt.mul(a, b, y, n);
        if (t.op === 'add') return () => rt.addRow(a, b, y, nb, n / nb);
        return () => rt.mulRow(a, b, y, nb, n / nb);
      }
      case 'scale': {
        const s = t.params.scale as number, xp = p(0);
        return () => rt.scale(xp, y, n, s);
      }
      case 'swiglu': {
        const a = p(0), b = p(1);
        return () => rt.siluMul(a, b, y, n);
      }
      case 'softcap': {
        const cap = t.params.cap as number, xp = p(0);
        return () => rt.softcap(xp, y, n, cap);
      }
      case 'view_cols': {
        const w = t.shape[0]!, srcW = src(0).shape[0]!, off = t.params.offset as number, xp = p(0), rows = n / w;
        return () => { for (let r = 0; r < rows; r++) rt.copy(xp + 4 * (r * srcW + off), y + 4 * r * w, 4 * w); };
      }
      case 'kv_store': {
        const cache = src(0), x = src(1);
        if (quantizedCache(cache)) return null; // (the reference store, bound below)
        const row = x.shape[0]!, nTok = x.shape[1]!, f16 = cache.dtype === 'f16', cacheSlots = cache.shape[1] ?? 1;
        const pos = this.i32(at(t.src[2]!), nTok), xp = p(1), cp = p(0);
        return () => {
          for (let i = 0; i < nTok; i++) {
            const s = pos[i]!;
            if (!(s >= 0 && s < cacheSlots)) throw positionError(t, s, cacheSlots);
            if (f16) rt.f32ToF16(xp + 4 * i * row, cp + 2 * s * row, row);
            else rt.copy(xp + 4 * i * row, cp + 4 * s * row, 4 * row);
          }
        };
      }
      case 'rope': {
        const pp = t.params;
        const nTok = t.shape[1]!, rowLen = t.shape[0]!, headDim = pp.headDim as number, nDims = pp.nDims as number, xp = p(0);
        rt.reserve(nTok, 0, nDims);
        const args: RopeArgs = {
          x: y, nTokens: nTok, nHead: rowLen / headDim, headDim, nDims,
          positions: this.i32(at(t.src[1]!), nTok), freqBase: pp.freqBase as number, freqScale: pp.freqScale as number, neox: !!pp.neox,
          freqFactors: t.src.length > 2 ? this.f32(at(t.src[2]!), nDims / 2) : undefined,
        };
        // the cos/sin rows of every position the caches can hold, computed now rather than while decoding
        if (slots > 0) rt.reserveRope(args, slots - 1);
        return () => { rt.copy(xp, y, 4 * n); rt.rope(args); };
      }
      case 'attention': {
        if (t.params.flash === true) return this.flashAttention(g, t, at);
        if (!wasmAttention(g, t)) return null;
        const pp = t.params, kc = src(1);
        const hd = pp.headDimK as number, nTok = t.shape[1]!, cacheSlots = kc.shape[1]!;
        const pos = this.i32(at(t.src[3]!), nTok);
        rt.reserveAttentionGgml(hd, cacheSlots - 1, nTok >= 2 ? pp.nHeadKv as number : 0, pp.nHead as number); // the cache's slots bound the positions
        const args: GgmlAttentionArgs = {
          q: p(0), k: p(1), v: p(2), out: y, nTokens: nTok, nHead: pp.nHead as number, nKvHead: pp.nHeadKv as number,
          headDim: hd, scale: pp.scale as number, positions: p(3), maxPos: 0, window: pp.window as number, softcap: (pp.softcap as number) || 0,
        };
        if (multiSequence(t)) return this.attentionSeqs(t, args, pos, cacheSlots);
        return () => {
          let maxPos = 0;
          for (let i = 0; i < nTok; i++) {
            const s = pos[i]!;
            if (!(s >= 0 && s < cacheSlots)) throw positionError(t, s, cacheSlots);
            if (s > maxPos) maxPos = s;
          }
          args.maxPos = maxPos;
          rt.attentionGgml(args);
        };
      }
      // the recurrent layers' ops with WASM kernels (the reference's numerics, glibc expf/logf included)
      case 'silu': { const xp = p(0), rowLen = t.params.rowLen as number; return () => rt.siluRows(xp, y, rowLen, n / rowLen); }
      case 'sigmoid': { const xp = p(0); return () => rt.sigmoid(xp, y, n); }
      case 'softplus': { const xp = p(0); return () => rt.softplus(xp, y, n); }
      case 'l2_norm': {
        const xp = p(0), rowLen = t.params.rowLen as number, eps = t.params.eps as number;
        return () => rt.l2Norm(xp, y, rowLen, n / rowLen, eps);
      }
      case 'ssm_conv': {
        const nTok = src(1).shape[1] ?? 1, ch = src(1).shape[0]!, kernel = t.params.kernel as number;
        const st = p(0), x = p(1), w = p(2);
        return () => rt.ssmConv(st, x, w, y, nTok, ch, kernel);
      }
      case 'gated_delta_net': {
        const pp = t.params, S = pp.headDim as number, hk = pp.nHeadK as number, hv = pp.nHeadV as number, nTok = t.shape[1] ?? 1;
        const st = p(0), q = p(1), k = p(2), v = p(3), g = p(4), beta = p(5);
        return () => rt.gatedDeltaNet(st, q, k, v, g, beta, y, nTok, S, hk, hv);
      }
      default:
        return null;
    }
  }

  /**
   * mul_mat_id in WASM: the batch's (token, slot) rows grouped by expert (ggml's order: tokens, then slots),
   * each expert's rows gathered into a scratch and multiplied by its matrix once, the results scattered back;
   * quantized weights: all experts in one matmulExperts dispatch (a one-token step's rows read in place).
   * Exact numerics (and float and Q4_K weights always): every row in the one-token kernel's order
   * (matmulRows), as llama.cpp computes experts; fast numerics: the batch kernels for the other quantized
   * experts. (Q4_K's GEMM rows moved qwen3moe-q4_k_m's router to another expert: 1.0e-2 off, 2e-6 without.)
   */
  private mulMatId(g: Graph, t: TensorDesc, at: (id: number) => Placement, t2?: TensorDesc): (() => void) | null {
    const mm = wasmMatmulId(g, t, this.fastNumerics);
    if (!mm) return null;
    const rt = this.rt, { wt, rows, cols, nExpert } = mm;
    const w = g.tensors[t.src[0]!]!, x = g.tensors[t.src[1]!]!, ids = g.tensors[t.src[2]!]!;
    const k = ids.shape[0]!, nTok = ids.shape[1] ?? 1, nRows = k * nTok, perSlot = x.shape.length === 3;
    const wp = ptrOf(at(w.id)), xp = ptrOf(at(x.id)), yp = ptrOf(at(t.id)), expertBytes = tensorBytes(w) / nExpert;
    // t2: a second mul_mat_id of the same input, ids and weight shape (mulMatIdPairs), computed alongside
    const wp2 = t2 ? ptrOf(at(t2.src[0]!)) : 0, yp2 = t2 ? ptrOf(at(t2.id)) : 0, pairs = t2 ? 2 : 1;
    const idv = this.i32(at(ids.id), nRows);
    const count = new Int32Array(nExpert), start = new Int32Array(nExpert), order = new Int32Array(nRows);
    const batchKernels = this.fastNumerics && typeId(w) !== GgmlType.F32 && typeId(w) !== GgmlType.F16 && typeId(w) !== GgmlType.Q4_K;
    const gatherBytes = 4 * nRows * (cols + pairs * rows);
    rt.reserve(nRows, cols);
    rt.gatherScratch(gatherBytes);
    const xRow = (j: number) => xp + 4 * cols * (perSlot ? j : Math.floor(j / k));
    // quantized experts: every selected expert of the node (and of t2) in one matmulExperts dispatch
    const experts = rt.expertsKernel(wt), nSlots = pairs * nRows;
    const slotW = new Int32Array(nSlots), slotX = new Int32Array(nSlots), slotY = new Int32Array(nSlots), slotN = new Int32Array(nSlots);
    if (experts) rt.reserveExperts(nSlots);
    const several = (we: number, y: number, c: number, s: number, xg: number, yg: number) => {
      for (let r = 0; r < c; r++) rt.copy(xRow(order[s + r]!), xg + 4 * r * cols, 4 * cols);
      if (batchKernels) rt.matmul(wt, we, rows, cols, xg, c, yg);
      else rt.matmulRows(wt, we, rows, cols, xg, c, yg);
      for (let r = 0; r < c; r++) rt.copy(yg + 4 * r * rows, y + 4 * rows * order[s + r]!, 4 * rows);
    };
    return () => {
      count.fill(0);
      let most = 0;
      for (let j = 0; j < nRows; j++) {
        const e = idv[j]!;
        if (!(e >= 0 && e < nExpert)) throw new CpuRuntimeError('OUT_OF_BOUNDS', `cpu device: node ${t.name} (mul_mat_id): expert id ${e} outside [0, ${nExpert})`);
        most = Math.max(most, ++count[e]!);
      }
      for (let e = 0, s = 0; e < nExpert; e++) { start[e] = s; s += count[e]!; }
      for (let j = 0; j < nRows; j++) order[start[idv[j]!]!++] = j;
      const xg = rt.gatherScratch(gatherBytes), yg = xg + 4 * nRows * cols, yg2 = yg + 4 * nRows * rows;
      if (experts && most === 1) {
        // one row per expert (a one-token step): the rows read in place, the results written in place
        let n = 0;
        for (let e = 0, s = 0; e < nExpert; e++) {
          if (count[e] === 0) continue;
          const j = order[s++]!, xi = perSlot ? j : Math.floor(j / k);
          slotW[n] = wp + e * expertBytes; slotX[n] = xi; slotY[n] = yp + 4 * rows * j; slotN[n++] = 1;
          if (t2) { slotW[n] = wp2 + e * expertBytes; slotX[n] = xi; slotY[n] = yp2 + 4 * rows * j; slotN[n++] = 1; }
        }
        rt.matmulExperts(wt, rows, cols, xp, perSlot ? nRows : nTok, slotW, slotX, slotY, slotN, n);
        return;
      }
      if (experts) {
        // the rows gathered in expert order (each expert's consecutive), one dispatch, the results scattered back
        for (let g = 0; g < nRows; g++) rt.copy(xRow(order[g]!), xg + 4 * g * cols, 4 * cols);
        let n = 0;
        for (let e = 0, s = 0; e < nExpert; e++) {
          const c = count[e]!;
          if (c === 0) continue;
          slotW[n] = wp + e * expertBytes; slotX[n] = s; slotY[n] = yg + 4 * rows * s; slotN[n++] = c;
          if (t2) { slotW[n] = wp2 + e * expertBytes; slotX[n] = s; slotY[n] = yg2 + 4 * rows * s; slotN[n++] = c; }
          s += c;
        }
        rt.matmulExperts(wt, rows, cols, xg, nRows, slotW, slotX, slotY, slotN, n);
        for (let g = 0; g < nRows; g++) {
          rt.copy(yg + 4 * rows * g, yp + 4 * rows * order[g]!, 4 * rows);
          if (t2) rt.copy(yg2 + 4 * rows * g, yp2 + 4 * rows * order[g]!, 4 * rows);
        }
        return;
      }
      // float weights: one matmulRows per expert
      for (let e = 0, s = 0; e < nExpert; e++) {
        const c = count[e]!;
        if (c === 0) continue;
        const we = wp + e * expertBytes;
        if (c === 1) {
          const j = order[s]!;
          rt.matmulRows(wt, we, rows, cols, xRow(j), 1, yp + 4 * rows * j);
          if (t2) rt.matmulRows(wt, wp2 + e * expertBytes, rows, cols, xRow(j), 1, yp2 + 4 * rows * j);
        } else {
          several(we, yp, c, s, xg, yg);
          if (t2) several(wp2 + e * expertBytes, yp2, c, s, xg, yg);
        }
        s += c;
      }
    };
  }

  /**
   * Flash attention in WASM (attn_flash): every token computed alike whatever the batch, so one dispatch serves a
   * prompt batch, a decode step and several sequences' tokens (seqStride: the positions input holds cache rows).
   */
  private flashAttention(g: Graph, t: TensorDesc, at: (id: number) => Placement): (() => void) | null {
    const q8 = wasmFlashAttentionQ8(g, t), q4 = q8 && g.tensors[t.src[1]!]!.dtype === GgmlType.Q4_0;
    if (!q8 && !wasmFlashAttention(g, t)) return null;
    const rt = this.rt, pp = t.params, cacheSlots = g.tensors[t.src[1]!]!.shape[1]!, nTok = t.shape[1]!;
    const hd = pp.headDimK as number, stride = (pp.seqStride as number | undefined) ?? 0;
    const pos = this.i32(at(t.src[3]!), nTok);
    if (q8) rt.reserveAttentionFlashQ8(hd);
    else rt.reserveAttentionFlash(hd);
    // its own first property, so V8 gives these objects their own hidden classes: sharing attn_ggml's (whose
    // multi-sequence runner adds fields later) made that runner allocate per step once both had run
    const args: GgmlAttentionArgs & { flash: true } = {
      flash: true, q: ptrOf(at(t.src[0]!)), k: ptrOf(at(t.src[1]!)), v: ptrOf(at(t.src[2]!)), out: ptrOf(at(t.id)), nTokens: nTok,
      nHead: pp.nHead as number, nKvHead: pp.nHeadKv as number, headDim: hd, scale: pp.scale as number,
      positions: ptrOf(at(t.src[3]!)), maxPos: 0, window: pp.window as number, softcap: (pp.softcap as number) || 0, seqStride: stride,
    };
    return () => {
      let pairs = 0, maxPos = 0;
      for (let i = 0; i < nTok; i++) {
        const s = pos[i]!;
        if (!(s >= 0 && s < cacheSlots)) throw positionError(t, s, cacheSlots);
        pairs += (stride > 0 ? s % stride : s) + 1;
        if (s > maxPos) maxPos = s;
      }
      args.maxPos = maxPos; args.pairs = pairs;
      if (q8) rt.attentionFlashQ8(args, q4);
      else rt.attentionFlash(args);
    };
  }

  /**
   * Attention over several sequences' regions (graph.ts seqStride), numerics as ref.attentionSeqs: tokens alone
   * in their sequence in the one-token order (consecutive ones in one dispatch), each sequence with several
   * tokens in the batch order over its own rows, widened once for all its runs of tokens.
   */
  private attentionSeqs(t: TensorDesc, args: GgmlAttentionArgs, rows: Int32Array, cacheSlots: number): () => void {
    const rt = this.rt, nTok = args.nTokens, stride = t.params.seqStride as number, nRegions = Math.floor(cacheSlots / stride);
    const q0 = args.q, out0 = args.out, pos0 = args.positions, tokBytes = args.nHead * args.headDim * 4;
    const count = new Int32Array(nRegions), maxRow = new Int32Array(nRegions), region = new Int32Array(nTok);
    const run = (i: number, j: number, batch: boolean, kvBase: number, maxPos: number, reuseKv: boolean, pairs: number) => {
      args.q = q0 + i * tokBytes; args.out = out0 + i * tokBytes; args.positions = pos0 + 4 * i; args.nTokens = j - i;
      args.batch = batch; args.kvBase = kvBase; args.maxPos = maxPos; args.reuseKv = reuseKv; args.pairs = pairs;
      rt.attentionGgml(args);
    };
    args.seqStride = stride;
    return () => {
      count.fill(0);
      for (let i = 0; i < nTok; i++) {
        const r = rows[i]!;
        if (!(r >= 0 && r < cacheSlots)) throw positionError(t, r, cacheSlots);
        const g = (r / stride) | 0;
        region[i] = g;
        if (count[g]++ === 0 || r > maxRow[g]!) maxRow[g] = r;
      }
      // tokens alone in their sequence (decode tokens): the one-token order, consecutive ones in one dispatch
      for (let i = 0; i < nTok;) {
        if (count[region[i]!]! !== 1) { i++; continue; }
        let j = i, pairs = 0;
        for (; j < nTok && count[region[j]!]! === 1; j++) pairs += rows[j]! % stride + 1;
        run(i, j, false, 0, cacheSlots - 1, false, pairs);
        i = j;
      }
      // sequences with several tokens: the batch order over their own rows, widened once per sequence
      for (let g = 0; g < nRegions; g++) {
        if (count[g]! < 2) continue;
        const base = g * stride, pairs = count[g]! * (maxRow[g]! - base + 1);
        let widened = false;
        for (let i = 0; i < nTok;) {
          if (region[i] !== g) { i++; continue; }
          let j = i + 1;
          while (j < nTok && region[j] === g) j++;
          run(i, j, true, base, maxRow[g]!, widened, pairs);
          widened = true;
          i = j;
        }
      }
    };
  }

  /** The reference kernel of a node on views of the same memory, bound once (views, scratch) where it runs while decoding. */
  private reference(g: Graph, t: TensorDesc, at: (id: number) => Placement): () => void {
    const src = (i: number) => g.tensors[t.src[i]!]!;
    const n = nElements(t);
    const out = () => this.f32(at(t.id), n);
    const in32 = (i: number) => this.f32(at(t.src[i]!), nElements(src(i)));
    switch (t.op) {
      case 'mul_mat': {
        const w = src(0), x = src(1), wt = typeId(w), cols = w.shape[0]!, rows = w.shape[1] ?? 1, nTok = x.shape[1] ?? 1;
        const wv = new Uint8Array(this.rt.memory.buffer, ptrOf(at(w.id)), tensorBytes(w)), xv = in32(1), yv = out();
        const act = new Uint8Array(mulMatScratchBytes(wt, cols, nTok));
        if (t.src.length > 2) {
          // rows from br[i] on one at a time (graph.ts inp_batch_rows), on row views made here
          const br = this.i32(at(t.src[2]!), 2), i = t.params.batchRow as number;
          const xr = Array.from({ length: nTok }, (_, r) => xv.subarray(r * cols, (r + 1) * cols));
          const yr = Array.from({ length: nTok }, (_, r) => yv.subarray(r * rows, (r + 1) * rows));
          return () => {
            const single = Math.max(0, Math.min(br[i]!, nTok));
            if (single > 0) mulMat(wt, wv, cols, rows, xv, single, yv, act);
            for (let r = single; r < nTok; r++) mulMat(wt, wv, cols, rows, xr[r]!, 1, yr[r]!, act);
          };
        }
        return () => mulMat(wt, wv, cols, rows, xv, nTok, yv, act);
      }
      case 'geglu': {
        const a = in32(0), b = in32(1), yv = out();
        return () => ref.geglu(a, b, n, yv);
      }
      case 'kv_store': {
        // a quantized cache: each row through its type's from_float (attention-kvq.ts)
        const cache = src(0), x = src(1), row = x.shape[0]!, nTok = x.shape[1] ?? 1, slots = cache.shape[1]!;
        const cv = new Uint8Array(this.rt.memory.buffer, ptrOf(at(cache.id)), tensorBytes(cache)), xv = in32(1), pos = this.i32(at(t.src[2]!), nTok);
        const type = cache.dtype as number;
        return () => {
          for (let i = 0; i < nTok; i++) if (!(pos[i]! >= 0 && pos[i]! < slots)) throw positionError(t, pos[i]!, slots);
          kvStoreQuant(cv, type, xv, row, nTok, pos);
        };
      }
      case 'attention': {
        const q = src(0), kc = src(1), vc = src(2), nTok = q.shape[1] ?? 1, slots = kc.shape[1]!;
        if (quantizedCache(kc) || quantizedCache(vc)) {
          const view = (c: TensorDesc) => kvCacheView(typeId(c), new Uint8Array(this.rt.memory.buffer, ptrOf(at(c.id)), tensorBytes(c)));
          const qv = in32(0), kv = view(kc), vv = view(vc), pos = this.i32(at(t.src[3]!), nTok), yv = out();
          const params = t.params as unknown as ref.AttentionParams, ws = kvqWorkspace(params);
          const stride = (t.params.seqStride as number | undefined) ?? 0;
          return () => {
            for (let i = 0; i < nTok; i++) if (!(pos[i]! >= 0 && pos[i]! < slots)) throw positionError(t, pos[i]!, slots);
            flashAttentionKvq(qv, nTok, pos, stride, kv, vv, params, yv, ws);
          };
        }
        const cache = (c: TensorDesc) => {
          const p = at(c.id), bytes = tensorBytes(c);
          return c.dtype === 'f16' ? new Uint16Array(this.rt.memory.buffer, ptrOf(p), bytes >> 1) : new Float32Array(this.rt.memory.buffer, ptrOf(p), bytes >> 2);
        };
        const qv = in32(0), kv = cache(kc), vv = cache(vc), pos = this.i32(at(t.src[3]!), nTok), yv = out();
        const params = t.params as unknown as ref.AttentionParams;
        const stride = (t.params.seqStride as number | undefined) ?? 0;
        if (t.params.flash === true) {
          const fws = ref.flashWorkspace(params);
          return () => {
            for (let i = 0; i < nTok; i++) if (!(pos[i]! >= 0 && pos[i]! < slots)) throw positionError(t, pos[i]!, slots);
            ref.flashAttention(qv, nTok, pos, stride, kv, vv, params, yv, fws);
          };
        }
        const ws = ref.attentionWorkspace(params, slots);
        if (stride > 0) {
          return () => {
            for (let i = 0; i < nTok; i++) if (!(pos[i]! >= 0 && pos[i]! < slots)) throw positionError(t, pos[i]!, slots);
            ref.attentionSeqs(qv, nTok, pos, stride, kv, vv, params, yv, ws);
          };
        }
        return () => {
          let maxPos = 0;
          for (let i = 0; i < nTok; i++) {
            const s = pos[i]!;
            if (!(s >= 0 && s < slots)) throw positionError(t, s, slots);
            if (s > maxPos) maxPos = s;
          }
          ref.attention(qv, nTok, pos, kv, vv, params, yv, maxPos, ws);
        };
      }
      case 'hadamard': {
        const nn = t.params.n as number, xv = in32(0), yv = out();
        return () => hadamardRows(xv, n, nn, yv);
      }
      // the recurrent layers' ops: views (and scratch) bound once
      case 'silu': { const a = in32(0), yv = out(), rowLen = t.params.rowLen as number; return () => ref.silu(a, n, rowLen, yv); }
      case 'sigmoid': { const a = in32(0), yv = out(); return () => ref.sigmoid(a, n, yv); }
      case 'softplus': { const a = in32(0), yv = out(); return () => ref.softplus(a, n, yv); }
      case 'scale_rows': { const a = in32(0), sv = in32(1), yv = out(), rowLen = t.shape[0]!; return () => ref.scaleRows(a, n, rowLen, sv, yv); }
      case 'l2_norm': {
        const a = in32(0), yv = out(), rowLen = t.params.rowLen as number, eps = t.params.eps as number;
        return () => ref.l2Norm(a, n, rowLen, eps, yv);
      }
      case 'view_blocks': {
        const a = in32(0), yv = out(), p = t.params, rows = n / t.shape[0]!, srcW = src(0).shape[0]!;
        const off = p.offset as number, block = p.block as number, stride = p.stride as number, count = p.count as number;
        return () => ref.viewBlocks(a, rows, srcW, off, block, stride, count, yv);
      }
      case 'ssm_conv': {
        const st = in32(0), x = in32(1), w = in32(2), yv = out(), nTok = src(1).shape[1] ?? 1, ch = src(1).shape[0]!, kernel = t.params.kernel as number;
        return () => ssmConv(st, x, w, nTok, ch, kernel, yv);
      }
      case 'gated_delta_net': {
        const p = { headDim: t.params.headDim as number, nHeadK: t.params.nHeadK as number, nHeadV: t.params.nHeadV as number };
        const st = in32(0), q = in32(1), k = in32(2), v = in32(3), gv = in32(4), beta = in32(5), yv = out(), nTok = t.shape[1] ?? 1;
        const delta = new Float32Array(p.headDim);
        return () => gatedDeltaNet(st, q, k, v, gv, beta, nTok, p, yv, delta);
      }
      default:
        return () => computeNode(g, t, at);
    }
  }
}

// The reference device: every op, in plain TypeScript, on host memory. Slow and obviously
// correct: the oracle the cpu/webgpu/npu backends are compared with.

import type { Backend, ComputeContext, Device, Placement } from '../backend.js';
import { hostBufferType } from '../host-buffer.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { nElements } from '../../graph/graph.js';
import * as k from './ops.js';
import { flashAttentionKvq, hadamardRows, kvCacheView, kvqWorkspace, kvStoreQuant } from './attention-kvq.js';
import { quantizedCache } from '../../graph/kv-type.js';
import { gatedDeltaNet, ssmConv } from './recurrent.js';
import * as moe from './moe.js';
import { mulMatScratchBytes } from './matmul.js';

const bufferType = hostBufferType('reference-host');

function f32(p: Placement, n: number): Float32Array {
  const v = p.buffer.hostView!(p.offset, p.nBytes);
  return new Float32Array(v.buffer, v.byteOffset, n);
}
function i32(p: Placement, n: number): Int32Array {
  const v = p.buffer.hostView!(p.offset, p.nBytes);
  return new Int32Array(v.buffer, v.byteOffset, n);
}
function bytes(p: Placement): Uint8Array {
  return p.buffer.hostView!(p.offset, p.nBytes);
}
/** ggml type id of a tensor's dtype ('f32' intermediates are read like F32 weights) */
function typeId(t: TensorDesc): number {
  return typeof t.dtype === 'number' ? t.dtype : t.dtype === 'f16' ? 1 : 0;
}
function cacheView(t: TensorDesc, p: Placement): Uint16Array | Float32Array {
  const v = bytes(p);
  return t.dtype === 'f16' ? new Uint16Array(v.buffer, v.byteOffset, v.byteLength >> 1) : new Float32Array(v.buffer, v.byteOffset, v.byteLength >> 2);
}

export function computeNode(g: Graph, t: TensorDesc, at: (id: number) => Placement): void {
  const src = (i: number) => g.tensors[t.src[i]!]!;
  const out = () => f32(at(t.id), nElements(t));
  const inF32 = (i: number) => f32(at(t.src[i]!), nElements(src(i)));
  switch (t.op) {
    case 'get_rows': {
      const w = src(0);
      k.getRows(typeId(w), bytes(at(w.id)), w.shape[0]!, i32(at(t.src[1]!), src(1).shape[0]!), t.shape[1]!, out());
      return;
    }
    case 'mul_mat': {
      const w = src(0);
      const x = src(1);
      const m = x.shape[1] ?? 1;
      const single = t.src.length > 2 ? i32(at(t.src[2]!), 2)[t.params.batchRow as number]! : m;
      k.mulMat(typeId(w), bytes(at(w.id)), w.shape[0]!, w.shape[1] ?? 1, inF32(1), m, out(), undefined, single);
      return;
    }
    case 'add': case 'mul':
      k.binary(t.op, inF32(0), nElements(t), inF32(1), nElements(src(1)), out());
      return;
    case 'scale': k.scale(inF32(0), nElements(t), t.params.scale as number, out()); return;
    case 'softcap': k.softcap(inF32(0), nElements(t), t.params.cap as number, out()); return;
    case 'rms_norm': k.rmsNorm(inF32(0), nElements(t), t.params.rowLen as number, t.params.eps as number, out()); return;
    case 'swiglu': k.swiglu(inF32(0), inF32(1), nElements(t), out()); return;
    case 'geglu': k.geglu(inF32(0), inF32(1), nElements(t), out()); return;
    case 'rope': {
      const p = t.params;
      const factors = t.src.length > 2 ? inF32(2) : null;
      k.rope(inF32(0), t.shape[1]!, t.shape[0]!, i32(at(t.src[1]!), t.shape[1]!), p.headDim as number, p.nDims as number, !!p.neox, p.freqBase as number, p.freqScale as number, factors, out());
      return;
    }
    case 'view_cols': {
      const a = inF32(0);
      const y = out();
      const w = t.shape[0]!, rows = nElements(t) / w, srcW = src(0).shape[0]!, off = t.params.offset as number;
      for (let r = 0; r < rows; r++) for (let i = 0; i < w; i++) y[r * w + i] = a[r * srcW + off + i]!;
      return;
    }
    case 'kv_store': {
      const cache = src(0);
      const x = src(1);
      if (quantizedCache(cache)) {
        kvStoreQuant(bytes(at(cache.id)), cache.dtype as number, inF32(1), x.shape[0]!, x.shape[1]!, i32(at(t.src[2]!), x.shape[1]!));
        return;
      }
      k.kvStore(cacheView(cache, at(cache.id)), inF32(1), x.shape[0]!, x.shape[1]!, i32(at(t.src[2]!), x.shape[1]!));
      return;
    }
    case 'attention': {
      const q = src(0);
      const kc = src(1), vc = src(2);
      const posT = src(3);
      const pos = i32(at(posT.id), posT.shape[0]!);
      const stride = (t.params.seqStride as number | undefined) ?? 0;
      if (t.params.flash === true && (quantizedCache(kc) || quantizedCache(vc))) {
        const params = t.params as unknown as k.AttentionParams;
        flashAttentionKvq(inF32(0), q.shape[1]!, pos, stride, kvCacheView(typeId(kc), bytes(at(kc.id))), kvCacheView(typeId(vc), bytes(at(vc.id))), params, out(), kvqWorkspace(params));
        return;
      }
      if (t.params.flash === true) {
        const params = t.params as unknown as k.AttentionParams;
        k.flashAttention(inF32(0), q.shape[1]!, pos, stride, cacheView(kc, at(kc.id)), cacheView(vc, at(vc.id)), params, out(), k.flashWorkspace(params));
        return;
      }
      if (stride > 0) {
        k.attentionSeqs(inF32(0), q.shape[1]!, pos, stride, cacheView(kc, at(kc.id)), cacheView(vc, at(vc.id)), t.params as unknown as k.AttentionParams, out());
        return;
      }
      let maxPos = 0;
      for (let i = 0; i < pos.length; i++) if (pos[i]! > maxPos) maxPos = pos[i]!;
      k.attention(inF32(0), q.shape[1]!, pos, cacheView(kc, at(kc.id)), cacheView(vc, at(vc.id)), t.params as unknown as k.AttentionParams, out(), maxPos);
      return;
    }
    case 'hadamard': {
      const n = t.params.n as number;
      hadamardRows(inF32(0), nElements(t), n, out());
      return;
    }
    case 'silu': k.silu(inF32(0), nElements(t), t.params.rowLen as number, out()); return;
    case 'sigmoid': k.sigmoid(inF32(0), nElements(t), out()); return;
    case 'softplus': k.softplus(inF32(0), nElements(t), out()); return;
    case 'scale_rows': k.scaleRows(inF32(0), nElements(t), t.shape[0]!, inF32(1), out()); return;
    case 'l2_norm': k.l2Norm(inF32(0), nElements(t), t.params.rowLen as number, t.params.eps as number, out()); return;
    case 'view_blocks': {
      const p = t.params;
      k.viewBlocks(inF32(0), nElements(t) / t.shape[0]!, src(0).shape[0]!, p.offset as number, p.block as number, p.stride as number, p.count as number, out());
      return;
    }
    case 'ssm_conv': {
      const x = src(1);
      ssmConv(inF32(0), inF32(1), inF32(2), x.shape[1] ?? 1, x.shape[0]!, t.params.kernel as number, out());
      return;
    }
    case 'gated_delta_net': {
      const p = t.params as unknown as { headDim: number; nHeadK: number; nHeadV: number };
      gatedDeltaNet(inF32(0), inF32(1), inF32(2), inF32(3), inF32(4), inF32(5), t.shape[1] ?? 1, p, out(), new Float32Array(p.headDim));
      return;
    }
    case 'soft_max': moe.softMax(inF32(0), t.shape[0]!, nElements(t) / t.shape[0]!, out(), lanes); return;
    case 'top_k': {
      const a = src(0);
      moe.topK(inF32(0), a.shape[0]!, nElements(a) / a.shape[0]!, t.shape[0]!, i32(at(t.id), nElements(t)));
      return;
    }
    case 'moe_weights': {
      const probs = src(0), ids = src(1);
      moe.moeWeights(inF32(0), probs.shape[0]!, i32(at(ids.id), nElements(ids)), t.shape[0]!, t.shape[1] ?? 1, !!t.params.norm, t.params.scale as number, out());
      return;
    }
    case 'mul_mat_id': {
      const w = src(0), x = src(1), ids = src(2), wt = typeId(w);
      const cols = w.shape[0]!, rows = w.shape[1]!, nB = x.shape.length === 3 ? x.shape[1]! : 1;
      const kk = ids.shape[0]!, nTok = ids.shape[1] ?? 1;
      moe.mulMatId(wt, bytes(at(w.id)), cols, rows, w.shape[2]!, inF32(1), nB, i32(at(ids.id), kk * nTok), kk, nTok, out(), new Uint8Array(mulMatScratchBytes(wt, cols, 1)), t.name);
      return;
    }
    case 'moe_sum': {
      const y = src(0);
      moe.moeSum(inF32(0), y.shape[0]!, y.shape[1]!, y.shape[2]!, inF32(1), out());
      return;
    }
    case 'none': return;
  }
}

const lanes = new Float64Array(16);

export function referenceDevice(): Device {
  const device: Device = {
    name: 'reference',
    kind: 'cpu',
    description: 'plain TypeScript reference kernels (the numerics oracle)',
    memory: () => ({ free: 0, total: 0 }),
    bufferType: () => bufferType,
    supportsOp: () => true,
    multiSequence: true,
    flashAttention: 'supported',
    prefersOp: () => true,
    createBackend(): Backend {
      return {
        device,
        compute(ctx: ComputeContext, nodes: readonly number[]) {
          for (const id of nodes) computeNode(ctx.graph, ctx.graph.tensors[id]!, ctx.placement);
        },
      };
    },
  };
  return device;
}

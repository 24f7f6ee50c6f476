// The simulated NPU's clock: a per-engine-call roofline plus fixed costs, with presets fitted to
// published figures (../shared/research/npu-anchors.md). No NPU is attached to our machines, so
// this is where "how fast would it run there" comes from; the mock runtime only computes the values.
//
//   engine call  = max(ops / matmulOps, deviceBytes / dramBytesPerS) + callS + nOps * opS
//   one compute  = sum of its engine calls + crossingS (when any) + per host<->device copy:
//                  bytes / linkBytesPerS + transferS
//
// ops: 2*k*n*m per mul_mat (weight [k, n], m tokens), 2*(dk+dv)*nHead*slots*m per attention (a
// static engine attends over every slot of the KV cache it was compiled for, masked), one op per
// element for the rest. deviceBytes: the engine's int8 weights (rows padded to 36, a 2-byte scale per
// 32; so Q4_0 costs as much as Q8_0: the AX8850 layout is int8), the K/V cache read by attention and
// written by kv_store (f16), and the group's f32 activations in and out. The formula and its
// calibration are documented in docs/sim-npu.md.

import type { Graph, TensorDesc } from '../../graph/graph.js';
import { nElements } from '../../graph/graph.js';

export interface NpuTarget {
  name: string;
  description: string;
  /** peak int8 ops/s (reported by `devices`, not used for time: nothing reaches it) */
  peakOps: number;
  /** achieved int8 ops/s on transformer matmuls */
  matmulOps: number;
  /** peak and achieved DRAM bytes/s */
  dramPeakBytesPerS: number;
  dramBytesPerS: number;
  /** fixed cost per engine call (launch, sync inside the device), seconds */
  callS: number;
  /** cost per op inside an engine (op dispatch on a graph-executing NPU), seconds */
  opS: number;
  /** cost per CPU<->NPU crossing (one per compute that runs engines), seconds */
  crossingS: number;
  /** host link bytes/s (Infinity: shared memory, no copies) */
  linkBytesPerS: number;
  /** fixed cost per host<->device copy, seconds */
  transferS: number;
  /** device memory the target's runtime reports (for `devices`; capacity comes from --npu-mem) */
  memBytes: number;
}

export const NPU_TARGETS: Record<string, NpuTarget> = {
  // Axera AX8850 on an M.2 card behind a Raspberry Pi 5 (PCIe Gen2 x1). 24 TOPS int8 peak; the
  // transformer GEMM ceiling is ~2.6 TOPS; LPDDR4x 34.1 GB/s peak, ~25 GB/s measured weight streaming;
  // ~457 us fixed per engine call; Gen2 x1 measured at 500 MB/s; pinned staging ~50 us per copy (the
  // anchors' assumption: ~1 ms unpinned, and the open stack pins).
  ax8850: {
    name: 'ax8850',
    description: 'Axera AX8850 (24 TOPS int8 peak, ~2.6 achieved; LPDDR4x 34 GB/s, ~25 achieved; 457 us/engine call; PCIe Gen2 x1 0.5 GB/s)',
    peakOps: 24e12, matmulOps: 2.6e12, dramPeakBytesPerS: 34.1e9, dramBytesPerS: 25e9,
    callS: 457e-6, opS: 0, crossingS: 0, linkBytesPerS: 0.5e9, transferS: 50e-6, memBytes: 7040 * 2 ** 20,
  },
  // Snapdragon 8 Elite class Hexagon HTP: ~45 TOPS claimed, ~5 achieved on an HMX-class matmul path;
  // LPDDR5X 84.8 GB/s peak, ~39 achieved; 11-35 us per op inside a batch (we take 20); 0.3-0.5 ms
  // per CPU<->NPU crossing (we take 0.4); memory shared with the CPU: no copies, no link time.
  htp: {
    name: 'htp',
    description: 'Snapdragon 8 Elite class HTP (~45 TOPS peak, ~5 achieved; 85 GB/s, ~39 achieved; 20 us/op; 0.4 ms per crossing; shared memory)',
    peakOps: 45e12, matmulOps: 5e12, dramPeakBytesPerS: 84.8e9, dramBytesPerS: 39e9,
    callS: 0, opS: 20e-6, crossingS: 400e-6, linkBytesPerS: Infinity, transferS: 0, memBytes: 2048 * 2 ** 20,
  },
};

export const DEFAULT_NPU_TARGET = 'ax8850';

export function npuTarget(name: string): NpuTarget {
  const t = NPU_TARGETS[name];
  if (!t) throw Object.assign(new Error(`unknown --npu-target "${name}" (available: ${Object.keys(NPU_TARGETS).join(', ')})`), { code: 'USAGE' });
  return t;
}

/** Device bytes of one weight matrix in an engine: int8 rows padded to 36, a 2-byte scale per 32 weights. */
export function engineWeightBytes(cols: number, rows: number): number {
  return rows * (Math.ceil(cols / 36) * 36 + 2 * Math.ceil(cols / 32));
}

const KV_ELEMENT_BYTES = 2;

export interface CallCost {
  ops: number;
  /** DRAM bytes the call moves on the device */
  bytes: number;
  /** ops run inside the engine */
  nOps: number;
  seconds: number;
  /** which side of the roofline set the time */
  bound: 'compute' | 'memory';
}

/** The work of one engine call: the nodes of one group at the graph's token count. */
export function groupWork(g: Graph, nodes: readonly number[]): { ops: number; bytes: number; nOps: number } {
  const inGroup = new Set(nodes);
  let ops = 0, bytes = 0;
  const counted = new Set<number>();
  const io = (t: TensorDesc) => {
    if (counted.has(t.id)) return;
    counted.add(t.id);
    if (t.role === 'intermediate' || t.role === 'output' || t.role === 'input') bytes += 4 * nElements(t);
  };
  for (const id of nodes) {
    const t = g.tensors[id]!;
    const src = (i: number) => g.tensors[t.src[i]!]!;
    switch (t.op) {
      case 'mul_mat': {
        const w = src(0), k = w.shape[0]!, n = w.shape[1] ?? 1, m = src(1).shape[1] ?? 1;
        ops += 2 * k * n * m;
        if (w.role === 'weight') bytes += engineWeightBytes(k, n);
        break;
      }
      case 'attention': {
        const p = t.params, slots = src(1).shape[1]!, m = t.shape[1]!;
        const dk = p.headDimK as number, dv = p.headDimV as number, nHead = p.nHead as number, nKv = p.nHeadKv as number;
        ops += 2 * (dk + dv) * nHead * slots * m;
        bytes += slots * nKv * (dk + dv) * KV_ELEMENT_BYTES;
        break;
      }
      case 'kv_store':
        bytes += nElements(src(1)) * KV_ELEMENT_BYTES;
        ops += nElements(src(1));
        break;
      default:
        ops += nElements(t);
        for (const s of t.src) { const st = g.tensors[s]!; if (st.role === 'weight') bytes += 4 * nElements(st); }
    }
    // activations entering or leaving the group
    for (const s of t.src) if (!inGroup.has(s)) io(g.tensors[s]!);
  }
  for (const id of nodes) io(g.tensors[id]!);
  return { ops, bytes, nOps: nodes.length };
}

export function callCost(target: NpuTarget, work: { ops: number; bytes: number; nOps: number }): CallCost {
  const tc = work.ops / target.matmulOps, tm = work.bytes / target.dramBytesPerS;
  return { ...work, seconds: Math.max(tc, tm) + target.callS + work.nOps * target.opS, bound: tc >= tm ? 'compute' : 'memory' };
}

/** Seconds one host<->device copy of `bytes` takes (0 on shared memory). */
export function transferSeconds(target: NpuTarget, bytes: number): number {
  if (bytes <= 0 || target.linkBytesPerS === Infinity) return 0;
  return bytes / target.linkBytesPerS + target.transferS;
}

/** Groups of a graph a whole-layer NPU takes: nodes with group 'blk.N' or 'output', in execution order. */
export function layerGroups(g: Graph): { name: string; nodes: number[] }[] {
  const byName = new Map<string, number[]>();
  for (const id of g.nodes) {
    const gr = g.tensors[id]!.group;
    if (gr === undefined || !(gr === 'output' || gr.startsWith('blk.'))) continue;
    let l = byName.get(gr);
    if (!l) byName.set(gr, (l = []));
    l.push(id);
  }
  return [...byName].map(([name, nodes]) => ({ name, nodes }));
}

export interface PhasePrediction {
  /** simulated seconds of one evaluation of the graph with every layer group on the NPU */
  seconds: number;
  tokensPerS: number;
  calls: number;
  /** host<->device bytes: the hidden state in, the logits out */
  linkBytes: number;
  breakdown: { name: string; seconds: number; bound: 'compute' | 'memory' }[];
}

/**
 * Simulated time of one evaluation of `g` (nTokens tokens) with every layer group and the output group
 * on the NPU as one compute: engines back to back, the hidden state crossing in once and the logits
 * out once, the KV cache staying on the device. The calibration of the presets uses this.
 */
export function predictGraph(target: NpuTarget, g: Graph): PhasePrediction {
  const breakdown: PhasePrediction['breakdown'] = [];
  let seconds = 0;
  const groups = layerGroups(g);
  for (const gr of groups) {
    const c = callCost(target, groupWork(g, gr.nodes));
    breakdown.push({ name: gr.name, seconds: c.seconds, bound: c.bound });
    seconds += c.seconds;
  }
  // the hidden state enters the first group; the logits leave the last
  const first = groups[0] ? g.tensors[groups[0].nodes[0]!]! : undefined;
  const inBytes = first ? first.src.map((s) => g.tensors[s]!).filter((t) => t.role === 'intermediate').reduce((a, t) => a + 4 * nElements(t), 0) : 0;
  const outBytes = 4 * nElements(g.tensors[g.output]!);
  const linkBytes = inBytes + outBytes;
  seconds += target.crossingS + transferSeconds(target, inBytes) + transferSeconds(target, outBytes);
  return { seconds, tokensPerS: g.nTokens / seconds, calls: groups.length, linkBytes, breakdown };
}

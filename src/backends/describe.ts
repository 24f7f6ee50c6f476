// What a device claims, for `devices [--json]`: from Device.describe() when the device has it, else
// derived by asking supportsOp about one small probe node per op (weight ops once per weight type).
import type { Device, DeviceMemory } from './backend.js';
import { GraphBuilder, type Graph, type Op, type TensorDesc } from '../graph/graph.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../gguf/ggml-types.js';
import { isSupportedType } from '../quant/dequantize.js';

/** Every compute op of the graph op set (the Record makes the compiler flag an op added to Op but not here). */
const OP_SET: Record<Exclude<Op, 'none'>, true> = {
  get_rows: true, mul_mat: true, add: true, mul: true, scale: true, rms_norm: true, rope: true,
  swiglu: true, geglu: true, softcap: true, view_cols: true, kv_store: true, attention: true,
  view_blocks: true, scale_rows: true, silu: true, sigmoid: true, softplus: true, l2_norm: true, ssm_conv: true, gated_delta_net: true,
  soft_max: true, top_k: true, moe_weights: true, mul_mat_id: true, moe_sum: true, hadamard: true,
};
export const COMPUTE_OPS = Object.keys(OP_SET) as Exclude<Op, 'none'>[];

/**
 * Weight types the loader reads (every type with a row decoder), in ggml id order; Q8_1 and Q8_K are
 * ggml's activation types, never stored in model files.
 */
export const WEIGHT_TYPE_IDS: number[] = Array.from({ length: 64 }, (_, i) => i)
  .filter((t) => ggmlTypeInfo(t) && isSupportedType(t) && t !== GgmlType.Q8_1 && t !== GgmlType.Q8_K);

/** One row of `devices --json` (field names are a contract: README, docs/devices.md). */
export interface DeviceInfo {
  name: string;
  kind: string;
  description: string;
  /** the device --device defaults to */
  default: boolean;
  /** 'builtin' or the plug-in path that registered it */
  source: string;
  memory: DeviceMemory;
  /** ops it computes (the graph op set's names) */
  ops: string[];
  /** weight types (ggml names) it computes mul_mat or get_rows on */
  weight_types: string[];
  /** token counts it runs graphs at; null: any batch size */
  static_shapes: number[] | null;
  /** 'groups': takes whole node groups (claimGroups); 'ops': scheduled op by op */
  claims: 'ops' | 'groups';
  /** 'ok', or what is wrong */
  status: string;
}

/** Probe nodes: one per (op, weight type) at one token count, each in its own tiny graph. */
function probes(nTok: number): { op: string; type?: number; graph: Graph; node: TensorDesc }[] {
  const out: { op: string; type?: number; graph: Graph; node: TensorDesc }[] = [];
  const k = 256, n = 64, hd = 64, nHead = 4, nHeadKv = 2, nCtx = Math.max(256, nTok);
  const one = (op: string, build: (b: GraphBuilder) => TensorDesc, type?: number) => {
    const b = new GraphBuilder();
    b.setGroup('blk.0');
    const node = build(b);
    out.push({ op, type, node, graph: b.finish({ tokens: -1, positions: -1, outputRows: -1 }, node, nTok, nTok) });
  };
  for (const t of WEIGHT_TYPE_IDS) {
    one('mul_mat', (b) => b.mulMat(b.leaf('w', 'weight', t, [k, n]), b.leaf('x', 'input', 'f32', [k, nTok])), t);
    one('get_rows', (b) => b.getRows(b.leaf('w', 'weight', t, [k, n]), b.leaf('ids', 'input', 'i32', [nTok])), t);
  }
  const x = (b: GraphBuilder, w = k) => b.leaf('x', 'input', 'f32', [w, nTok]);
  one('add', (b) => b.addT(x(b), x(b)));
  one('mul', (b) => b.mul(x(b), b.leaf('w', 'weight', 'f32', [k])));
  one('scale', (b) => b.scale(x(b), 0.5));
  one('rms_norm', (b) => b.rmsNorm(x(b), 1e-6));
  one('rope', (b) => b.rope(x(b, hd * nHead), b.leaf('pos', 'input', 'i32', [nTok]), { headDim: hd, nDims: hd, neox: false, freqBase: 10000, freqScale: 1 }));
  one('swiglu', (b) => b.swiglu(x(b), x(b)));
  one('geglu', (b) => b.geglu(x(b), x(b)));
  one('softcap', (b) => b.softcap(x(b), 30));
  one('soft_max', (b) => b.softMax(x(b, 8)));
  one('top_k', (b) => b.topK(x(b, 8), 2));
  one('moe_weights', (b) => b.moeWeights(x(b, 8), b.leaf('ids', 'input', 'i32', [2, nTok]), { norm: true, scale: 0 }));
  for (const t of WEIGHT_TYPE_IDS) one('mul_mat_id', (b) => b.mulMatId(b.leaf('w', 'weight', t, [k, n, 8]), x(b), b.leaf('ids', 'input', 'i32', [2, nTok])), t);
  one('moe_sum', (b) => b.moeSum(b.leaf('y', 'input', 'f32', [k, 2, nTok]), b.leaf('w', 'input', 'f32', [2, nTok])));
  one('view_cols', (b) => b.viewCols(x(b), 64, 64));
  one('kv_store', (b) => b.kvStore(b.leaf('kc', 'state', 'f16', [hd * nHeadKv, nCtx]), x(b, hd * nHeadKv), b.leaf('pos', 'input', 'i32', [nTok])));
  one('attention', (b) => {
    const pos = b.leaf('pos', 'input', 'i32', [nTok]);
    const kc = b.leaf('kc', 'state', 'f16', [hd * nHeadKv, nCtx]), vc = b.leaf('vc', 'state', 'f16', [hd * nHeadKv, nCtx]);
    return b.attention(x(b, hd * nHead), kc, vc, pos, { nHead, nHeadKv, headDimK: hd, headDimV: hd, scale: 0.125, softcap: 0, window: 0 }, []);
  });
  one('view_blocks', (b) => b.viewBlocks(x(b), 32, 32, 64, 4));
  one('hadamard', (b) => b.hadamard(x(b), 64));
  one('silu', (b) => b.silu(x(b), hd));
  one('scale_rows', (b) => b.scaleRows(x(b), x(b, 1)));
  one('sigmoid', (b) => b.sigmoid(x(b)));
  one('softplus', (b) => b.softplus(x(b)));
  one('l2_norm', (b) => b.l2Norm(x(b), 1e-6, hd));
  one('ssm_conv', (b) => b.ssmConv(b.leaf('conv', 'state', 'f32', [3 * k]), x(b), b.leaf('w', 'weight', 'f32', [4, k])));
  one('gated_delta_net', (b) => {
    const S = 32, hk = 2, hv = 4;
    return b.gatedDeltaNet(b.leaf('ssm', 'state', 'f32', [S * S * hv]), x(b, S * hk), x(b, S * hk), x(b, S * hv), x(b, hv), x(b, hv), { headDim: S, nHeadK: hk, nHeadV: hv });
  });
  return out;
}

/** Ops and weight types `device` claims, asked of supportsOp at each of its static shapes (or 1 and 32 tokens). */
export function probeClaims(device: Device): { ops: string[]; weightTypes: string[] } {
  const ops = new Set<string>();
  const types = new Set<number>();
  for (const nTok of device.staticShapes ?? [1, 32]) {
    for (const p of probes(nTok)) {
      if (!device.supportsOp(p.node, p.graph)) continue;
      ops.add(p.op);
      if (p.type !== undefined) types.add(p.type);
    }
  }
  return { ops: COMPUTE_OPS.filter((o) => ops.has(o)), weightTypes: WEIGHT_TYPE_IDS.filter((t) => types.has(t)).map(ggmlTypeName) };
}

/** The `devices --json` row of a created device. */
export function describeDevice(device: Device, extra: { default: boolean; source: string }): DeviceInfo {
  let status = 'ok';
  let ops: string[] = [];
  let weightTypes: string[] = [];
  let shapes = device.staticShapes;
  try {
    if (device.describe) {
      const d = device.describe();
      ops = [...d.ops];
      weightTypes = [...d.weightTypes];
      shapes = d.staticShapes ?? shapes;
      status = d.status;
    } else {
      ({ ops, weightTypes } = probeClaims(device));
    }
  } catch (e) {
    status = `error: ${(e as Error).message ?? String(e)}`;
  }
  let memory: DeviceMemory = { free: 0, total: 0 };
  try { memory = device.memory(); } catch (e) { status = `error: memory(): ${(e as Error).message ?? String(e)}`; }
  return {
    name: device.name,
    kind: device.kind,
    description: device.description,
    default: extra.default,
    source: extra.source,
    memory,
    ops,
    weight_types: weightTypes,
    static_shapes: shapes ? [...shapes] : null,
    claims: device.claimGroups ? 'groups' : 'ops',
    status,
  };
}

/**
 * Whether `device` can run a whole model alone: it claims every op at every weight type, op by op, at any
 * batch size. A device that cannot (a per-op plug-in claiming a subset, an accelerator) runs ahead of a
 * host device that takes the rest.
 */
export function runsEverything(device: Device): boolean {
  if (device.claimGroups || device.staticShapes) return false;
  const c = probeClaims(device);
  return c.ops.length === COMPUTE_OPS.length && c.weightTypes.length === WEIGHT_TYPE_IDS.length;
}

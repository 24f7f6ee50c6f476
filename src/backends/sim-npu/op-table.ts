// What the simulated NPU claims: the ops whole transformer-layer groups need, each gated on types
// and shapes, built once per device (supportsOp is a table lookup plus a few field checks).

import type { Graph, Op, TensorDesc } from '../../graph/graph.js';
import { GgmlType, ggmlTypeName } from '../../gguf/ggml-types.js';
import { isSupportedType } from '../../quant/dequantize.js';
import { ENGINE_OPS, npuSupportsNode } from '../npu/op-set.js';

type Check = (t: TensorDesc, g: Graph) => boolean;

/** Engines are whole layers: a node outside a 'blk.N' or 'output' group is never run here. */
export const inLayerGroup = (t: TensorDesc) => t.group !== undefined && (t.group === 'output' || t.group.startsWith('blk.'));

// activations are 'f32'; f32 weights (norm gains, biases) carry the ggml type id
const isF32 = (t: TensorDesc) => t.dtype === 'f32' || t.dtype === GgmlType.F32;
const f32Srcs = (t: TensorDesc, g: Graph) => t.src.every((s) => isF32(g.tensors[s]!) || g.tensors[s]!.role === 'input');

/** The op set an engine may contain: the encoder's (src/backends/npu/op-set.ts), before per-device exclusions. */
export const NPU_OPS: readonly Op[] = ENGINE_OPS;

/** Weight types that map to the engines' int8 exactly (same integers, same per-32 scales). */
export const NPU_EXACT_WEIGHT_TYPES: readonly number[] = [GgmlType.Q8_0, GgmlType.Q4_0];

/**
 * Weight types the engines take: the exact ones first, then every other type gguf-edge decodes, which
 * the encoder requantizes to int8 per 32 (as ggml's Q8_0) and reports the error of.
 */
export const NPU_WEIGHT_TYPES: readonly number[] = [
  ...NPU_EXACT_WEIGHT_TYPES,
  // (Q8_1/Q8_K are ggml's activation types, never a model's weights)
  ...Object.values(GgmlType).filter((id) => isSupportedType(id) && !NPU_EXACT_WEIGHT_TYPES.includes(id) && id !== GgmlType.Q8_1 && id !== GgmlType.Q8_K),
];

export interface OpTable {
  readonly ops: readonly Op[];
  readonly weightTypes: readonly number[];
  supports(t: TensorDesc, g: Graph): boolean;
  /** can engines hold a weight of this GGUF type? */
  takesWeightType(type: number): boolean;
  /** why a node is not supported (for errors and `devices`), or undefined when it is */
  reason(t: TensorDesc, g: Graph): string | undefined;
}

export function buildOpTable(opts: { ops?: readonly Op[]; weightTypes?: readonly number[]; disabledOps?: readonly Op[] } = {}): OpTable {
  const weightTypes = new Set(opts.weightTypes ?? NPU_WEIGHT_TYPES);
  const disabled = new Set(opts.disabledOps ?? []);
  const ops = (opts.ops ?? NPU_OPS).filter((o) => !disabled.has(o));
  const checks = new Map<Op, Check>();
  const all: Record<string, Check> = {
    // a weight matrix in an engine type times f32 activations (quantized to int8 per 32 on the device)
    // (a weight's graph dtype may be a host device's repacked layout id: compileGroup checks the file's
    // type, which the request carries; here any block-of-32 row passes)
    mul_mat: (t, g) => {
      const w = g.tensors[t.src[0]!]!;
      return w.role === 'weight' && typeof w.dtype === 'number' && (weightTypes.has(w.dtype) || !isSupportedType(w.dtype)) &&
        w.shape[0]! % 32 === 0 && isF32(g.tensors[t.src[1]!]!);
    },
    add: f32Srcs, mul: f32Srcs, scale: f32Srcs, rms_norm: f32Srcs, swiglu: f32Srcs, geglu: f32Srcs, softcap: f32Srcs, view_cols: f32Srcs,
    rope: (t, g) => isF32(g.tensors[t.src[0]!]!),
    // the K/V cache in f16, as the engines keep it
    kv_store: (t, g) => g.tensors[t.src[0]!]!.dtype === 'f16',
    attention: (t, g) => g.tensors[t.src[1]!]!.dtype === 'f16' && g.tensors[t.src[2]!]!.dtype === 'f16',
    // row selection of activations (the last layer keeps only the output rows); embedding lookups stay on the host
    get_rows: (t, g) => isF32(g.tensors[t.src[0]!]!) && g.tensors[t.src[0]!]!.role !== 'weight',
  };
  for (const o of ops) if (all[o]) checks.set(o, all[o]!);
  const reason = (t: TensorDesc, g: Graph): string | undefined => {
    if (!inLayerGroup(t)) return `${t.op} (${t.name}) is outside the layer groups (engines run whole 'blk.N' and 'output' groups only)`;
    const c = checks.get(t.op);
    if (!c) return disabled.has(t.op) ? `op ${t.op} is disabled on this device` : `op ${t.op} is not in the NPU op set`;
    if (c(t, g) && npuSupportsNode(t, g)) return undefined;
    if (t.op === 'mul_mat') {
      const w = g.tensors[t.src[0]!]!;
      return `mul_mat weight ${w.name} of type ${typeof w.dtype === 'number' ? ggmlTypeName(w.dtype) : w.dtype} (engines take ${[...weightTypes].map(ggmlTypeName).join(', ')})`;
    }
    return `${t.op} (${t.name}) with these types`;
  };
  return {
    ops, weightTypes: [...weightTypes],
    supports: (t, g) => inLayerGroup(t) && (checks.get(t.op)?.(t, g) ?? false) && npuSupportsNode(t, g),
    takesWeightType: (type) => weightTypes.has(type),
    reason,
  };
}

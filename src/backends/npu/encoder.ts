// Our own NPU engine encoder: one node group of the graph at one static token count -> one engine blob
// (src/backends/npu/engine-format.ts) with the group's op program, its constants (norm weights, biases,
// rope factors, f32) and its matmul weights as int8 nibble planes with per-32 f16 scales
// (src/backends/npu/nibble-planes.ts). The sim-npu device calls encodeGroupEngine from its compileGroup
// hook and loads the blob through the NPU runtime (mock or driver); `gguf-edge npu compile` writes them.

import { DeviceError, type CompileRequest } from '../backend.js';
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { GgmlType, ggmlTypeName } from '../../gguf/ggml-types.js';
import { dequantizer } from '../../quant/index.js';
import type { EngineDType } from './runtime-api.js';
import { alignUp, createEngineBlob, dtypeBytes, elements, type EngineIo, type EngineOp, type EngineProgram, type EngineTensor } from './engine-format.js';
import { packRow, paddedCols, planeBytes, scaleBytes } from './nibble-planes.js';
import { npuSupportsNode } from './op-set.js';
import { sourceRowBytes, weightToInt8 } from './weight-int8.js';

/** What the blob is compiled for (the header records it; the mock runs both the same way). */
export type NpuTarget = 'ax8850' | 'htp';
export const NPU_TARGETS: readonly NpuTarget[] = ['ax8850', 'htp'];

/** Numeric error the encoder introduced for one weight (exact mappings report zeros). */
export interface TensorEncodeReport {
  name: string;
  /** GGUF type name of the source weight ('Q8_0', 'Q4_K', 'F16', ...) */
  sourceType: string;
  rows: number;
  cols: number;
  /** true when the int8 values and per-32 scales are the source's own (Q8_0, Q4_0) */
  exact: boolean;
  /** largest |dequantized source - dequantized int8| over the tensor */
  maxAbsErr: number;
  /** ||source - int8||_2 / ||source||_2 (0 for an all-zero tensor) */
  relErr: number;
  /** bytes of the nibble planes and of the scales in the blob */
  planeBytes: number;
  scaleBytes: number;
}

export interface EncodeReport {
  group: string;
  nTokens: number;
  target: NpuTarget;
  ops: number;
  weightBytes: number;
  constantBytes: number;
  scratchBytes: number;
  tensors: TensorEncodeReport[];
}

export interface EncodedEngine {
  blob: Uint8Array;
  /**
   * Graph tensor ids bound to the engine's inputs, in EngineInfo.inputs order: every tensor the group
   * reads from outside itself that is not a weight compiled into the blob (activations, positions,
   * output-row ids, the KV cache state leaves).
   */
  inputIds: number[];
  /**
   * Graph tensor ids bound to the engine's outputs, in EngineInfo.outputs order: the group's nodes read
   * outside it (or the graph output), then the KV cache state leaves again (the cache is in/out: the
   * engine updates it in place when the same device pointer is bound as input and output, and copies
   * input -> output first otherwise).
   */
  outputIds: number[];
  report: EncodeReport;
}

const fail = (group: string, msg: string): never => { throw new DeviceError('COMPILE_FAILED', `npu encoder (${group}): ${msg}`); };

function ioDType(t: TensorDesc, group: string): EngineDType {
  if (t.dtype === 'f32' || t.dtype === 'f16' || t.dtype === 'i32') return t.dtype;
  return fail(group, `${t.name}: an engine input of ggml type ${ggmlTypeName(t.dtype)} (only f32/f16/i32 cross the engine boundary)`);
}

/**
 * Encodes one claimed group at one static shape. Throws DeviceError('COMPILE_FAILED') when a node of the
 * group is outside the engine op set or a weight cannot be stored (the scheduler then falls back).
 */
export function encodeGroupEngine(req: CompileRequest, target: NpuTarget): EncodedEngine {
  const g: Graph = req.graph, gname = req.group.name;
  if (!NPU_TARGETS.includes(target)) fail(gname, `unknown target ${String(target)}`);
  const nodes = req.group.nodes;
  if (nodes.length === 0) fail(gname, 'empty group');
  const inGroup = new Set(nodes);
  for (const id of nodes) {
    const t = g.tensors[id];
    if (!t || t.op === 'none') fail(gname, `node ${id} is not an op of the graph`);
    if (!npuSupportsNode(t!, g)) fail(gname, `${t!.name}: op ${t!.op} is outside the engine op set`);
  }

  // the GGUF type of a weight's bytes (the graph may carry a host device's repacked layout id instead)
  const fileType = (t: TensorDesc): number => req.weightType?.(t.id) ?? (typeof t.dtype === 'number' ? t.dtype : t.dtype === 'f16' ? GgmlType.F16 : GgmlType.F32);
  const tensors: EngineTensor[] = [];
  const slotOf = new Map<string, number>();
  const inputIds: number[] = [], outputIds: number[] = [];
  const inputs: EngineIo[] = [], outputs: EngineIo[] = [];
  const weightLeaves: { slot: number; t: TensorDesc }[] = [];
  const constLeaves: { slot: number; t: TensorDesc }[] = [];
  let scratch = 0;

  const ioEntry = (slot: number): EngineIo => {
    const t = tensors[slot]!;
    const dtype = t.dtype as EngineDType;
    return { name: t.name, tensor: slot, shape: [...t.shape], dtype, bytes: elements(t.shape) * dtypeBytes(dtype) };
  };
  /** The slot holding graph tensor `id` as read by op `op` at source position `pos`. */
  const sourceSlot = (id: number, op: TensorDesc, pos: number): number => {
    const t = g.tensors[id]!;
    if (inGroup.has(id)) return slotOf.get(`n${id}`)!;
    if (t.role === 'weight') {
      const packed = (op.op === 'mul_mat' || op.op === 'get_rows') && pos === 0;
      const key = `${packed ? 'w' : 'c'}${id}`;
      let s = slotOf.get(key);
      if (s === undefined) {
        s = tensors.length;
        slotOf.set(key, s);
        if (packed) {
          const cols = t.shape[0]!, rows = elements(t.shape) / cols;
          if (cols % 32) fail(gname, `${t.name}: rows of ${cols} weights are not a multiple of 32`);
          tensors.push({ name: t.name, kind: 'weight', dtype: 'q8', shape: [cols, rows], source: ggmlTypeName(fileType(t)) });
          weightLeaves.push({ slot: s, t });
        } else {
          tensors.push({ name: t.name, kind: 'const', dtype: 'f32', shape: [...t.shape] });
          constLeaves.push({ slot: s, t });
        }
      }
      return s;
    }
    // read from outside: an engine input (activations of another group, positions, ids, the KV cache)
    let s = slotOf.get(`n${id}`);
    if (s === undefined) {
      s = tensors.length;
      slotOf.set(`n${id}`, s);
      tensors.push({ name: t.name, kind: 'io', dtype: ioDType(t, gname), shape: [...t.shape] });
      inputIds.push(id);
      inputs.push(ioEntry(s));
    }
    return s;
  };

  // graph tensors read by nodes outside the group (or the graph output): the engine's outputs
  const readOutside = new Set<number>([g.output]);
  for (const id of g.nodes) if (!inGroup.has(id)) for (const s of g.tensors[id]!.src) readOutside.add(s);

  const ops: EngineOp[] = [];
  for (const id of nodes) {
    const t = g.tensors[id]!;
    const src = t.src.map((s, i) => sourceSlot(s, t, i));
    const slot = tensors.length;
    slotOf.set(`n${id}`, slot);
    if (readOutside.has(id)) {
      tensors.push({ name: t.name, kind: 'io', dtype: ioDType(t, gname), shape: [...t.shape] });
      outputIds.push(id);
      outputs.push(ioEntry(slot));
    } else {
      if (t.dtype !== 'f32') fail(gname, `${t.name}: intermediate of type ${String(t.dtype)}`);
      tensors.push({ name: t.name, kind: 'scratch', dtype: 'f32', shape: [...t.shape], scratch });
      scratch = alignUp(scratch + 4 * elements(t.shape));
    }
    const params: Record<string, number | boolean> = {};
    for (const [k, v] of Object.entries(t.params)) if (v !== undefined) params[k] = v;
    ops.push({ op: t.op, out: slot, src, params });
  }
  // the KV cache (state leaves) is in/out
  for (let i = 0; i < inputIds.length; i++) {
    if (g.tensors[inputIds[i]!]!.role === 'state') {
      outputIds.push(inputIds[i]!);
      outputs.push({ ...inputs[i]! });
    }
  }

  // data layout: per weight its planes then its scales, then the constants, each 64-aligned
  let data = 0;
  for (const { slot } of weightLeaves) {
    const t = tensors[slot]!, [cols, rows] = t.shape as [number, number];
    t.planes = { offset: data, bytes: planeBytes(rows, cols) };
    data = alignUp(data + t.planes.bytes);
    t.scales = { offset: data, bytes: scaleBytes(rows, cols) };
    data = alignUp(data + t.scales.bytes);
  }
  let constantBytes = 0;
  for (const { slot } of constLeaves) {
    const t = tensors[slot]!;
    t.data = { offset: data, bytes: 4 * elements(t.shape) };
    constantBytes += t.data.bytes;
    data = alignUp(data + t.data.bytes);
  }
  if (data > 0xffffffff) fail(gname, `${data} bytes of weights exceed the format's 4 GiB data section`);

  const program: EngineProgram = { tensors, ops, inputs, outputs, scratchBytes: scratch };
  const { blob, data: dataView } = createEngineBlob({ target, nTokens: req.nTokens, name: gname }, program, data);

  const reports: TensorEncodeReport[] = [];
  let weightBytes = 0;
  for (const { slot, t: leaf } of weightLeaves) {
    const t = tensors[slot]!, [cols, rows] = t.shape as [number, number];
    const type = fileType(leaf);
    const src = req.weightBytes(leaf.id);
    const pc = paddedCols(cols), p0 = t.planes!.offset, s0 = t.scales!.offset, ng = t.scales!.bytes / 2 / rows;
    let stats;
    try {
      stats = weightToInt8(type, src, rows, cols, (r, q, scales) => {
        packRow(q, 0, cols, dataView, p0 + r * pc);
        for (let k = 0; k < ng; k++) { dataView[s0 + 2 * (r * ng + k)] = scales[k]! & 0xff; dataView[s0 + 2 * (r * ng + k) + 1] = scales[k]! >> 8; }
      });
    } catch (e) {
      return fail(gname, `${leaf.name}: ${(e as Error).message}`);
    }
    weightBytes += t.planes!.bytes + t.scales!.bytes;
    reports.push({ name: leaf.name, sourceType: t.source!, rows, cols, exact: stats.exact, maxAbsErr: stats.maxAbsErr, relErr: stats.relErr, planeBytes: t.planes!.bytes, scaleBytes: t.scales!.bytes });
  }
  for (const { slot, t: leaf } of constLeaves) {
    const t = tensors[slot]!, n = elements(t.shape);
    const out = new Float32Array(dataView.buffer, dataView.byteOffset + t.data!.offset, n);
    const type = fileType(leaf);
    const src = req.weightBytes(leaf.id);
    try {
      const cols = leaf.shape[0]!, rb = sourceRowBytes(type, cols);
      if (src.length < (n / cols) * rb) throw new Error(`needs ${(n / cols) * rb} bytes, got ${src.length}`);
      const deq = dequantizer(type);
      for (let r = 0; r < n / cols; r++) deq(src, r * rb, out, r * cols, cols);
    } catch (e) {
      return fail(gname, `constant ${leaf.name}: ${(e as Error).message}`);
    }
  }
  return {
    blob, inputIds, outputIds,
    report: { group: gname, nTokens: req.nTokens, target, ops: ops.length, weightBytes, constantBytes, scratchBytes: scratch, tensors: reports },
  };
}

/** Can the engine op set express this node (op, types, shapes)? Answers from the node alone, cheaply. */
export { npuSupportsNode } from './op-set.js';

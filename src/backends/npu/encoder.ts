// Our own NPU engine encoder: one node group of the graph at one static token count -> one engine blob
// (src/backends/npu/engine-format.ts) with the group's op program, its constants (norm weights, rope
// factors, f32) and its matmul weights as int8 nibble planes (src/backends/npu/nibble-planes.ts).
// The sim-npu device calls encodeGroupEngine from its compileGroup hook and loads the blob through
// the NPU runtime (mock or driver).

import { DeviceError, type CompileRequest } from '../backend.js';

/** What the blob is compiled for (the header records it; the mock runs both the same way). */
export type NpuTarget = 'ax8850' | 'htp';
export const NPU_TARGETS: readonly NpuTarget[] = ['ax8850', 'htp'];

/** Numeric error the encoder introduced for one weight (exact mappings report zeros). */
export interface TensorEncodeReport {
  name: string;
  /** GGUF type name of the source weight ('q8_0', 'q4_k', 'f16', ...) */
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

/**
 * Encodes one claimed group at one static shape. Throws DeviceError('COMPILE_FAILED') when a node of the
 * group is outside the engine op set or a weight cannot be stored (the scheduler then falls back).
 */
export function encodeGroupEngine(req: CompileRequest, target: NpuTarget): EncodedEngine {
  throw new DeviceError('COMPILE_FAILED', `npu encoder: not implemented yet (group ${req.group.name}, ${req.nTokens} tokens, ${target})`);
}

/** Can the engine op set express this node (op, types, shapes)? Answers from the node alone, cheaply. */
export { npuSupportsNode } from './op-set.js';

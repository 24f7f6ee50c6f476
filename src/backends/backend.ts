// The backend contract (after ggml-backend, simplified): a Device owns buffer types and says which
// ops it can run; buffers hold bytes (weights, KV state, activations); a Backend computes a run of
// graph nodes whose inputs are already resident on its device. The scheduler (src/sched) is the
// only caller: models never see devices, backends never see models.

import type { Graph, TensorDesc } from '../graph/graph.js';

export type DeviceKind = 'cpu' | 'gpu' | 'npu' | 'sim';
export type BufferUsage = 'weights' | 'state' | 'compute' | 'input';

export interface DeviceMemory {
  free: number;
  total: number;
}

export interface DeviceBuffer {
  readonly size: number;
  readonly usage: BufferUsage;
  readonly type: BufferType;
  set(offset: number, bytes: Uint8Array): void;
  get(offset: number, length: number, dest?: Uint8Array): Uint8Array;
  clear(value?: number): void;
  /** copies bytes to another buffer (any device: through host memory when the types differ) */
  copyTo(dst: DeviceBuffer, srcOffset: number, dstOffset: number, length: number): void;
  /** host-visible bytes, when the buffer lives in host memory: lets the loader read files straight in */
  hostView?(offset: number, length: number): Uint8Array;
  free(): void;
}

export interface BufferType {
  readonly name: string;
  readonly alignment: number;
  allocate(size: number, usage: BufferUsage): DeviceBuffer;
}

/** Where a tensor's bytes live. */
export interface Placement {
  buffer: DeviceBuffer;
  offset: number;
  nBytes: number;
}

export interface Device {
  readonly name: string;
  readonly kind: DeviceKind;
  readonly description: string;
  memory(): DeviceMemory;
  bufferType(): BufferType;
  /** can this device compute the node (its op, types and shapes)? */
  supportsOp(node: TensorDesc, graph: Graph): boolean;
  /**
   * The device runs attention nodes over several sequences' regions of one cache (params.seqStride,
   * src/graph/graph.ts). Without it the scheduler never gives it one (its other nodes are unaffected).
   */
  readonly multiSequence?: boolean;
  /**
   * The device runs attention nodes with llama.cpp's flash-attention numerics (params.flash, src/graph/graph.ts):
   * 'supported' when asked (flashAttn 'on'), 'preferred' also by default (flashAttn 'auto': it is the faster path
   * there). Without it the scheduler never gives the device such a node, and 'auto' leaves flash attention off.
   */
  readonly flashAttention?: 'supported' | 'preferred';
  /** the offload hint: does the device want this node at this batch size (e.g. matmul only when batch >= N)? */
  prefersOp(node: TensorDesc, graph: Graph, batch: number): boolean;
  /** a compute instance bound to this device */
  createBackend(): Backend;
  /**
   * Optional load-time hook: the loader calls it once a weight's bytes are in `placement` (GGUF type
   * `type`, dims ne0 first). The device may rewrite the bytes in place into its own layout (e.g. the cpu
   * device's Q4_0r4 repack) and returns the type id the graph should carry for the weight: `type`
   * when nothing changed. Only this device's kernels need to understand a returned layout id.
   */
  prepareWeight?(placement: Placement, type: number, dims: readonly number[]): number;

  // ---- Accelerator extensions (all optional; a device without them is scheduled op by op) ----
  // Draft agreed for issue #10; docs/devices.md is the contract's documentation.

  /**
   * Token counts this device runs graphs at (e.g. [1, 128]: decode, and prefill in 128-token chunks).
   * A batch is padded up to the smallest shape that holds it; longer prompts are split into chunks of
   * the largest. Undefined: any batch size.
   */
  readonly staticShapes?: readonly number[];
  /**
   * Whole-group claims: the units of `graph` this device takes all or nothing (e.g. one transformer layer,
   * grouped by TensorDesc.group). The scheduler gives a group to the device only if supportsOp holds for
   * every node of it, reservation fits and compileGroup succeeds; otherwise the whole group runs on the
   * next device (never a lone op left behind between two claimed ones). Called once per plan, at load.
   */
  claimGroups?(graph: Graph): NodeGroup[];
  /**
   * Load-time compile of one claimed group at one static shape (never mid-run); the result may be cached
   * on disk by the device. Throws DeviceError('COMPILE_FAILED' | 'OVER_BUDGET') to make the group fall back.
   */
  compileGroup?(req: CompileRequest): void | Promise<void>;
  /**
   * Explicit memory reservation before any allocation; throws DeviceError('OVER_BUDGET') when it does not fit.
   * The scheduler may call it several times at load (dropping claimed groups until it fits): the last call
   * is the reservation in force.
   */
  reserve?(r: MemoryReservation): void;
  /** The device keeps its own copy of this weight (e.g. compiled into its engines): the scheduler never copies it in. */
  holdsWeight?(name: string): boolean;
  /** Static facts for `devices --json`: claimed ops and weight types, status. */
  describe?(): DeviceDescription;
  /**
   * Cost model for `--phase-policy auto` and simulated profiles: predicted seconds to run `nodes` of
   * `graph` (a whole phase's graph when `nodes` is omitted) on this device. Devices without one are
   * measured instead (the cpu: a timed run at load).
   */
  estimate?(phase: Phase, graph: Graph, nodes?: readonly number[]): number;
  /** Predicted seconds to move `bytes` between host memory and this device ('in': to the device). */
  transferSeconds?(bytes: number, direction: 'in' | 'out'): number;
}

/** Batch phase: `prefill` evaluates several tokens at once, `decode` one. */
export type Phase = 'prefill' | 'decode';

/** A run of graph nodes a device takes whole or not at all. */
export interface NodeGroup {
  /** the TensorDesc.group the nodes share ('blk.3', 'output'): stable across batch shapes, so engines key on it */
  name: string;
  /** node ids, in execution order */
  nodes: number[];
}

export interface MemoryReservation {
  weights: number;
  kv: number;
  scratch: number;
}

export interface CompileRequest {
  /** the graph built at the static token count `nTokens` */
  graph: Graph;
  group: NodeGroup;
  nTokens: number;
  /** host bytes of a weight leaf as stored in the GGUF file (the encoder reads them once, at load) */
  weightBytes(id: number): Uint8Array;
  /** the GGUF type of weightBytes' bytes (the graph's dtype may be a host device's repacked layout id); the scheduler always sets it */
  weightType?(id: number): number;
}

export interface DeviceDescription {
  ops: string[];
  weightTypes: string[];
  staticShapes?: readonly number[];
  status: string;
}

export type DeviceErrorCode = 'COMPILE_FAILED' | 'OVER_BUDGET' | 'UNSUPPORTED' | 'DEVICE_LOST' | 'PLUGIN_INVALID';

/** A device's typed failure; the scheduler falls back to the next device on COMPILE_FAILED and OVER_BUDGET. */
export class DeviceError extends Error {
  constructor(readonly code: DeviceErrorCode, message: string) {
    super(message);
    this.name = 'DeviceError';
  }
}

/** Completion of an asynchronous submit. */
export interface DeviceEvent {
  wait(): Promise<void>;
}

export interface ComputeContext {
  graph: Graph;
  /** placement of every tensor the nodes touch (sources and results) on this device */
  placement: (id: number) => Placement;
}

export interface Backend {
  readonly device: Device;
  /** runs `nodes` (ids, in order); their sources are resident on this device */
  compute(ctx: ComputeContext, nodes: readonly number[]): void | Promise<void>;
  /**
   * Asynchronous submit (queue many, wait once): returns at once; the work is done when the event resolves.
   * One backend's submits run in order (a stream): the scheduler waits only on the last event of a run of
   * submits, before anything reads their results on another device.
   */
  submit?(ctx: ComputeContext, nodes: readonly number[]): DeviceEvent;
  /**
   * Plan time (context creation, or the first use of a batch shape): bind `nodes` to their placements
   * once (compile kernels, size scratch for the shape), so compute allocates nothing. The scheduler calls
   * it for the worst-case shapes first, so later shapes fit the scratch reserved then.
   */
  prepare?(ctx: ComputeContext, nodes: readonly number[]): void;
  /** The plan that ran `nodes` is gone: drop what prepare kept for them. */
  release?(nodes: readonly number[]): void;
  /** Simulated devices: the predicted seconds of the last compute/submit (their cost model), for profiles. */
  lastSimulatedSeconds?(): number;
  close?(): void;
}

/** Bytes one tensor takes in a buffer of its dtype. */
export function tensorBytes(t: TensorDesc, rowBytesOf: (type: number, ne0: number) => number): number {
  const rows = t.shape.slice(1).reduce((a, b) => a * b, 1);
  switch (t.dtype) {
    case 'f32': case 'i32': return 4 * t.shape[0]! * rows;
    case 'f16': return 2 * t.shape[0]! * rows;
    default: return rowBytesOf(t.dtype, t.shape[0]!) * rows;
  }
}

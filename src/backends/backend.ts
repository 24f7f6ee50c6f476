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
  /** the offload hint: does the device want this node at this batch size (e.g. matmul only when batch >= N)? */
  prefersOp(node: TensorDesc, graph: Graph, batch: number): boolean;
  /** a compute instance bound to this device */
  createBackend(): Backend;
  /**
   * Optional load-time hook: the loader calls it once a weight's bytes are in `placement` (GGUF type
   * `type`, dims ne0 first). The device may rewrite the bytes in place into its own layout (e.g. the cpu
   * device's Q4_0x4 repack) and returns the type id the graph should carry for the weight: `type`
   * when nothing changed. Only this device's kernels need to understand a returned layout id.
   */
  prepareWeight?(placement: Placement, type: number, dims: readonly number[]): number;
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

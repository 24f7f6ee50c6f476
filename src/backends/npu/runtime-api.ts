// The NPU runtime interface, shaped like a vendor runtime (Axera's AXCL: axclrtMalloc/Memcpy,
// axclrtEngineLoadFromMem/GetIOInfo/Execute). The NPU device (src/backends/sim-npu) talks only to
// this interface, so a binding to a real driver replaces the mock (./mock-runtime.ts) without
// touching device code. Device memory is never host-visible: bytes cross only through memcpy.
//
// Draft agreed for issue #10; the mock runtime's author owns refinements (keep callers compiling).

/**
 * An address in device memory (never dereferenced by the host; 0 is never a valid allocation). As with
 * AXCL's device addresses, `ptr + k` (0 <= k < the allocation's size) addresses byte k of an allocation:
 * memset, memcpy and execute accept such interior pointers (the sim-npu device binds tensors at offsets
 * inside one arena allocation). free() takes only what malloc returned.
 */
export type DevicePtr = number;

export interface NpuDeviceInfo {
  id: number;
  name: string;
  /** device memory in bytes */
  memTotal: number;
  memFree: number;
}

export type EngineDType = 'f32' | 'f16' | 'bf16' | 'i8' | 'i32' | 'u32';

export interface EngineTensorInfo {
  name: string;
  shape: number[];
  dtype: EngineDType;
  bytes: number;
}

export interface EngineInfo {
  /** what the blob's header says it was compiled for */
  target: string;
  name: string;
  inputs: EngineTensorInfo[];
  outputs: EngineTensorInfo[];
  /** device bytes the loaded engine holds (weights + constants) */
  weightBytes: number;
  /** device scratch bytes one execution needs */
  scratchBytes: number;
}

export type EngineHandle = number;

/** Bytes moved and calls made, for the cost model and profiles (loadEngine counts the blob as host->device bytes). */
export interface NpuCounters {
  bytesHostToDevice: number;
  bytesDeviceToHost: number;
  bytesDeviceToDevice: number;
  engineCalls: number;
}

export interface NpuStream {
  /** resolves when everything queued on the stream has run */
  synchronize(): Promise<void>;
}

export interface NpuContext {
  readonly deviceId: number;
  malloc(bytes: number): DevicePtr;
  free(ptr: DevicePtr): void;
  memset(ptr: DevicePtr, value: number, bytes: number): void;
  memcpyHostToDevice(dst: DevicePtr, src: Uint8Array): void;
  memcpyDeviceToHost(dst: Uint8Array, src: DevicePtr): void;
  memcpyDeviceToDevice(dst: DevicePtr, src: DevicePtr, bytes: number): void;
  /** parses and loads a compiled engine blob into device memory */
  loadEngine(blob: Uint8Array): EngineHandle;
  engineInfo(engine: EngineHandle): EngineInfo;
  /**
   * runs the engine once: inputs/outputs are device buffers in the order of EngineInfo.inputs/outputs.
   * A tensor that is both an input and an output (the KV cache) is updated in place when the same
   * pointer is bound to both, and copied input -> output first otherwise.
   */
  execute(engine: EngineHandle, inputs: readonly DevicePtr[], outputs: readonly DevicePtr[]): void;
  /** queues an execution on `stream`; a failure is reported by stream.synchronize() (later work on that stream is skipped) */
  executeAsync(engine: EngineHandle, inputs: readonly DevicePtr[], outputs: readonly DevicePtr[], stream: NpuStream): void;
  createStream(): NpuStream;
  unloadEngine(engine: EngineHandle): void;
  counters(): NpuCounters;
  destroy(): void;
}

export interface NpuRuntime {
  /** 'mock' for the software runtime, a driver name otherwise */
  readonly name: string;
  deviceCount(): number;
  deviceInfo(id: number): NpuDeviceInfo;
  createContext(deviceId: number): NpuContext;
  /** releases the runtime (driver handles, the mock's kernel threads); its contexts are unusable afterwards */
  close?(): Promise<void>;
}

/** ENGINE_FAILED: an engine stopped mid-run (its outputs are undefined). */
export type NpuErrorCode = 'OUT_OF_DEVICE_MEMORY' | 'BAD_POINTER' | 'BAD_ENGINE' | 'BAD_IO' | 'NO_DEVICE' | 'CLOSED' | 'ENGINE_FAILED';

export class NpuRuntimeError extends Error {
  constructor(readonly code: NpuErrorCode, message: string) {
    super(message);
    this.name = 'NpuRuntimeError';
  }
}

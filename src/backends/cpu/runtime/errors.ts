// The cpu runtime's (and device's) typed error. OUT_OF_BOUNDS: a plan whose operands do not fit their
// placements (the device checks each plan once, so no kernel ever writes outside its buffers).
export class CpuRuntimeError extends Error {
  constructor(readonly code: 'OUT_OF_MEMORY' | 'KERNEL_FAILED' | 'UNSUPPORTED_TYPE' | 'BAD_SHAPE' | 'OUT_OF_BOUNDS' | 'CLOSED', message: string) {
    super(message);
    this.name = 'CpuRuntimeError';
  }
}

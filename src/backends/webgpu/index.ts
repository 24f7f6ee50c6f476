// The webgpu device's entry (src/backends/registry.ts creates it on first use).
export { createWebGpuDevice, type WebGpuDevice, type WebGpuDeviceOptions } from './device.js';
export { setupGpu, type GpuSetup, type GpuSetupOptions } from './gpu.js';

// Getting a GPUDevice: the browser's navigator.gpu, else (Node) Dawn from the npm `webgpu` package, loaded
// only then (a variable specifier, so a browser bundle never pulls it in). Optional features are requested
// when the adapter has them (shader-f16, subgroups, timestamp-query); nothing here requires them: every
// kernel has an f32 path that reads f16 data as u32 words (unpack2x16float is core WGSL). The binding limits
// are raised to the adapter's (lavapipe and GLES stop at 128 MiB per storage binding: big matrices are
// bound in row chunks, device.ts).
import { DeviceError } from '../backend.js';

export interface GpuSetupOptions {
  /**
   * Node only: Dawn's backend toggle ('vulkan' for Mesa's lavapipe or a GPU, 'opengles' for the GLES path,
   * which runs with featureLevel 'compatibility'). Default: Dawn's choice. Env GGUF_EDGE_WEBGPU_BACKEND.
   */
  backend?: string;
  /** request the adapter at this feature level ('core' | 'compatibility'); default: 'compatibility' for opengles */
  featureLevel?: 'core' | 'compatibility';
}

export interface GpuSetup {
  device: GPUDevice;
  adapterName: string;
  fallbackAdapter: boolean;
  backend: string;
  features: { f16: boolean; subgroups: boolean; timestamps: boolean };
  limits: { maxBinding: number; maxBuffer: number; storageAlign: number; uniformAlign: number; maxWorkgroupsPerDim: number; maxStorageBuffers: number };
  /** release the device (and Dawn's instance in Node) */
  destroy(): void;
}

let nodeGpu: Map<string, Promise<GPU | undefined>> | undefined;

/** The GPU entry point: navigator.gpu, else Dawn through the npm `webgpu` package (undefined: neither). */
async function gpuEntry(backend: string | undefined): Promise<GPU | undefined> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return nav.gpu;
  if (typeof process === 'undefined' || !process.versions?.node) return undefined;
  nodeGpu ??= new Map();
  const key = backend ?? '';
  let p = nodeGpu.get(key);
  if (!p) {
    p = (async () => {
      const name = 'webgpu';
      let mod: { create(o: string[]): GPU; globals: object };
      try { mod = await import(name) as typeof mod; } catch (e) {
        throw new DeviceError('UNSUPPORTED', `webgpu device: no navigator.gpu, and the npm package "webgpu" (Dawn for Node) is not installed (${(e as Error).message}); npm install webgpu@0.6.2`);
      }
      // GLES through Mesa needs an EGL platform without a display
      if (backend === 'opengles' && !process.env.EGL_PLATFORM) process.env.EGL_PLATFORM = 'surfaceless';
      return mod.create(backend ? [`backend=${backend}`] : []);
    })();
    nodeGpu.set(key, p);
  }
  return p;
}

/** An adapter and a device with the limits raised; DeviceError('UNSUPPORTED') when there is no adapter. */
export async function setupGpu(o: GpuSetupOptions = {}): Promise<GpuSetup> {
  const backend = o.backend ?? (typeof process !== 'undefined' ? process.env?.GGUF_EDGE_WEBGPU_BACKEND : undefined) ?? undefined;
  const gpu = await gpuEntry(backend || undefined);
  if (!gpu) throw new DeviceError('UNSUPPORTED', 'webgpu device: this runtime has no WebGPU (no navigator.gpu, not Node)');
  const featureLevel = o.featureLevel ?? (backend === 'opengles' ? 'compatibility' : undefined);
  const adapter = await gpu.requestAdapter(featureLevel ? { featureLevel } as GPURequestAdapterOptions : {});
  if (!adapter) {
    throw new DeviceError('UNSUPPORTED', `webgpu device: no WebGPU adapter${backend ? ` for backend=${backend}` : ''} (on Linux without a GPU: Mesa's lavapipe, mesa-vulkan-drivers >= 25 from bookworm-backports; .ci/run installs it)`);
  }
  const want: GPUFeatureName[] = [];
  for (const f of ['shader-f16', 'subgroups', 'timestamp-query'] as GPUFeatureName[]) if (adapter.features.has(f)) want.push(f);
  const al = adapter.limits;
  const device = await adapter.requestDevice({
    requiredFeatures: want,
    requiredLimits: {
      maxStorageBufferBindingSize: al.maxStorageBufferBindingSize,
      maxBufferSize: al.maxBufferSize,
      maxStorageBuffersPerShaderStage: al.maxStorageBuffersPerShaderStage,
      maxComputeWorkgroupStorageSize: al.maxComputeWorkgroupStorageSize,
      // the adapter's finer offset alignment (16 on lavapipe; the device default is 256): finer row chunks
      minStorageBufferOffsetAlignment: al.minStorageBufferOffsetAlignment,
      minUniformBufferOffsetAlignment: al.minUniformBufferOffsetAlignment,
    },
  });
  device.addEventListener?.('uncapturederror', (ev) => {
    // validation errors surface here (the kernels are fixed, so this is a bug worth seeing)
    const msg = `webgpu: ${(ev as GPUUncapturedErrorEvent).error.message}`;
    if (typeof process !== 'undefined' && process.stderr) process.stderr.write(msg + '\n'); else console.error(msg);
  });
  const info = adapter.info;
  const dl = device.limits;
  return {
    device,
    adapterName: [info?.vendor, info?.architecture, info?.description].filter(Boolean).join(' ') || 'unknown adapter',
    fallbackAdapter: !!(info as { isFallbackAdapter?: boolean } | undefined)?.isFallbackAdapter,
    backend: backend || 'default',
    features: { f16: device.features.has('shader-f16'), subgroups: device.features.has('subgroups'), timestamps: device.features.has('timestamp-query') },
    limits: {
      maxBinding: dl.maxStorageBufferBindingSize,
      maxBuffer: dl.maxBufferSize,
      storageAlign: dl.minStorageBufferOffsetAlignment,
      uniformAlign: dl.minUniformBufferOffsetAlignment,
      maxWorkgroupsPerDim: dl.maxComputeWorkgroupsPerDimension,
      maxStorageBuffers: dl.maxStorageBuffersPerShaderStage,
    },
    destroy() { device.destroy(); },
  };
}

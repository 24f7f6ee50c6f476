// Known devices by name, for --device / --prefill-device / --decode-device. The single registry:
// built-in devices are one-line factories below; device plug-ins (src/backends/plugins.ts) add
// theirs through registerDevice at start-up. Devices are created on first use (the cpu device
// starts its worker threads then) and shared afterwards.
import type { Device } from './backend.js';
import { DeviceError } from './backend.js';
import { referenceDevice } from './reference/device.js';
import { resolveNumerics } from './numerics.js';

export interface DeviceOptions {
  /** worker threads for devices that have them (default: available cores) */
  threads?: number;
  /**
   * Float order of the cpu device's matmuls (src/backends/numerics.ts: the modes and DEFAULT_NUMERICS).
   * Other devices ignore it.
   */
  numerics?: 'exact' | 'fast';
  /** sim-npu: cost-model preset and encoder target (--npu-target ax8850|htp; default ax8850) */
  npuTarget?: string;
  /** sim-npu: device memory capacity in MiB (--npu-mem; default 7040) */
  npuMemMiB?: number;
}

export type ClosableDevice = Device & { close?(): void | Promise<void> };
export type DeviceFactory = (o: DeviceOptions) => ClosableDevice | Promise<ClosableDevice>;

/** Where a device comes from: 'builtin', or the path of the plug-in module that registered it. */
export type DeviceSource = 'builtin' | string;

const factories: Record<string, DeviceFactory> = {
  reference: async () => referenceDevice(),
  cpu: async (o) => (await import('./cpu/device.js')).createCpuDevice({ threads: o.threads, numerics: resolveNumerics(o.numerics) }),
  // WebGPU (navigator.gpu, or Dawn from the npm `webgpu` package in Node): runs ahead of the cpu device
  webgpu: async () => (await import('./webgpu/index.js')).createWebGpuDevice(),
  'sim-npu': async (o) => (await import('./sim-npu/index.js')).createSimNpu({ threads: o.threads, npuTarget: o.npuTarget, npuMemMiB: o.npuMemMiB }),
};
const sources = new Map<string, DeviceSource>();
const cache = new Map<string, Promise<ClosableDevice>>();

/** Every registered device name: built-ins first, then plug-ins in load order. */
export function deviceNames(): string[] { return Object.keys(factories); }

/** 'builtin' or the plug-in path that registered `name`. */
export function deviceSource(name: string): DeviceSource | undefined {
  return Object.hasOwn(factories, name) ? (sources.get(name) ?? 'builtin') : undefined;
}

// the cpu device passes every parity fixture under the same rule as the reference backend
// (test/parity/cpu.test.ts) and, with numerics 'exact', reproduces its logits bit for bit
export const DEFAULT_DEVICE = 'cpu';

export function getDevice(name: string, o: DeviceOptions = {}): Promise<Device> {
  const f = Object.hasOwn(factories, name) ? factories[name] : undefined;
  if (!f) throw Object.assign(new Error(`unknown device "${name}" (available: ${deviceNames().join(', ')})`), { code: 'USAGE' });
  const key = `${name}:${o.threads ?? ''}:${o.numerics ?? ''}:${o.npuTarget ?? ''}:${o.npuMemMiB ?? ''}`;
  let d = cache.get(key);
  if (!d) {
    d = Promise.resolve().then(() => f(o));
    cache.set(key, d);
    // a failed creation is not cached: the caller sees the error, a later call tries again
    d.catch(() => { if (cache.get(key) === d) cache.delete(key); });
  }
  return d;
}

/** Stops every device's threads (lets the process exit). */
export async function closeDevices(): Promise<void> {
  const all = [...cache.values()];
  cache.clear();
  for (const d of all) {
    let dev: ClosableDevice;
    try { dev = await d; } catch { continue; } // creation failed: nothing to close
    await dev.close?.();
  }
}

/** The default compute device's name. */
export function defaultDeviceName(): string { return DEFAULT_DEVICE; }

/**
 * Adds a device. Names are unique: registering a taken name throws DeviceError('PLUGIN_INVALID')
 * (a plug-in cannot replace a built-in or another plug-in's device).
 */
export function registerDevice(name: string, factory: DeviceFactory, source: DeviceSource = 'builtin'): void {
  if (Object.hasOwn(factories, name)) {
    const other = deviceSource(name);
    throw new DeviceError('PLUGIN_INVALID', `device name "${name}" is already registered (${other === 'builtin' ? 'a built-in device' : `by ${other}`})`);
  }
  factories[name] = factory;
  if (source !== 'builtin') sources.set(name, source);
}

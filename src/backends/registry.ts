// Known devices by name, for --device / --prefill-device / --decode-device. Devices are created
// on first use (the cpu device starts its worker threads then) and shared afterwards.
import type { Device } from './backend.js';
import { referenceDevice } from './reference/device.js';

export interface DeviceOptions {
  /** worker threads for devices that have them (default: available cores) */
  threads?: number;
  /**
   * Float order of the cpu device's matmuls: 'fast' (default) free-order kernels for Q8_0, Q4_0 and the
   * Q4_K GEMV (within the parity tolerances on every fixture); 'exact' reproduces llama.cpp's x86 build
   * bit for bit (test/parity/cpu-bitexact.test.ts). Other devices ignore it.
   */
  numerics?: 'exact' | 'fast';
}

type Factory = (o: DeviceOptions) => Promise<Device & { close?(): Promise<void> }>;

const factories: Record<string, Factory> = {
  reference: async () => referenceDevice(),
  cpu: async (o) => (await import('./cpu/device.js')).createCpuDevice({ threads: o.threads, numerics: o.numerics ?? 'fast' }),
};
const cache = new Map<string, Promise<Device & { close?(): Promise<void> }>>();

export function deviceNames(): string[] { return Object.keys(factories); }

// the cpu device passes every parity fixture under the same rule as the reference backend
// (test/parity/cpu.test.ts) and, with numerics 'exact', reproduces its logits bit for bit
export const DEFAULT_DEVICE = 'cpu';

export function getDevice(name: string, o: DeviceOptions = {}): Promise<Device> {
  const f = factories[name];
  if (!f) throw Object.assign(new Error(`unknown device "${name}" (available: ${deviceNames().join(', ')})`), { code: 'USAGE' });
  const key = `${name}:${o.threads ?? ''}:${o.numerics ?? ''}`;
  let d = cache.get(key);
  if (!d) cache.set(key, (d = f(o)));
  return d;
}

/** Stops every device's threads (lets the process exit). */
export async function closeDevices(): Promise<void> {
  const all = [...cache.values()];
  cache.clear();
  for (const d of all) await (await d).close?.();
}

/** The default compute device's name. */
export function defaultDeviceName(): string { return DEFAULT_DEVICE; }

export function registerDevice(name: string, factory: Factory): void { factories[name] = factory; }

// Known devices by name, for --device / --prefill-device / --decode-device.
import type { Device } from './backend.js';
import { referenceDevice } from './reference/device.js';

/** Options a device factory may take (a device ignores what it has no use for). */
export interface DeviceOptions {
  /** compute threads (the `cpu` device); the reference device ignores it */
  threads?: number;
}

type Factory = (opts?: DeviceOptions) => Device;

const factories: Record<string, Factory> = {
  reference: () => referenceDevice(),
};
const cache = new Map<string, Device>();

export function deviceNames(): string[] { return Object.keys(factories); }

/** The default compute device: `cpu` once it is registered, else `reference`. */
export function defaultDeviceName(): string { return factories.cpu ? 'cpu' : 'reference'; }

export function getDevice(name: string, opts?: DeviceOptions): Device {
  const f = factories[name];
  if (!f) throw Object.assign(new Error(`unknown device "${name}" (available: ${deviceNames().join(', ')})`), { code: 'USAGE' });
  const key = opts?.threads !== undefined ? `${name}#t${opts.threads}` : name;
  let d = cache.get(key);
  if (!d) cache.set(key, (d = f(opts)));
  return d;
}

export function registerDevice(name: string, factory: Factory): void { factories[name] = factory; }

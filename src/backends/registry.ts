// Known devices by name, for --device / --prefill-device / --decode-device.
import type { Device } from './backend.js';
import { referenceDevice } from './reference/device.js';

const factories: Record<string, () => Device> = {
  reference: referenceDevice,
};
const cache = new Map<string, Device>();

export function deviceNames(): string[] { return Object.keys(factories); }

export function getDevice(name: string): Device {
  const f = factories[name];
  if (!f) throw Object.assign(new Error(`unknown device "${name}" (available: ${deviceNames().join(', ')})`), { code: 'USAGE' });
  let d = cache.get(name);
  if (!d) cache.set(name, (d = f()));
  return d;
}

export function registerDevice(name: string, factory: () => Device): void { factories[name] = factory; }

// Device plug-ins (after ggml_backend_load): an ES module, loaded from its path at start-up, that adds
// devices to the registry. The module format (docs/devices.md, "Plug-in modules"):
//
//   export const apiVersion = 1;
//   export const devices = [{ name: 'my-npu', create(options, host) { return device; } }];
//
// or the same two fields on the default export. `create` returns (or resolves to) an object
// implementing the Device contract of src/backends/backend.ts; `host` hands the plug-in what it may
// need from gguf-edge without importing it by path. Anything wrong (missing file, a module that throws
// while loading, a wrong shape, a name already taken, a create() that throws or returns a non-device)
// is a DeviceError('PLUGIN_INVALID') naming the path and the problem.
import type { BufferType, Device, DeviceKind } from './backend.js';
import { DeviceError } from './backend.js';
import { hostBufferType } from './host-buffer.js';
import { deviceNames, registerDevice, type DeviceOptions } from './registry.js';

/** The plug-in API this build loads. A module declaring another version is refused. */
export const DEVICE_PLUGIN_API_VERSION = 1;

/** What a plug-in's create() receives besides the options. */
export interface DevicePluginHost {
  apiVersion: number;
  /** throw these (COMPILE_FAILED, OVER_BUDGET, ...) from the accelerator hooks */
  DeviceError: typeof DeviceError;
  /** a host-memory buffer type (ArrayBuffer-backed, with hostView): enough for a device computing on the host */
  hostBufferType(name: string, alignment?: number): BufferType;
}

export interface DevicePluginEntry {
  name: string;
  create(options: DeviceOptions, host: DevicePluginHost): Device | Promise<Device>;
}

export interface DevicePluginModule {
  apiVersion: number;
  devices: DevicePluginEntry[];
}

/** Environment variable listing plug-in paths, separated by ':' (';' on Windows). */
export const DEVICE_PLUGINS_ENV = 'GGUF_EDGE_DEVICE_PLUGINS';

const KINDS: readonly DeviceKind[] = ['cpu', 'gpu', 'npu', 'sim'];
const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/i;
const REQUIRED = ['memory', 'bufferType', 'supportsOp', 'prefersOp', 'createBackend'] as const;
const OPTIONAL = ['prepareWeight', 'claimGroups', 'compileGroup', 'reserve', 'holdsWeight', 'describe'] as const;

const host: DevicePluginHost = { apiVersion: DEVICE_PLUGIN_API_VERSION, DeviceError, hostBufferType };
/** resolved paths already loaded (the flag and the environment may name the same file) */
const loaded = new Set<string>();

function invalid(path: string, problem: string): DeviceError {
  return new DeviceError('PLUGIN_INVALID', `device plug-in ${path}: ${problem}`);
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Checks a loaded module's shape; returns its device entries. */
export function validatePluginModule(path: string, mod: Record<string, unknown>): DevicePluginEntry[] {
  // named exports win; else the default export carries the fields
  const def = mod.default;
  const src = ('devices' in mod || 'apiVersion' in mod) ? mod : (def && typeof def === 'object' ? def as Record<string, unknown> : mod);
  const version = src.apiVersion;
  if (version === undefined) throw invalid(path, `no apiVersion export (expected \`export const apiVersion = ${DEVICE_PLUGIN_API_VERSION}\`)`);
  if (version !== DEVICE_PLUGIN_API_VERSION) throw invalid(path, `apiVersion ${JSON.stringify(version)} is not supported (this gguf-edge loads version ${DEVICE_PLUGIN_API_VERSION})`);
  const devices = src.devices;
  if (!Array.isArray(devices)) throw invalid(path, 'no devices array (expected `export const devices = [{ name, create(options, host) }]`)');
  if (devices.length === 0) throw invalid(path, 'the devices array is empty');
  const seen = new Set<string>();
  devices.forEach((e: unknown, i) => {
    const where = `devices[${i}]`;
    if (!e || typeof e !== 'object') throw invalid(path, `${where} is not an object`);
    const { name, create } = e as Record<string, unknown>;
    if (typeof name !== 'string') throw invalid(path, `${where}.name is not a string`);
    if (!NAME.test(name)) throw invalid(path, `${where}.name "${name}" is not a device name (letters, digits, '.', '_', '-'; at most 64)`);
    if (typeof create !== 'function') throw invalid(path, `${where} ("${name}"): create is not a function`);
    if (seen.has(name)) throw invalid(path, `device "${name}" is listed twice`);
    seen.add(name);
  });
  return devices as DevicePluginEntry[];
}

/** Checks what a plug-in's create() returned against the Device contract. */
export function validatePluginDevice(path: string, entryName: string, d: unknown): Device {
  const what = `device "${entryName}"`;
  if (!d || typeof d !== 'object') throw invalid(path, `${what}: create() returned ${d === null ? 'null' : typeof d}, not a device object`);
  const dev = d as Record<string, unknown>;
  if (dev.name !== entryName) throw invalid(path, `${what}: create() returned a device named ${JSON.stringify(dev.name)}`);
  if (!KINDS.includes(dev.kind as DeviceKind)) throw invalid(path, `${what}: kind ${JSON.stringify(dev.kind)} is not one of ${KINDS.join(', ')}`);
  if (typeof dev.description !== 'string') throw invalid(path, `${what}: description is not a string`);
  for (const m of REQUIRED) if (typeof dev[m] !== 'function') throw invalid(path, `${what}: ${m} is not a function`);
  for (const m of OPTIONAL) if (dev[m] !== undefined && typeof dev[m] !== 'function') throw invalid(path, `${what}: ${m} is present but not a function`);
  const shapes = dev.staticShapes;
  if (shapes !== undefined) {
    const ok = Array.isArray(shapes) && shapes.length > 0 && shapes.every((n, i) => Number.isInteger(n) && n > 0 && (i === 0 || n > shapes[i - 1]));
    if (!ok) throw invalid(path, `${what}: staticShapes must be a non-empty ascending list of positive token counts, got ${JSON.stringify(shapes)}`);
  }
  return d as Device;
}

/** Loads one plug-in module and registers its devices. A path already loaded is skipped. */
export async function loadDevicePlugin(path: string): Promise<string[]> {
  const { resolve } = await import('node:path');
  const { existsSync, statSync } = await import('node:fs');
  const { pathToFileURL } = await import('node:url');
  const abs = resolve(path);
  if (loaded.has(abs)) return [];
  if (!existsSync(abs)) throw invalid(path, 'file not found');
  if (!statSync(abs).isFile()) throw invalid(path, 'not a file');
  let mod: Record<string, unknown>;
  try {
    mod = await import(pathToFileURL(abs).href) as Record<string, unknown>;
  } catch (e) {
    throw invalid(path, `the module failed to load: ${messageOf(e)}`);
  }
  const entries = validatePluginModule(path, mod);
  const taken = new Set(deviceNames());
  for (const e of entries) if (taken.has(e.name)) throw invalid(path, `device name "${e.name}" is already registered`);
  for (const e of entries) {
    registerDevice(e.name, async (options) => {
      let d: unknown;
      try {
        d = await e.create({ ...options }, host);
      } catch (err) {
        throw invalid(path, `device "${e.name}": create() threw: ${messageOf(err)}`);
      }
      return validatePluginDevice(path, e.name, d);
    }, abs);
  }
  loaded.add(abs);
  return entries.map((e) => e.name);
}

/** Loads plug-ins in order (each path once); returns the device names they added. */
export async function loadDevicePlugins(paths: readonly string[]): Promise<string[]> {
  const names: string[] = [];
  for (const p of paths) names.push(...await loadDevicePlugin(p));
  return names;
}

/** Plug-in paths named by GGUF_EDGE_DEVICE_PLUGINS (empty entries ignored). */
export async function devicePluginsFromEnv(env: Record<string, string | undefined> = process.env): Promise<string[]> {
  const v = env[DEVICE_PLUGINS_ENV];
  if (!v) return [];
  const { delimiter } = await import('node:path');
  return v.split(delimiter).map((s) => s.trim()).filter((s) => s.length > 0);
}

/**
 * Takes the global `--device-plugin PATH` / `--device-plugin=PATH` options (repeatable) out of a
 * command line; everything after a `--` is left alone.
 */
export function takeDevicePluginArgs(argv: readonly string[]): { paths: string[]; rest: string[] } {
  const paths: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') { rest.push(...argv.slice(i)); break; }
    if (a === '--device-plugin') {
      const v = argv[i + 1];
      if (v === undefined || v.startsWith('-')) throw Object.assign(new Error('--device-plugin needs a PATH'), { code: 'USAGE' });
      paths.push(v);
      i++;
    } else if (a.startsWith('--device-plugin=')) {
      const v = a.slice('--device-plugin='.length);
      if (!v) throw Object.assign(new Error('--device-plugin needs a PATH'), { code: 'USAGE' });
      paths.push(v);
    } else rest.push(a);
  }
  return { paths, rest };
}

/** The CLI's start-up step: plug-ins from the environment, then from the command line. */
export async function loadStartupPlugins(argv: readonly string[], env: Record<string, string | undefined> = process.env): Promise<string[]> {
  const { paths, rest } = takeDevicePluginArgs(argv);
  await loadDevicePlugins([...await devicePluginsFromEnv(env), ...paths]);
  return rest;
}

/** Help text for the global option, shared by every command that takes a device. */
export const DEVICE_PLUGIN_HELP = `Device plug-ins (any command):
  --device-plugin PATH       load extra devices from an ES module (repeatable; also
                             ${DEVICE_PLUGINS_ENV}=a.js:b.js); see docs/devices.md`;

// Options shared by the commands that load and run a model (run, chat, bench): sampling,
// context and device flags, parsed once, documented once.
import type { ParseArgsConfig } from 'node:util';
import { UsageError } from '../api/errors.js';
import { getDevice, deviceNames, DEFAULT_DEVICE, type DeviceOptions } from '../backends/registry.js';
import { runsEverything } from '../backends/describe.js';
import { NPU_TARGETS } from '../backends/sim-npu/cost-model.js';
import type { Device } from '../backends/backend.js';
import type { SamplerParams } from '../runtime/sampler.js';
import { DEFAULT_NUMERICS } from '../backends/numerics.js';
import { FLASH_ATTN_MODES, type FlashAttnMode } from '../runtime/context.js';
import { isKvType, isQuantizedKv, KV_TYPES, type KvType } from '../graph/kv-type.js';

export function usage(message: string): UsageError {
  return new UsageError('USAGE', message);
}

/** A numeric option, or `def` when absent; a clear error when it is not a number. */
export function num(v: unknown, name: string, def: number): number {
  if (v === undefined) return def;
  const x = Number(v);
  if (typeof v !== 'string' || v.trim() === '' || !Number.isFinite(x)) throw usage(`--${name} needs a number, got "${String(v)}"`);
  return x;
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

export const samplingOptions: Options = {
  temp: { type: 'string' },
  'top-k': { type: 'string' },
  'top-p': { type: 'string' },
  'min-p': { type: 'string' },
  'repeat-penalty': { type: 'string' },
  'repeat-last-n': { type: 'string' },
  'frequency-penalty': { type: 'string' },
  'presence-penalty': { type: 'string' },
  seed: { type: 'string' },
};

export const SAMPLING_HELP = `Sampling (llama.cpp's defaults and order):
  --temp T                   temperature; 0 = greedy (default 0.8)
  --top-k K                  top-k (default 40; 0 = off)
  --top-p P                  top-p (default 0.95; 1 = off)
  --min-p P                  min-p (default 0.05; 0 = off)
  --repeat-penalty X         repetition penalty (default 1.0 = off)
  --repeat-last-n N          tokens the penalties look back (default 64)
  --frequency-penalty X      (default 0)
  --presence-penalty X       (default 0)
  --seed S                   sampling seed (default: random)`;

export function samplerParams(v: Values): Partial<SamplerParams> {
  return {
    temp: num(v.temp, 'temp', 0.8),
    topK: num(v['top-k'], 'top-k', 40),
    topP: num(v['top-p'], 'top-p', 0.95),
    minP: num(v['min-p'], 'min-p', 0.05),
    repeatPenalty: num(v['repeat-penalty'], 'repeat-penalty', 1),
    repeatLastN: num(v['repeat-last-n'], 'repeat-last-n', 64),
    frequencyPenalty: num(v['frequency-penalty'], 'frequency-penalty', 0),
    presencePenalty: num(v['presence-penalty'], 'presence-penalty', 0),
    seed: v.seed !== undefined ? num(v.seed, 'seed', 0) >>> 0 : undefined,
  };
}

export const contextOptions: Options = {
  ctx: { type: 'string', short: 'c' },
  'kv-type': { type: 'string' },
  'flash-attn': { type: 'string' },
  'swa-full': { type: 'boolean' },
  device: { type: 'string' },
  threads: { type: 'string', short: 't' },
  numerics: { type: 'string' },
  'npu-target': { type: 'string' },
  'npu-mem': { type: 'string' },
};

export function contextHelp(): string {
  return `Context and device:
  -c, --ctx N                KV cache size in tokens (default min(4096, training context))
  --kv-type f16|f32|q8_0|q4_0
                             KV cache element type, keys and values (default f16; llama.cpp's -ctk/-ctv).
                             q8_0 (34 bytes per 32 values, ~53% of f16) and q4_0 (18 bytes, ~28%) are stored as
                             llama.cpp quantizes them and need flash attention (auto turns it on; off is refused)
  --flash-attn on|off|auto   flash attention, llama.cpp's -fa with its numerics (online softmax, f16 accumulator;
                             no n_ctx x n_tokens score matrix). auto (default): on where the device prefers it,
                             or with a quantized --kv-type; the reference and cpu devices run it when on, but
                             auto leaves it off there for f16/f32 caches (slower than their non-flash path: WASM
                             emulates llama.cpp's FMAs and f16 roundings)
  --swa-full                 sliding-window layers (gemma2/3/4) keep full-size caches, llama.cpp's --swa-full.
                             Default: a ring of window + batch rows (padded to 256, its first window rows
                             mirrored; on the cpu and reference devices), which cannot give back what it
                             overwrote: a cached prompt prefix reaching back past the window is evaluated again
  --device NAME              compute device (${deviceNames().join(', ')}; default ${DEFAULT_DEVICE})
  -t, --threads N            threads for the cpu device (default: available cores)
  --numerics fast|exact      cpu matmul float order (default ${DEFAULT_NUMERICS}): fast (free-order Q8_0/Q4_0/Q4_K
                             kernels, within llama.cpp's parity tolerances) or exact (llama.cpp's x86 order,
                             bit-identical logits, slower)
  --npu-target ax8850|htp    sim-npu: the NPU whose published figures set simulated time (default ax8850)
  --npu-mem MiB              sim-npu: device memory capacity (default 7040, the AX-M1 card)`;
}

export function numericsFrom(v: Values): 'exact' | 'fast' | undefined {
  const n = v.numerics as string | undefined;
  if (n !== undefined && n !== 'exact' && n !== 'fast') throw usage(`--numerics must be fast or exact, got "${n}"`);
  return n;
}

export function flashAttn(v: Values): FlashAttnMode {
  const f = (v['flash-attn'] as string | undefined) ?? 'auto';
  if (!(FLASH_ATTN_MODES as readonly string[]).includes(f)) throw usage(`--flash-attn must be on, off or auto, got "${f}"`);
  return f as FlashAttnMode;
}

/** --swa-full: the sliding-window layers keep full-size caches (ContextOptions.swaFull) */
export function swaFull(v: Values): boolean {
  return v['swa-full'] === true;
}

/** --kv-type (keys and values); with a quantized type, --flash-attn off is refused (as llama.cpp does) */
export function kvType(v: Values): KvType {
  const t = (v['kv-type'] as string | undefined) ?? 'f16';
  if (!isKvType(t)) throw usage(`--kv-type must be one of ${KV_TYPES.join(', ')}, got "${t}"`);
  if (isQuantizedKv(t) && v['flash-attn'] === 'off') throw usage(`--kv-type ${t} needs flash attention (llama.cpp: "quantized V cache requires flash_attn"): use --flash-attn on or auto`);
  return t;
}

export function contextSize(v: Values, nCtxTrain: number): number {
  const n = Math.floor(num(v.ctx, 'ctx', Math.min(4096, nCtxTrain)));
  if (n < 1) throw usage(`--ctx must be at least 1, got ${n}`);
  return n;
}

/** Device and phase options shared by run, chat and bench (the scheduler's policy; see README "Devices and phases"). */
export const phaseOptions: Options = {
  'prefill-device': { type: 'string' },
  'decode-device': { type: 'string' },
  'offload-min-batch': { type: 'string' },
  'phase-policy': { type: 'string' },
};

export const PHASE_HELP = `Devices and phases (prefill = a batch of several tokens, decode = one):
  --prefill-device NAME      run every prefill op (or whole layer group) NAME supports there, whatever the batch
  --decode-device NAME       the same for decode; the KV cache lives on the decode device, and a prefill
                             elsewhere hands its new K/V rows over after each chunk
  --offload-min-batch N      without an explicit device, batches of at least N tokens go to an accelerator
                             that claims whole layers (default 32, as llama.cpp)
  --phase-policy manual|auto manual (default): the options above; auto: each phase on the device the cost
                             model (accelerators) or a timed run (cpu) predicts fastest among the cpu and the
                             devices named (e.g. --device sim-npu --phase-policy auto), reported on stderr`;

export interface PhaseSetup {
  /** holds the weights and runs what no accelerator takes */
  host: Device;
  /** priority order, host last */
  devices: Device[];
  prefillDevice?: Device;
  decodeDevice?: Device;
  offloadMinBatch: number;
  policy: 'manual' | 'auto';
}

/**
 * Resolves --device and the phase options. An accelerator named by --device (a device that claims whole
 * groups) runs both phases, the default device holding the weights and taking what it does not claim.
 * A per-op device that does not run every op (src/backends/describe.ts runsEverything) runs ahead of the
 * default device, which holds the weights and the KV cache and takes the rest.
 */
export async function phaseSetup(v: Values): Promise<PhaseSetup> {
  const o = deviceOptionsFrom(v);
  const get = (name: string) => getDevice(name, o);
  const policy = (v['phase-policy'] as string | undefined) ?? 'manual';
  if (policy !== 'manual' && policy !== 'auto') throw usage(`--phase-policy must be manual or auto, got "${policy}"`);
  const minBatch = Math.floor(num(v['offload-min-batch'], 'offload-min-batch', 32));
  if (minBatch < 1) throw usage(`--offload-min-batch must be at least 1, got ${minBatch}`);
  const main = await get((v.device as string | undefined) ?? DEFAULT_DEVICE);
  const isAccel = (d: Device) => !!d.claimGroups || d.kind === 'npu';
  // a per-op device that claims only part of the op set (a plug-in) runs ahead of the default device too
  const host = isAccel(main) || !runsEverything(main) ? await get(DEFAULT_DEVICE) : main;
  // manual: an accelerator named by --device runs both phases; auto: it is a candidate the policy weighs per phase
  const forceMain = isAccel(main) && policy === 'manual';
  const prefillDevice = v['prefill-device'] !== undefined ? await get(v['prefill-device'] as string) : forceMain ? main : undefined;
  const decodeDevice = v['decode-device'] !== undefined ? await get(v['decode-device'] as string) : forceMain ? main : undefined;
  const devices: Device[] = [];
  for (const d of [main, prefillDevice, decodeDevice]) if (d && d !== host && !devices.includes(d)) devices.push(d);
  devices.push(host);
  return { host, devices, prefillDevice, decodeDevice, offloadMinBatch: minBatch, policy };
}

/** The device options of the context options (--threads, --numerics, --npu-target, --npu-mem). */
export function deviceOptionsFrom(v: Values): DeviceOptions {
  const threads = v.threads !== undefined ? Math.max(1, Math.floor(num(v.threads, 'threads', 1))) : undefined;
  const npuTarget = v['npu-target'] as string | undefined;
  if (npuTarget !== undefined && !Object.hasOwn(NPU_TARGETS, npuTarget)) throw usage(`--npu-target must be one of ${Object.keys(NPU_TARGETS).join(', ')}, got "${npuTarget}"`);
  const npuMemMiB = v['npu-mem'] !== undefined ? num(v['npu-mem'], 'npu-mem', 0) : undefined;
  if (npuMemMiB !== undefined && !(npuMemMiB > 0)) throw usage(`--npu-mem must be a positive number of MiB, got "${v['npu-mem']}"`);
  return { threads, numerics: numericsFrom(v), npuTarget, npuMemMiB };
}

export async function deviceFrom(v: Values): Promise<Device> {
  return getDevice((v.device as string | undefined) ?? DEFAULT_DEVICE, deviceOptionsFrom(v));
}

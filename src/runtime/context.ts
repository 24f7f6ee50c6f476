// A Context: one sequence's KV cache (allocated once), the scheduler with its one compute arena per
// device (sized at creation for the worst case, as ggml_backend_sched_reserve does), and a bounded
// set of per-shape plans. decode() evaluates a batch of tokens at the next positions and returns logits.
//
// Phases: a batch of several tokens is a prefill, one token a decode. An accelerator that takes whole
// groups (an NPU) runs its phase at static shapes: prefill in chunks of its largest shape, shorter
// chunks padded (the padding's K/V rows land past the real tokens and are overwritten before any
// query reads them). Everything a phase needs is planned and compiled here, at creation; decode
// allocates nothing.
//
// KV hand-over: the cache lives where decode runs (its copy is the primary). A device that runs a
// prefill elsewhere keeps its own copy: before a chunk it receives the rows it lacks, after the chunk
// the chunk's new rows go to the primary. Every such copy is counted (bytes, simulated time).
//
// Sequences (nSeq > 1, continuous batching): the cache holds one region of seqStride rows per sequence
// (seqStride = seqCtx = floor(nCtx / nSeq) rounded up to 64, so a region starts where the attention
// kernels' 16- and 64-row lanes do and a sequence's attention is computed as in a cache of its own); the
// graphs carry inp_kv_rows (the cache row of each token) besides the positions, so one plan per
// (tokens, outputs) serves any mix of sequences and positions. decodeSeqs() evaluates several sequences'
// tokens in one graph: one pass over the weights for all of them. Such contexts run on devices that
// declare multiSequence (the host devices); group-claiming accelerators are refused (UNSUPPORTED).

import type { Device, DeviceBuffer, Phase, Placement } from '../backends/backend.js';
import { DeviceError, tensorBytes } from '../backends/backend.js';
import { isKvType, isQuantizedKv, KV_TYPES, type KvType } from '../graph/kv-type.js';
import { rowBytes } from '../gguf/ggml-types.js';
import type { Graph, TensorDesc } from '../graph/graph.js';
import { readTensorData } from '../gguf/reader.js';
import { buildTransformer } from '../models/transformer.js';
import { cacheRopes, KvShifter, type KeyRope } from './kv-shift.js';
import { Profiler } from '../sched/profile.js';
import { Scheduler, type Plan, type PlanKey } from '../sched/scheduler.js';
import type { Model } from './model.js';
import { SwaRing, swaRingShape } from './swa-ring.js';

export interface ContextOptions {
  /** KV cache size in tokens */
  nCtx: number;
  /** the cache's element type, keys and values (default f16); q8_0 / q4_0 need flash attention (kv-type.ts) */
  kvType?: KvType;
  /** largest batch evaluated at once on devices without static shapes (a longer prompt is split) */
  nBatch?: number;
  /** devices in priority order, the host (supports every op) last; default: the device holding the weights */
  devices?: Device[];
  /** an explicit device per phase: it takes every op (or claimed group) of its phase it supports, whatever the batch */
  prefillDevice?: Device;
  decodeDevice?: Device;
  /** without an explicit device, batches of at least this many tokens go to group-claiming accelerators (default 32) */
  offloadMinBatch?: number;
  /** collect a per-op profile (and a trace) of every evaluation */
  profiler?: Profiler;
  /** per-shape plans kept at once besides the ones made at creation (default 8; least recently used go first) */
  maxPlans?: number;
  /** independent sequences sharing this context's KV cache (default 1); each has floor(nCtx / nSeq) slots */
  nSeq?: number;
  /**
   * llama.cpp's flash-attention numerics (online softmax, f16 accumulator; no n_ctx x n_tokens score matrix):
   * 'on', 'off' (this class's default: the non-flash numerics every caller had before), or 'auto': on when
   * every device of the context prefers it (Device.flashAttention 'preferred'; the CLI's and the library's
   * createContext default). The reference and cpu devices support it without preferring it: on the cpu device
   * llama.cpp's f16 accumulator and FMAs must be emulated in WASM, which is slower than its non-flash path.
   */
  flashAttn?: FlashAttnMode | boolean;
  /**
   * Sliding-window layers keep nCtx rows like the others (llama.cpp's --swa-full) instead of a ring of their
   * window plus nBatch (src/runtime/swa-ring.ts). A ring cannot give back a prefix it has overwritten: with it,
   * a truncate() past the window (prompt-cache reuse) keeps nothing, and a context shift whose window reaches
   * the kept prefix evaluates again.
   */
  swaFull?: boolean;
}

export type FlashAttnMode = 'on' | 'off' | 'auto';
export const FLASH_ATTN_MODES: readonly FlashAttnMode[] = ['on', 'off', 'auto'];

/** flashAttn as a Context resolves it for its devices and KV type (a quantized cache turns 'auto' on and refuses 'off') */
export function resolveFlashAttn(mode: FlashAttnMode | boolean | undefined, devices: readonly Device[], kvType: KvType = 'f16'): boolean {
  if (mode === true || mode === 'on') return true;
  if (isQuantizedKv(kvType)) {
    if (mode === 'auto' || mode === undefined) return true;
    // llama.cpp: "quantized V cache requires flash_attn"; its K-only quantized cache (non-flash K·Q) is not built here
    throw new ContextError('BAD_ARGUMENT', `a ${kvType} KV cache needs flash attention (as llama.cpp's quantized cache does): use flashAttn 'on' or 'auto', not ${String(mode)}`);
  }
  if (mode === undefined || mode === false || mode === 'off') return false;
  if (mode !== 'auto') throw new ContextError('BAD_ARGUMENT', `flashAttn must be 'on', 'off' or 'auto', got ${String(mode)}`);
  return devices.length > 0 && devices.every((d) => d.flashAttention === 'preferred');
}

/** One sequence's tokens in a decodeSeqs() batch, and which of their logits to return. */
export interface SeqTokens {
  seq: number;
  tokens: ArrayLike<number>;
  /** 'last': the last token's logits (1 row), 'all': every token's (tokens.length rows), 'none': none */
  logits: 'last' | 'all' | 'none';
}

export class ContextError extends Error {
  constructor(readonly code: 'CONTEXT_FULL' | 'BAD_TOKEN' | 'BAD_ARGUMENT' | 'BAD_SEQUENCE' | 'NOT_READY' | 'OVER_BUDGET' | 'RECURRENT_STATE' | 'UNSUPPORTED', message: string) {
    super(message);
    this.name = 'ContextError';
  }
}

interface CachedPlan {
  plan: Plan;
  /** per KV leaf: index of the cache copy the plan reads and writes (-1: none) */
  kv: Int32Array;
}

/**
 * One persistent state tensor and its copies on the devices that run it. A layer's K or V cache has one row
 * per position (`valid`: the rows of a copy that are current). A recurrent layer's state (lfm2/qwen35 conv
 * state, delta-rule state) is one whole row that every token updates in place (`valid`: the position the
 * copy is at, -1 when stale); it cannot be rolled back to an earlier position.
 */
interface KvLeaf {
  name: string;
  /** a sliding-window layer's ring (rows by SwaRing.row, not by position) */
  ring: boolean;
  rowBytes: number;
  recurrent: boolean;
  copies: { device: Device; placement: Placement; valid: number }[];
  /** the copy decode uses */
  primary: number;
}

const stateBytes = (t: TensorDesc) => tensorBytes(t, rowBytes);

const planKeyNum = (k: PlanKey, cap: number) => (((k.accel ? 1 : 0) * 2 + (k.phase === 'decode' ? 1 : 0)) * (cap + 1) + k.nTokens) * (cap + 1) + k.nOutputs;

export class Context {
  readonly nCtx: number;
  readonly kvType: KvType;
  /** attention runs with llama.cpp's flash-attention numerics (ContextOptions.flashAttn resolved) */
  readonly flashAttn: boolean;
  readonly nBatch: number;
  readonly nVocab: number;
  /** the model has recurrent layers: their state follows every token and cannot be truncated to an earlier position */
  recurrent = false;
  private readonly hasRecurrentLayers: boolean;
  /** independent sequences sharing the cache */
  readonly nSeq: number;
  /** cache slots of each sequence: floor(nCtx / nSeq) */
  readonly seqCtx: number;
  /** cache rows between two sequences' regions (seqCtx rounded up to 64); 0 with one sequence */
  private readonly seqStride: number;
  /** tokens cached per sequence */
  private readonly past: Int32Array;
  /** decodeSeqs scratch: tokens per sequence in the batch being checked, then the running positions */
  private readonly seqRun: Int32Array;
  private seqTotal = 0;
  private seqOutputs = 0;
  /** per graph output row of the last staged evaluation: its entry-order output; seqPermuted: not the identity */
  private readonly seqPerm: Int32Array;
  private seqPermuted = false;
  private seqScratch = new Float32Array(0);
  /** decodeSeqs evaluates its own plans (one cache copy, no accelerator); else it goes through decode() */
  private seqDirect = false;
  /** decodeSeqs' result rows (grown as needed) and the last view of them handed out, with its resolved promise */
  private seqOut = new Float32Array(0);
  private seqView = new Float32Array(0);
  private seqResolved: Promise<Float32Array> = Promise.resolve(this.seqView);
  /** tokens currently in the KV cache (sequence 0's) */
  get nPast(): number { return this.past[0]!; }
  set nPast(n: number) { this.past[0] = n; }
  /** KV slots allocated: nCtx plus room for a padded chunk's overhang (several sequences: nSeq regions of seqStride rows) */
  readonly kvCapacity: number;
  readonly sched: Scheduler;
  readonly profiler?: Profiler;
  private readonly kv: KvLeaf[] = [];
  private readonly stateBuffers: DeviceBuffer[] = [];
  /** plans made at creation (decode, static shapes), kept for the context's life */
  private readonly pinned = new Map<number, CachedPlan>();
  /** other shapes' plans, least recently used first */
  private readonly plans = new Map<number, CachedPlan>();
  private readonly maxPlans: number;
  private decodePlan: CachedPlan | undefined;
  private readonly prefillShapes: number[];
  private logits: Float32Array;
  private logitsResolved: Promise<Float32Array>;
  private pending: Promise<void> | undefined;
  private closed = false;
  /** decodeSeqs' last plan (several tokens), reused while the shape stays */
  private lastSeq: { m: number; nOut: number; c: CachedPlan } | undefined;
  /** the sliding-window layers' rings (undefined: those layers keep nCtx rows, swaFull or nothing to save) */
  readonly swaRing: SwaRing | undefined;
  /** the context shift's per-cache RoPE and scratch, made at the first shift */
  private shift: { ropes: Map<string, KeyRope | null>; shifter: KvShifter } | undefined;

  constructor(readonly model: Model, opts: ContextOptions) {
    const hp = model.hp;
    if (!(opts.nCtx > 0) || !Number.isInteger(opts.nCtx)) throw new ContextError('BAD_ARGUMENT', `context size must be a positive integer, got ${opts.nCtx}`);
    this.nCtx = opts.nCtx;
    const nSeq = opts.nSeq ?? 1;
    if (!Number.isInteger(nSeq) || nSeq < 1 || nSeq > this.nCtx) throw new ContextError('BAD_ARGUMENT', `nSeq must be an integer in 1..nCtx (${this.nCtx}), got ${opts.nSeq}`);
    this.nSeq = nSeq;
    this.seqCtx = Math.floor(this.nCtx / nSeq);
    this.seqStride = nSeq > 1 ? Math.ceil(this.seqCtx / 64) * 64 : 0;
    this.past = new Int32Array(nSeq);
    this.seqRun = new Int32Array(nSeq);
    const kvType = opts.kvType ?? 'f16';
    if (!isKvType(kvType)) throw new ContextError('BAD_ARGUMENT', `kvType must be one of ${KV_TYPES.join(', ')}, got ${String(kvType)}`);
    if (isQuantizedKv(kvType) && (hp.headDimK % 32 !== 0 || hp.headDimV % 32 !== 0)) {
      throw new ContextError('UNSUPPORTED', `a ${kvType} KV cache stores heads in 32-value blocks; ${hp.arch}'s heads have ${hp.headDimK} / ${hp.headDimV} values`);
    }
    this.kvType = kvType;
    this.nBatch = Math.max(1, Math.min(Math.floor(opts.nBatch ?? 512), this.nCtx));
    this.seqPerm = new Int32Array(this.nBatch);
    this.nVocab = hp.nVocab;
    this.maxPlans = Math.max(1, opts.maxPlans ?? 8);
    this.profiler = opts.profiler;
    const weightDevice = model.placements.values().next().value?.device;
    const devices = opts.devices ?? (weightDevice ? [weightDevice] : []);
    this.flashAttn = resolveFlashAttn(opts.flashAttn, devices, this.kvType);
    this.sched = new Scheduler({
      devices, weights: { get: (t) => model.placements.get(t.name) },
      phaseDevice: { prefill: opts.prefillDevice, decode: opts.decodeDevice },
      offloadMinBatch: opts.offloadMinBatch, profiler: opts.profiler,
    });
    if (nSeq > 1 && (this.sched.accelerators('prefill').length || this.sched.accelerators('decode').length)) {
      const names = [...new Set([...this.sched.accelerators('prefill'), ...this.sched.accelerators('decode')].map((d) => d.name))].join(', ');
      throw new ContextError('UNSUPPORTED', `several sequences (nSeq = ${nSeq}) cannot run on ${names}: its static-shape engines take one sequence; use nSeq = 1 or the cpu device`);
    }
    this.prefillShapes = this.sched.staticShapes('prefill', this.nBatch);
    // Rings need one copy of each cache addressed by row (host devices, nothing handed over between devices).
    const ringShape = opts.swaFull || !hp.swaLayers.some((x) => x) ? undefined : swaRingShape(hp.slidingWindow, this.nBatch, this.seqCtx);
    const hostOnly = this.sched.devices.every((d) => d.multiSequence === true) && !this.sched.accelerators('prefill').length && !this.sched.accelerators('decode').length;
    this.swaRing = ringShape && hostOnly ? new SwaRing(ringShape, nSeq) : undefined;
    this.hasRecurrentLayers = hp.layerKinds.some((k) => k !== 'attention');
    const maxStatic = this.prefillShapes.length ? this.prefillShapes[this.prefillShapes.length - 1]! : 1;
    this.kvCapacity = nSeq > 1 ? nSeq * this.seqStride : this.nCtx + maxStatic - 1;
    this.logits = new Float32Array(this.nVocab);
    this.logitsResolved = Promise.resolve(this.logits);

    // Load time: the accelerators claim and compile their groups for every (phase, static shape).
    const compiles: Promise<void>[] = [];
    const claim = (phase: Phase, nTok: number, nOut: number) => {
      const g = this.graph(nTok, nOut);
      const wb = (id: number) => readTensorData(model.file, g.tensors[id]!.name);
      const wt = (id: number) => model.file.tensorsByName.get(g.tensors[id]!.name)!.type;
      const r = this.sched.claim(g, phase, { weightBytes: wb, weightType: wt });
      if (r) compiles.push(r);
    };
    for (const s of this.prefillShapes) { claim('prefill', s, 1); if (s > 1) claim('prefill', s, s); }
    if (this.sched.accelerators('decode').length) claim('decode', 1, 1);
    if (compiles.length) this.pending = Promise.all(compiles).then(() => { this.pending = undefined; this.setup(); });
    else this.setup();
  }

  /** Creates a context and waits for its load-time compiles. */
  static async create(model: Model, opts: ContextOptions): Promise<Context> {
    const c = new Context(model, opts);
    await c.ready();
    return c;
  }

  /** Resolves once every load-time compile is done and the plans are made. */
  async ready(): Promise<void> { if (this.pending) await this.pending; }

  private graph(nTok: number, nOut: number): Graph {
    const seqs = this.seqStride ? { seqStride: this.seqStride } : {};
    const r = this.swaRing;
    const ring = r ? { swaRing: { rows: r.rows, ...(this.nSeq > 1 ? { seqStride: r.stride } : {}) } } : {};
    const g = buildTransformer(this.model.spec, this.model.hp, this.model.weights, { nTokens: nTok, nOutputs: nOut, nCtx: this.kvCapacity, kvType: this.kvType, flashAttn: this.flashAttn, ...seqs, ...ring });
    // several sequences need a graph that addresses their cache regions, and no state that is not per row (a recurrent layer's)
    if (this.seqStride && (g.inputs.kvRows === undefined || g.tensors.some((t) => t.role === 'state' && !t.name.startsWith('cache_')))) {
      throw new ContextError('UNSUPPORTED', `${this.model.hp.arch}: its graph does not address several sequences (nSeq = ${this.nSeq}); use nSeq = 1`);
    }
    return g;
  }

  /** The shapes whose worst cases size the arenas: every (phase, structure, device assignment) the context can run. */
  private worstCases(): { graph: Graph; key: PlanKey }[] {
    const out: { graph: Graph; key: PlanKey }[] = [];
    const add = (phase: Phase, nTok: number, nOut: number, accel: boolean) => out.push({ graph: this.graph(nTok, nOut), key: { phase, nTokens: nTok, nOutputs: nOut, accel } });
    add('decode', 1, 1, this.sched.offloads('decode', 1));
    // prefill on the accelerators: its static shapes (last row, or every row)
    if (this.sched.accelerators('prefill').length) for (const s of this.prefillShapes) { add('prefill', s, 1, true); if (s > 1) add('prefill', s, s, true); }
    // prefill op by op: batches 1..maxDyn; per-op accelerators may change the assignment with the batch,
    // so the largest batch of each distinct assignment is a worst case
    const maxDyn = this.sched.phaseDevice('prefill')?.claimGroups ? 0
      : this.sched.accelerators('prefill').length ? Math.min(this.nBatch, this.sched.offloadMinBatch - 1) : this.nBatch;
    if (maxDyn >= 1) {
      const perOpAccel = this.sched.devices.some((d) => d !== this.sched.host && !d.claimGroups);
      const tops: number[] = [];
      if (perOpAccel) {
        let prev = '';
        for (let b = 1; b <= maxDyn; b++) {
          const sig = this.sched.signature(this.graph(b, b), { phase: 'prefill', nTokens: b, nOutputs: b, accel: false });
          if (sig !== prev && b > 1) tops.push(b - 1);
          prev = sig;
        }
      }
      tops.push(maxDyn);
      for (const b of tops) { add('prefill', b, b, false); if (b > 1) add('prefill', b, b - 1, false); }
    }
    return out;
  }

  /** Claims, reservations, KV copies, arenas and the load-time plans. */
  private setup(): void {
    let worst = this.worstCases();
    // Each accelerator's reservation (weights it holds, its KV copies, its arena) must fit: drop its
    // last claimed group until it does (those groups run on the next device).
    for (const d of this.sched.devices) {
      if (!d.reserve) continue;
      for (;;) {
        const arena = this.sched.reserve(worst, true).get(d) ?? 0;
        const { weights, kv } = this.deviceNeeds(d, worst);
        try { d.reserve({ weights, kv, scratch: arena }); break; } catch (e) {
          if (!(e instanceof DeviceError) || e.code !== 'OVER_BUDGET') throw e;
          const groups = this.sched.claimedGroups().get(d) ?? [];
          if (!groups.length) throw new ContextError('OVER_BUDGET', `${d.name}: ${e.message}`);
          this.sched.dropGroup(d, groups[groups.length - 1]!, `OVER_BUDGET: ${e.message}`);
          worst = this.worstCases();
        }
      }
    }
    // State copies (KV caches, recurrent states): every device that reads a state tensor in any worst case;
    // decode's is the primary.
    const byDevice = worst.map((w) => this.sched.stateDevices(w.graph, w.key));
    const g0 = worst[0]!.graph, ringCaches = new Set<number>();
    for (const t of g0.tensors) if (t.op === 'kv_store' && t.src[2] === g0.inputs.swaRows) ringCaches.add(t.src[0]!);
    for (const t of g0.tensors) {
      if (t.role !== 'state') continue;
      const recurrent = !t.name.startsWith('cache_');
      const leaf: KvLeaf = { name: t.name, ring: ringCaches.has(t.id), rowBytes: recurrent ? stateBytes(t) : stateBytes(t) / t.shape[1]!, recurrent, copies: [], primary: 0 };
      const devs: Device[] = [];
      for (const m of byDevice) { const d = m.get(t.name); if (d && !devs.includes(d)) devs.push(d); }
      const primary = byDevice[0]!.get(t.name) ?? devs[0] ?? this.sched.host;
      if (!devs.includes(primary)) devs.unshift(primary);
      for (const d of devs) {
        const nBytes = stateBytes(t);
        const buf = d.bufferType().allocate(nBytes, 'state');
        // Touch every page now: memory use is then flat from the first token on, and a cache that
        // does not fit fails here rather than mid-generation. (A recurrent state starts at zeros.)
        buf.clear();
        this.stateBuffers.push(buf);
        leaf.copies.push({ device: d, placement: { buffer: buf, offset: 0, nBytes }, valid: 0 });
      }
      leaf.primary = devs.indexOf(primary);
      // several sequences keep one copy: decodeSeqs does no hand-over (accelerators are refused above)
      if (leaf.ring && leaf.copies.length > 1) throw new ContextError('UNSUPPORTED', `${t.name} (a sliding-window ring) would be read on ${devs.map((d) => d.name).join(' and ')}; use one device for attention or swaFull`);
      if (this.nSeq > 1 && leaf.copies.length > 1) throw new ContextError('UNSUPPORTED', `several sequences (nSeq = ${this.nSeq}): ${t.name} would be read on ${devs.map((d) => d.name).join(' and ')}; use one device for attention`);
      this.kv.push(leaf);
      if (recurrent) this.recurrent = true;
    }
    this.seqDirect = this.kv.every((l) => l.copies.length === 1) && !this.sched.accelerators('prefill').length && !this.sched.accelerators('decode').length;
    const kvIndex = new Map(this.kv.map((l, i) => [l.name, i]));
    this.sched.setStates((t: TensorDesc, d: Device) => {
      const leaf = this.kv[kvIndex.get(t.name) ?? -1];
      return leaf?.copies.find((c) => c.device === d)?.placement;
    });
    // One arena per device, then every worst case's plan (binding kernels and their scratch at the
    // largest shapes now); the decode and static-shape plans stay for the context's life.
    this.sched.reserve(worst);
    for (const w of worst) {
      const c = this.cached(w.graph, w.key);
      const keep = w.key.phase === 'decode' || w.key.accel;
      if (keep) this.pinned.set(planKeyNum(w.key, this.kvCapacity), c);
      else this.remember(planKeyNum(w.key, this.kvCapacity), c);
      if (w.key.phase === 'decode') this.decodePlan = c;
    }
  }

  /** weight and KV bytes device `d` keeps for the groups it claims in the worst cases */
  private deviceNeeds(d: Device, worst: { graph: Graph; key: PlanKey }[]): { weights: number; kv: number } {
    const held = new Set<string>();
    const kv = new Set<string>();
    let weights = 0, kvBytes = 0;
    for (const w of worst) {
      const states = this.sched.stateDevices(w.graph, w.key);
      for (const [name, sd] of states) {
        if (sd !== d || kv.has(name)) continue;
        kv.add(name);
        kvBytes += stateBytes(w.graph.tensors.find((x) => x.name === name)!);
      }
      const owner = this.sched.groupOwners(w.graph, w.key);
      for (const id of w.graph.nodes) {
        const t = w.graph.tensors[id]!;
        if (t.group === undefined || owner.get(t.group) !== d) continue;
        for (const s of t.src) {
          const st = w.graph.tensors[s]!;
          if (st.role !== 'weight' || held.has(st.name) || !d.holdsWeight?.(st.name)) continue;
          held.add(st.name);
          weights += this.model.file.tensorsByName.get(st.name)?.nBytes ?? 0;
        }
      }
    }
    return { weights, kv: kvBytes };
  }

  private cached(g: Graph, key: PlanKey): CachedPlan {
    const plan = this.sched.plan(g, key);
    const kv = new Int32Array(this.kv.length).fill(-1);
    this.kv.forEach((leaf, i) => {
      const d = plan.stateDevice.get(leaf.name);
      if (d) kv[i] = leaf.copies.findIndex((c) => c.device === d);
    });
    return { plan, kv };
  }

  private remember(k: number, c: CachedPlan): void {
    this.plans.set(k, c);
    while (this.plans.size > this.maxPlans) {
      const [oldest, old] = this.plans.entries().next().value as [number, CachedPlan];
      this.plans.delete(oldest);
      if (this.lastSeq?.c === old) this.lastSeq = undefined;
      old.plan.free();
    }
  }

  private check(): void {
    if (this.closed) throw new ContextError('BAD_ARGUMENT', 'context is closed');
    if (this.pending || !this.decodePlan) throw new ContextError('NOT_READY', 'context is still compiling for its devices: await ctx.ready() (or use Context.create)');
  }

  /** The plan for `m` real tokens of `phase` with `nOut` outputs (1: the last token's, m: every token's). */
  private planFor(phase: Phase, m: number, nOut: number): CachedPlan {
    if (phase === 'decode' && nOut === 1) return this.decodePlan!;
    const accel = this.sched.offloads(phase, m);
    let nTok = m;
    if (accel) nTok = (phase === 'decode' ? [1] : this.prefillShapes).find((s) => s >= m) ?? m;
    const key: PlanKey = { phase, nTokens: nTok, nOutputs: nOut === m ? nTok : 1, accel };
    const k = planKeyNum(key, this.kvCapacity);
    const p = this.pinned.get(k);
    if (p) return p;
    let c = this.plans.get(k);
    if (c) {
      this.plans.delete(k); // most recently used last
      this.plans.set(k, c);
      return c;
    }
    c = this.cached(this.graph(key.nTokens, key.nOutputs), key);
    this.remember(k, c);
    return c;
  }

  /** Device assignment of a batch shape's plan, for reports (`devices` command, tests). */
  describePlan(nTok: number): { device: string; nodes: number; group?: string }[] {
    this.check();
    const c = this.planFor(nTok > 1 ? 'prefill' : 'decode', nTok, 1);
    return c.plan.splits.map((s) => ({ device: s.device.name, nodes: s.nodes.length, ...(s.group ? { group: s.group } : {}) }));
  }

  /** Tokens of a chunk starting at `start` of an n-token batch. */
  private chunk(phase: Phase, n: number, start: number): number {
    const rest = n - start;
    if (phase === 'prefill' && this.prefillShapes.length && this.hasRecurrentLayers) {
      // Padding a chunk up to a static shape would run the recurrent layers over the pad tokens and
      // advance their state past the prompt: only chunks that fill a shape exactly (down to 1 token)
      // go to the accelerator; without one that fits, op by op within the dynamic plans' sizes.
      let s = 0;
      for (const x of this.prefillShapes) if (x <= rest) s = x;
      if (s > 0 && this.sched.offloads('prefill', s)) return s;
      return Math.max(1, Math.min(rest, this.nBatch, this.sched.offloadMinBatch - 1));
    }
    if (phase === 'prefill' && this.prefillShapes.length) {
      const s = Math.min(rest, this.prefillShapes[this.prefillShapes.length - 1]!);
      if (this.sched.offloads('prefill', s)) return s;
    }
    return Math.min(rest, this.nBatch);
  }

  /**
   * Evaluates `tokens` at positions nPast.. and returns the logits: of the last token
   * (length nVocab), or of every token when `allLogits` (length n * nVocab).
   */
  decode(tokens: ArrayLike<number>, allLogits = false): Promise<Float32Array> {
    const n = tokens.length;
    if (n === 0) return Promise.reject(new ContextError('BAD_ARGUMENT', 'decode needs at least one token'));
    if (this.nPast + n > this.seqCtx) return Promise.reject(new ContextError('CONTEXT_FULL', `context is full: ${this.nPast} + ${n} tokens > ${this.seqCtx} (raise --ctx)`));
    for (let i = 0; i < n; i++) {
      const t = tokens[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= this.nVocab) return Promise.reject(new ContextError('BAD_TOKEN', `token id ${t} is outside the vocabulary (0..${this.nVocab - 1})`));
    }
    if (this.closed) return Promise.reject(new ContextError('BAD_ARGUMENT', 'context is closed'));
    // the decode fast path: one token on synchronous backends, nothing allocated
    if (n === 1 && !allLogits && !this.pending && !this.profiler && this.decodePlan!.plan.sync) {
      this.step(this.decodePlan!, tokens, 0, 1, false);
      this.sched.computeSync(this.decodePlan!.plan);
      this.after(this.decodePlan!, 1);
      this.decodePlan!.plan.readOutput(this.logits);
      return this.logitsResolved;
    }
    return this.decodeBatch(tokens, allLogits);
  }

  private async decodeBatch(tokens: ArrayLike<number>, allLogits: boolean): Promise<Float32Array> {
    await this.ready();
    this.check();
    const n = tokens.length;
    const phase: Phase = n > 1 ? 'prefill' : 'decode';
    const out = allLogits ? new Float32Array(n * this.nVocab) : this.logits;
    if (this.profiler) this.profiler.phase = phase;
    for (let start = 0; start < n;) {
      const m = this.chunk(phase, n, start);
      const c = this.planFor(phase, m, allLogits ? m : 1);
      this.step(c, tokens, start, m, allLogits);
      await this.sched.compute(c.plan);
      this.after(c, m);
      this.profiler?.evaluated(m);
      if (allLogits) c.plan.readOutput(out.subarray(start * this.nVocab, (start + m) * this.nVocab));
      else if (start + m === n) c.plan.readOutput(out);
      start += m;
    }
    return out;
  }

  /** Stages a chunk's inputs (padding a static shape past the real tokens) and brings its KV copies up to date. */
  private step(c: CachedPlan, tokens: ArrayLike<number>, start: number, m: number, allLogits: boolean): void {
    const p = c.plan, pos0 = this.nPast;
    for (let i = 0; i < m; i++) { p.tokens[i] = tokens[start + i]!; p.positions[i] = pos0 + i; }
    for (let i = m; i < p.nTokens; i++) { p.tokens[i] = 0; p.positions[i] = pos0 + i; }
    if (p.swaRows) {
      const r = this.swaRing!;
      for (let i = 0; i < p.nTokens; i++) { const row = r.row(0, pos0 + i); p.swaRows[i] = row; p.swaMirror![i] = r.mirror(row); }
    }
    if (allLogits) for (let i = 0; i < p.nOutputs; i++) p.outRows[i] = i;
    else p.outRows[0] = m - 1;
    // sequence 0's region starts at row 0 (one copy of the cache: no hand-over)
    if (p.kvRows) {
      p.kvRows.set(p.positions);
      p.batchRows![0] = p.nTokens; // every row in the batch order (graph.ts inp_batch_rows): as a one-sequence graph
      p.batchRows![1] = p.nOutputs;
      p.upload();
      return;
    }
    p.upload();
    for (let i = 0; i < this.kv.length; i++) {
      const ci = c.kv[i]!;
      if (ci < 0) continue;
      const leaf = this.kv[i]!, copy = leaf.copies[ci]!;
      if (leaf.recurrent) {
        // a recurrent state is current or not at all: the device that ran the last chunk elsewhere hands it over whole
        if (copy.valid === pos0) continue;
        this.copyRows(leaf, leaf.copies[leaf.primary]!, copy, 0, 1, 'to_prefill');
        copy.valid = pos0;
        continue;
      }
      if (copy.valid >= pos0) continue;
      // a prefill device lacking rows (decoded elsewhere since its last chunk) receives them first
      const from = leaf.copies[leaf.primary]!;
      this.copyRows(leaf, from, copy, copy.valid, pos0, 'to_prefill');
      copy.valid = pos0;
    }
  }

  /** After a chunk of `m` tokens: the writer's rows are current, the others' stop at the chunk; hand over to the primary. */
  private after(c: CachedPlan, m: number): void {
    const pos0 = this.nPast, end = pos0 + m;
    this.swaRing?.commit(0, end);
    if (this.nSeq > 1) { this.nPast = end; return; }
    for (let i = 0; i < this.kv.length; i++) {
      const ci = c.kv[i]!;
      if (ci < 0) continue;
      const leaf = this.kv[i]!;
      for (let j = 0; j < leaf.copies.length; j++) {
        const cp = leaf.copies[j]!;
        if (j === ci) cp.valid = end;
        else if (leaf.recurrent) cp.valid = -1;
        else if (cp.valid > pos0) cp.valid = pos0;
      }
      if (ci !== leaf.primary && leaf.recurrent) {
        this.copyRows(leaf, leaf.copies[ci]!, leaf.copies[leaf.primary]!, 0, 1, 'to_decode');
        leaf.copies[leaf.primary]!.valid = end;
      } else if (ci !== leaf.primary) {
        const prim = leaf.copies[leaf.primary]!;
        this.copyRows(leaf, leaf.copies[ci]!, prim, pos0, end, 'to_decode');
        prim.valid = end;
      }
    }
    this.nPast = end;
  }

  /** Tokens cached for sequence `seq`. */
  seqPast(seq: number): number {
    const e = this.seqError(seq);
    if (e) throw e;
    return this.past[seq]!;
  }

  /** Drops sequence `seq`'s cached tokens from position `keep` on (its next tokens continue there; the prefix before stays reusable). */
  truncateSeq(seq: number, keep: number): void {
    const e = this.seqError(seq);
    if (e) throw e;
    if (!Number.isInteger(keep) || keep < 0) throw new ContextError('BAD_ARGUMENT', `truncateSeq: keep must be a non-negative integer, got ${keep}`);
    if (seq === 0) this.truncate(keep);
    else {
      const n = Math.min(keep, this.past[seq]!);
      this.past[seq] = this.swaRing ? this.swaRing.truncate(seq, n, this.past[seq]!) : n;
    }
  }

  /**
   * Context shift in place (llama.cpp's K-shift): sequence `seq` forgets its tokens at positions
   * [keep, keep + discard); the later ones move down to [keep, past - discard), their keys re-rotated for the new
   * positions, with no evaluation (src/runtime/kv-shift.ts). Returns false, changing nothing, when the model's
   * state cannot shift (recurrent layers: evaluate the kept tokens again instead).
   */
  shiftSeq(seq: number, keep: number, discard: number): boolean {
    const e = this.seqError(seq);
    if (e) throw e;
    const past = this.past[seq]!;
    if (!Number.isInteger(keep) || !Number.isInteger(discard) || keep < 0 || discard < 1 || keep + discard > past) {
      throw new ContextError('BAD_ARGUMENT', `shiftSeq: keep ${keep} and discard ${discard} must be integers with keep >= 0, discard >= 1 and keep + discard <= ${past} cached tokens`);
    }
    if (this.recurrent || (this.kvType !== 'f16' && this.kvType !== 'f32')) return false;
    if (this.swaRing && !this.swaRing.canShift(seq, keep, discard, past)) return false;
    if (!this.shift) {
      const g = this.graph(1, 1);
      const ropes = cacheRopes(g, (name) => {
        const b = readTensorData(this.model.file, name);
        return new Float32Array(b.slice().buffer, 0, b.byteLength >> 2);
      });
      let maxRow = 0, maxDims = 2;
      for (const l of this.kv) maxRow = Math.max(maxRow, l.rowBytes);
      for (const r of ropes.values()) if (r) maxDims = Math.max(maxDims, r.nDims);
      this.shift = { ropes, shifter: new KvShifter(maxRow, maxDims) };
    }
    const base = seq * this.seqStride, n = past - keep - discard;
    // indexed loops: no iterator objects (a shift allocates nothing)
    for (let i = 0; i < this.kv.length; i++) {
      const l = this.kv[i]!, c = l.copies[l.primary]!;
      const f16 = this.kvType === 'f16', rope = this.shift.ropes.get(l.name) ?? null;
      if (l.ring) {
        // the moved tokens keep their rows (the ring's offset grows by discard): keys re-rotated in place, then
        // the mirror rows copied again from the rotated ones
        const r = this.swaRing!, rb = seq * r.stride;
        if (rope) {
          this.shift.shifter.move(c.placement.buffer, c.placement.offset, l.rowBytes, rb, rb, r.period, f16, rope, -discard);
          this.shift.shifter.move(c.placement.buffer, c.placement.offset, l.rowBytes, rb, rb + r.period, r.window, f16, null, 0);
        }
        if (this.nSeq === 1) c.valid = past - discard;
        continue;
      }
      this.shift.shifter.move(c.placement.buffer, c.placement.offset, l.rowBytes, base + keep + discard, base + keep, n, f16, rope, -discard);
      // other copies (an accelerator's prefill copy) are current up to the kept prefix only
      for (let j = 0; j < l.copies.length; j++) { const o = l.copies[j]!; if (o !== c && o.valid > keep) o.valid = keep; }
      if (this.nSeq === 1) c.valid = past - discard;
    }
    this.swaRing?.shift(seq, keep, discard);
    this.past[seq] = past - discard;
    return true;
  }

  private seqError(seq: number): ContextError | undefined {
    if (Number.isInteger(seq) && seq >= 0 && seq < this.nSeq) return undefined;
    return new ContextError('BAD_SEQUENCE', `sequence id ${seq} is outside 0..${this.nSeq - 1} (the context has nSeq = ${this.nSeq})`);
  }

  /**
   * One graph evaluation for several sequences' tokens at once (continuous batching: the weights are read
   * once for all of them). Each entry's tokens continue its sequence at seqPast(seq); a sequence may appear
   * in several entries (in order). Returns the logits of the requested outputs, one nVocab row each, in
   * entry order ('last': 1 row, 'all': tokens.length rows, 'none': 0). The returned array may be reused by
   * the next call. Chunks internally when the total exceeds nBatch. Steady decoding (the same number of
   * tokens and outputs per call, synchronous devices) allocates nothing.
   */
  decodeSeqs(batch: readonly SeqTokens[]): Promise<Float32Array> {
    const err = this.checkSeqs(batch);
    if (err) return Promise.reject(err);
    const total = this.seqTotal, nOut = this.seqOutputs;
    if (!this.pending && !this.seqDirect) return this.decodeSeqsViaDecode(batch, total, nOut);
    if (total <= this.nBatch && !this.pending && !this.profiler) {
      const c = this.seqPlan(total, nOut);
      if (c.plan.sync) {
        const out = this.seqResult(nOut);
        this.stageSeqs(c, batch, 0, total);
        this.sched.computeSync(c.plan);
        if (nOut) this.readSeqs(c, out, nOut);
        this.commitSeqs();
        return this.seqResolved;
      }
    }
    return this.decodeSeqsChunked(batch, total, nOut);
  }

  private async decodeSeqsChunked(batch: readonly SeqTokens[], total: number, nOut: number): Promise<Float32Array> {
    await this.ready();
    this.check();
    if (!this.seqDirect) return this.decodeSeqsViaDecode(batch, total, nOut);
    const out = this.seqResult(nOut);
    let row = 0;
    for (let start = 0; start < total;) {
      const m = this.chunkSeqs(batch, start);
      const o = this.countOutputs(batch, start, m);
      const c = this.seqPlan(m, o);
      if (this.profiler) this.profiler.phase = m > 1 ? 'prefill' : 'decode';
      this.stageSeqs(c, batch, start, m);
      await this.sched.compute(c.plan);
      this.commitSeqs();
      this.profiler?.evaluated(m);
      if (o) this.readSeqs(c, o === nOut ? out : out.subarray(row * this.nVocab, (row + o) * this.nVocab), o);
      row += o;
      start += m;
    }
    return out;
  }

  /** After an evaluation: every sequence's cached tokens end where staging left them (one cache copy: all current). */
  private commitSeqs(): void {
    this.past.set(this.seqRun);
    if (this.swaRing) for (let s = 0; s < this.nSeq; s++) this.swaRing.commit(s, this.past[s]!);
    if (this.nSeq === 1) for (let i = 0; i < this.kv.length; i++) this.kv[i]!.copies[0]!.valid = this.past[0]!;
  }

  /**
   * One sequence whose cache has copies on several devices (accelerators): the batch is sequence 0's tokens
   * in order, so it is one decode() of them (which does the hand-over), with the requested rows picked out.
   */
  private async decodeSeqsViaDecode(batch: readonly SeqTokens[], total: number, nOut: number): Promise<Float32Array> {
    const flat = new Int32Array(total), want: number[] = [];
    let f = 0;
    for (const e of batch) {
      for (let j = 0; j < e.tokens.length; j++, f++) {
        flat[f] = e.tokens[j]!;
        if (e.logits === 'all' || (e.logits === 'last' && j === e.tokens.length - 1)) want.push(f);
      }
    }
    const lastOnly = nOut === 0 || (nOut === 1 && want[0] === total - 1);
    const logits = await this.decode(flat, !lastOnly);
    const out = this.seqResult(nOut), nv = this.nVocab;
    if (lastOnly) { if (nOut) out.set(logits.subarray(0, nv)); }
    else want.forEach((r, i) => out.set(logits.subarray(r * nv, (r + 1) * nv), i * nv));
    return out;
  }

  /** Validates a decodeSeqs batch; sets seqTotal and seqOutputs. */
  private checkSeqs(batch: readonly SeqTokens[]): ContextError | undefined {
    if (this.closed) return new ContextError('BAD_ARGUMENT', 'context is closed');
    if (!Array.isArray(batch)) return new ContextError('BAD_ARGUMENT', 'decodeSeqs takes an array of { seq, tokens, logits } entries');
    const pend = this.seqRun;
    pend.fill(0);
    let total = 0, outs = 0;
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i] as SeqTokens | undefined;
      if (e === null || typeof e !== 'object') return new ContextError('BAD_ARGUMENT', `decodeSeqs entry ${i} is not a { seq, tokens, logits } object`);
      const s = e.seq, toks = e.tokens, mode = e.logits;
      const se = this.seqError(s);
      if (se) return se;
      if (toks === null || typeof toks !== 'object' || !Number.isInteger(toks.length)) return new ContextError('BAD_ARGUMENT', `decodeSeqs entry ${i} (sequence ${s}): tokens must be an array of token ids`);
      if (mode !== 'last' && mode !== 'all' && mode !== 'none') return new ContextError('BAD_ARGUMENT', `decodeSeqs entry ${i} (sequence ${s}): logits must be 'last', 'all' or 'none', got ${String(mode)}`);
      const n = toks.length;
      if (n === 0 && mode === 'last') return new ContextError('BAD_ARGUMENT', `decodeSeqs entry ${i} (sequence ${s}) has no tokens but asks for its last logits`);
      for (let j = 0; j < n; j++) {
        const t = toks[j]!;
        if (!Number.isInteger(t) || t < 0 || t >= this.nVocab) return new ContextError('BAD_TOKEN', `token id ${t} (entry ${i}, sequence ${s}) is outside the vocabulary (0..${this.nVocab - 1})`);
      }
      pend[s] += n;
      total += n;
      outs += mode === 'all' ? n : mode === 'last' ? 1 : 0;
    }
    if (total === 0) return new ContextError('BAD_ARGUMENT', 'decodeSeqs needs at least one token');
    for (let s = 0; s < this.nSeq; s++) {
      if (this.past[s]! + pend[s]! > this.seqCtx) return new ContextError('CONTEXT_FULL', `sequence ${s} is full: ${this.past[s]} + ${pend[s]} tokens > its ${this.seqCtx} slots (nCtx / nSeq; raise --ctx)`);
    }
    this.seqTotal = total;
    this.seqOutputs = outs;
    return undefined;
  }

  /**
   * Tokens of the chunk starting at flattened token `start`: up to nBatch, an entry split across chunks at a
   * multiple of 4 of its tokens, so each piece keeps the kernel orders (4-row GEMM groups) the whole entry gets.
   */
  private chunkSeqs(batch: readonly SeqTokens[], start: number): number {
    let flat = 0, m = 0, space = this.nBatch;
    for (let i = 0; i < batch.length && space > 0; i++) {
      const n = batch[i]!.tokens.length, lo = Math.max(start, flat), hi = flat + n;
      flat += n;
      if (hi <= lo) continue;
      let take = hi - lo;
      if (take > space) {
        take = space - (space % 4);
        if (take === 0) { if (m > 0) break; take = space; }
      }
      m += take;
      space -= take;
      if (take < hi - lo) break;
    }
    return m;
  }

  /** Outputs requested among the flattened tokens [start, start + m) of a batch. */
  private countOutputs(batch: readonly SeqTokens[], start: number, m: number): number {
    let flat = 0, o = 0;
    for (let i = 0; i < batch.length; i++) {
      const e = batch[i]!, n = e.tokens.length;
      const lo = Math.max(start, flat), hi = Math.min(start + m, flat + n);
      if (lo < hi) o += e.logits === 'all' ? hi - lo : e.logits === 'last' && hi === flat + n ? 1 : 0;
      flat += n;
    }
    return o;
  }

  /** The plan of an m-token evaluation with o outputs (a chunk without outputs computes one and ignores it). */
  private seqPlan(m: number, o: number): CachedPlan {
    const nOut = o === 0 ? 1 : o;
    if (m === 1) return this.decodePlan!;
    // steady batched decoding asks for the same shape every step: answered without a key object or a Map
    // update (the key number is past the small-integer range, so each Map operation would box it)
    if (this.lastSeq && this.lastSeq.m === m && this.lastSeq.nOut === nOut) return this.lastSeq.c;
    const key: PlanKey = { phase: 'prefill', nTokens: m, nOutputs: nOut, accel: false };
    const k = planKeyNum(key, this.kvCapacity);
    let c = this.pinned.get(k);
    if (!c) {
      c = this.plans.get(k);
      if (c) {
        this.plans.delete(k); // most recently used last
        this.plans.set(k, c);
      } else {
        c = this.cached(this.graph(m, nOut), key);
        this.remember(k, c);
      }
    }
    this.lastSeq = { m, nOut, c };
    return c;
  }

  /**
   * Stages the flattened tokens [start, start + m) of a batch into the plan's inputs; seqRun ends at each
   * sequence's next position. Graphs of several sequences get each entry's rows as that entry evaluated alone
   * would have them (graph.ts inp_batch_rows): the first L - L % 4 of its L tokens in the batch rows, placed
   * first (4-row groups of one entry), the rest (decode tokens) after them in the one-token rows; likewise the
   * outputs. seqPerm maps each graph output row to its entry-order output.
   */
  private stageSeqs(c: CachedPlan, batch: readonly SeqTokens[], start: number, m: number): void {
    const p = c.plan, run = this.seqRun, stride = this.seqStride, perm = this.seqPerm;
    const split = p.batchRows !== undefined, gathered = p.nOutputs !== p.nTokens;
    run.set(this.past);
    let g = 0, og = 0, flat = 0;
    if (split) {
      for (let b = 0; b < batch.length; b++) {
        const e = batch[b]!, n = e.tokens.length;
        const len = Math.min(start + m, flat + n) - Math.max(start, flat);
        if (len > 0) { g += len - (len % 4); if (e.logits === 'all') og += len - (len % 4); }
        flat += n;
      }
      p.batchRows![0] = g;
      p.batchRows![1] = og;
    }
    let iB = 0, iS = g, jB = 0, jS = og, k = 0;
    let permuted = false;
    flat = 0;
    for (let b = 0; b < batch.length; b++) {
      const e = batch[b]!, toks = e.tokens, n = toks.length, s = e.seq;
      const lo = Math.max(start, flat), hi = Math.min(start + m, flat + n), len = hi - lo;
      const gl = split ? len - (len % 4) : len;
      const all = e.logits === 'all', last = e.logits === 'last';
      for (let f = lo; f < hi; f++) {
        const q = f - lo, i = q < gl ? iB++ : iS++;
        const pos = run[s]!;
        run[s] = pos + 1;
        p.tokens[i] = toks[f - flat]!;
        p.positions[i] = pos;
        if (p.kvRows) p.kvRows[i] = s * stride + pos;
        if (p.swaRows) { const row = this.swaRing!.row(s, pos); p.swaRows[i] = row; p.swaMirror![i] = this.swaRing!.mirror(row); }
        if (all || (last && f === flat + n - 1)) {
          const j = gathered ? (all && q < gl ? jB++ : jS++) : i;
          if (gathered) p.outRows[j] = i;
          perm[j] = k;
          if (j !== k) permuted = true;
          k++;
        }
      }
      flat += n;
    }
    if (k === 0) p.outRows[0] = m - 1;
    this.seqPermuted = permuted;
    p.upload();
  }

  /** Reads an evaluation's o output rows into `dest` in entry order (seqPerm). */
  private readSeqs(c: CachedPlan, dest: Float32Array, o: number): void {
    if (!this.seqPermuted) { c.plan.readOutput(dest); return; }
    const nv = this.nVocab;
    if (this.seqScratch.length < o * nv) this.seqScratch = new Float32Array(o * nv);
    const tmp = this.seqScratch.subarray(0, o * nv);
    c.plan.readOutput(tmp);
    for (let j = 0; j < o; j++) dest.set(tmp.subarray(j * nv, (j + 1) * nv), this.seqPerm[j]! * nv);
  }

  /** The result view for nOut rows (reused while nOut stays the same; the buffer grows as needed). */
  private seqResult(nOut: number): Float32Array {
    const len = nOut * this.nVocab;
    if (this.seqView.length === len && this.seqView.buffer === this.seqOut.buffer) return this.seqView;
    if (this.seqOut.length < len) this.seqOut = new Float32Array(Math.max(len, 2 * this.seqOut.length));
    this.seqView = this.seqOut.subarray(0, len);
    this.seqResolved = Promise.resolve(this.seqView);
    return this.seqView;
  }

  private copyRows(leaf: KvLeaf, from: KvLeaf['copies'][number], to: KvLeaf['copies'][number], r0: number, r1: number, dir: 'to_decode' | 'to_prefill'): void {
    if (r1 <= r0) return;
    const off = r0 * leaf.rowBytes, bytes = (r1 - r0) * leaf.rowBytes;
    const t0 = this.profiler ? performance.now() : 0;
    from.placement.buffer.copyTo(to.placement.buffer, from.placement.offset + off, to.placement.offset + off, bytes);
    if (this.profiler) this.profiler.kv(dir, from.device, to.device, bytes, performance.now() - t0, t0);
  }

  /** KV bytes one token takes in the cache (all layers, K and V; the primary copy). */
  get kvBytesPerToken(): number { return this.kv.reduce((a, l) => a + (l.recurrent || l.ring ? 0 : l.rowBytes), 0); }

  /** Bytes of the sliding-window rings (all layers, every sequence; fixed, whatever the length): 0 without rings. */
  get kvRingBytes(): number { return this.kv.reduce((a, l) => a + (l.ring ? l.rowBytes * this.swaRing!.rows : 0), 0); }

  /** Bytes of recurrent state per sequence (all layers; the primary copy): a fixed size, whatever the length. */
  get recurrentStateBytes(): number { return this.kv.reduce((a, l) => a + (l.recurrent ? l.rowBytes : 0), 0); }

  /** where each layer's cache copies live, for reports */
  kvDevices(): { primary: string; copies: string[] } {
    const prim = new Set<string>(), all = new Set<string>();
    for (const l of this.kv) { prim.add(l.copies[l.primary]!.device.name); for (const c of l.copies) all.add(c.device.name); }
    return { primary: [...prim].join(','), copies: [...all] };
  }

  /** Forgets every cached token (the cache bytes are simply overwritten later; recurrent states restart at zeros). */
  clear(): void { this.truncate(0); }

  /**
   * Drops cached tokens from position `keep` on (the next decode continues there). A recurrent model's state
   * cannot be rolled back (llama.cpp refuses partial removal too): only 0 (clear) or the current length.
   */
  truncate(keep: number): void {
    let n = Math.max(0, Math.min(keep, this.nPast));
    // a ring that no longer holds the window before n keeps nothing (see ContextOptions.swaFull)
    if (this.swaRing) n = this.swaRing.truncate(0, n, this.nPast);
    if (this.recurrent && n > 0 && n < this.nPast) {
      throw new ContextError('RECURRENT_STATE', `cannot truncate to ${n} of ${this.nPast} tokens: ${this.model.hp.arch} has recurrent layers, whose state cannot be rolled back (clear the context and evaluate again)`);
    }
    if (n < this.nPast) {
      // n = 0 for a recurrent state: back to zeros on every copy
      for (const l of this.kv) if (l.recurrent) for (const c of l.copies) { c.placement.buffer.clear(); c.valid = 0; }
    }
    this.nPast = n;
    for (const l of this.kv) if (!l.recurrent) for (const c of l.copies) if (c.valid > n) c.valid = n;
  }

  /** Frees the plans, the compute arenas and the KV cache. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of this.plans.values()) c.plan.free();
    for (const c of this.pinned.values()) c.plan.free();
    this.plans.clear();
    this.pinned.clear();
    this.decodePlan = undefined;
    this.sched.close();
    for (const b of this.stateBuffers) b.free();
    this.stateBuffers.length = 0;
  }
}

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

import type { Device, DeviceBuffer, Phase, Placement } from '../backends/backend.js';
import { DeviceError } from '../backends/backend.js';
import type { Graph, TensorDesc } from '../graph/graph.js';
import { readTensorData } from '../gguf/reader.js';
import { buildTransformer } from '../models/transformer.js';
import { Profiler } from '../sched/profile.js';
import { Scheduler, type Plan, type PlanKey } from '../sched/scheduler.js';
import type { Model } from './model.js';

export interface ContextOptions {
  /** KV cache size in tokens */
  nCtx: number;
  kvType?: 'f16' | 'f32';
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
}

export class ContextError extends Error {
  constructor(readonly code: 'CONTEXT_FULL' | 'BAD_TOKEN' | 'BAD_ARGUMENT' | 'NOT_READY' | 'OVER_BUDGET' | 'RECURRENT_STATE', message: string) {
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
  rowBytes: number;
  recurrent: boolean;
  copies: { device: Device; placement: Placement; valid: number }[];
  /** the copy decode uses */
  primary: number;
}

const stateBytes = (t: TensorDesc) => t.shape.reduce((a, b) => a * b, 1) * (t.dtype === 'f16' ? 2 : 4);

const planKeyNum = (k: PlanKey, cap: number) => (((k.accel ? 1 : 0) * 2 + (k.phase === 'decode' ? 1 : 0)) * (cap + 1) + k.nTokens) * (cap + 1) + k.nOutputs;

export class Context {
  readonly nCtx: number;
  readonly kvType: 'f16' | 'f32';
  readonly nBatch: number;
  readonly nVocab: number;
  /** tokens currently in the KV cache */
  nPast = 0;
  /** the model has recurrent layers: their state follows every token and cannot be truncated to an earlier position */
  recurrent = false;
  private readonly hasRecurrentLayers: boolean;
  /** KV slots allocated: nCtx plus room for a padded chunk's overhang */
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

  constructor(readonly model: Model, opts: ContextOptions) {
    const hp = model.hp;
    if (!(opts.nCtx > 0) || !Number.isInteger(opts.nCtx)) throw new ContextError('BAD_ARGUMENT', `context size must be a positive integer, got ${opts.nCtx}`);
    this.nCtx = opts.nCtx;
    this.kvType = opts.kvType ?? 'f16';
    this.nBatch = Math.max(1, Math.min(Math.floor(opts.nBatch ?? 512), this.nCtx));
    this.nVocab = hp.nVocab;
    this.maxPlans = Math.max(1, opts.maxPlans ?? 8);
    this.profiler = opts.profiler;
    const weightDevice = model.placements.values().next().value?.device;
    const devices = opts.devices ?? (weightDevice ? [weightDevice] : []);
    this.sched = new Scheduler({
      devices, weights: { get: (t) => model.placements.get(t.name) },
      phaseDevice: { prefill: opts.prefillDevice, decode: opts.decodeDevice },
      offloadMinBatch: opts.offloadMinBatch, profiler: opts.profiler,
    });
    this.prefillShapes = this.sched.staticShapes('prefill', this.nBatch);
    this.hasRecurrentLayers = hp.layerKinds.some((k) => k !== 'attention');
    const maxStatic = this.prefillShapes.length ? this.prefillShapes[this.prefillShapes.length - 1]! : 1;
    this.kvCapacity = this.nCtx + maxStatic - 1;
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
    return buildTransformer(this.model.spec, this.model.hp, this.model.weights, { nTokens: nTok, nOutputs: nOut, nCtx: this.kvCapacity, kvType: this.kvType });
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
    for (const t of worst[0]!.graph.tensors) {
      if (t.role !== 'state') continue;
      const recurrent = !t.name.startsWith('cache_');
      const leaf: KvLeaf = { name: t.name, rowBytes: recurrent ? stateBytes(t) : stateBytes(t) / t.shape[1]!, recurrent, copies: [], primary: 0 };
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
      this.kv.push(leaf);
      if (recurrent) this.recurrent = true;
    }
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
    if (this.nPast + n > this.nCtx) return Promise.reject(new ContextError('CONTEXT_FULL', `context is full: ${this.nPast} + ${n} tokens > ${this.nCtx} (raise --ctx)`));
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
    if (allLogits) for (let i = 0; i < p.nOutputs; i++) p.outRows[i] = i;
    else p.outRows[0] = m - 1;
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

  private copyRows(leaf: KvLeaf, from: KvLeaf['copies'][number], to: KvLeaf['copies'][number], r0: number, r1: number, dir: 'to_decode' | 'to_prefill'): void {
    if (r1 <= r0) return;
    const off = r0 * leaf.rowBytes, bytes = (r1 - r0) * leaf.rowBytes;
    const t0 = this.profiler ? performance.now() : 0;
    from.placement.buffer.copyTo(to.placement.buffer, from.placement.offset + off, to.placement.offset + off, bytes);
    if (this.profiler) this.profiler.kv(dir, from.device, to.device, bytes, performance.now() - t0, t0);
  }

  /** KV bytes one token takes in the cache (all layers, K and V; the primary copy). */
  get kvBytesPerToken(): number { return this.kv.reduce((a, l) => a + (l.recurrent ? 0 : l.rowBytes), 0); }

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
    const n = Math.max(0, Math.min(keep, this.nPast));
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

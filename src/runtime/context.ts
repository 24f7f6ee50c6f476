// A Context: one sequence's KV cache (allocated once for nCtx tokens), the scheduler, and the
// per-shape plans. decode() evaluates a batch of tokens at the next positions and returns logits.

import type { Device, DeviceBuffer, Placement } from '../backends/backend.js';
import type { Graph, TensorDesc } from '../graph/graph.js';
import { buildTransformer } from '../models/transformer.js';
import { Scheduler, type Plan } from '../sched/scheduler.js';
import type { Model } from './model.js';

export interface ContextOptions {
  /** KV cache size in tokens */
  nCtx: number;
  kvType?: 'f16' | 'f32';
  /** largest batch evaluated at once (a longer prompt is split) */
  nBatch?: number;
  /** devices in priority order; default: the device holding the weights */
  devices?: Device[];
  /** phase policy: run prefill (batch > 1) / decode (batch = 1) on these devices when they support the ops */
  prefillDevice?: Device;
  decodeDevice?: Device;
}

export class ContextError extends Error {
  constructor(readonly code: 'CONTEXT_FULL' | 'BAD_TOKEN' | 'BAD_ARGUMENT', message: string) {
    super(message);
    this.name = 'ContextError';
  }
}

interface CachedPlan {
  plan: Plan;
  tokens: Int32Array;
  positions: Int32Array;
  outRows: Int32Array;
}

export class Context {
  readonly nCtx: number;
  readonly kvType: 'f16' | 'f32';
  readonly nBatch: number;
  readonly nVocab: number;
  /** tokens currently in the KV cache */
  nPast = 0;
  private readonly state = new Map<string, { device: Device; placement: Placement }>();
  private readonly stateBuffers: DeviceBuffer[] = [];
  private readonly plans = new Map<string, CachedPlan>();
  private readonly schedPrefill: Scheduler;
  private readonly schedDecode: Scheduler;
  private logits: Float32Array;

  constructor(readonly model: Model, opts: ContextOptions) {
    const hp = model.hp;
    this.nCtx = opts.nCtx;
    this.kvType = opts.kvType ?? 'f16';
    this.nBatch = Math.max(1, Math.min(opts.nBatch ?? 512, this.nCtx));
    this.nVocab = hp.nVocab;
    if (!(this.nCtx > 0)) throw new ContextError('BAD_ARGUMENT', `context size must be positive, got ${opts.nCtx}`);
    const weightDevice = model.placements.values().next().value?.device;
    const devices = opts.devices ?? (weightDevice ? [weightDevice] : []);
    // The KV cache lives where decode runs: the decode device, else the device holding the weights
    // (an accelerator listed first for prefill must not pull the cache away from decode).
    const kvDevice = opts.decodeDevice ?? weightDevice ?? devices[devices.length - 1]!;
    const eb = this.kvType === 'f16' ? 2 : 4;
    for (let il = 0; il < hp.nLayer; il++) {
      for (const [kind, width] of [['k', hp.nHeadKv * hp.headDimK], ['v', hp.nHeadKv * hp.headDimV]] as const) {
        const nBytes = width * this.nCtx * eb;
        const buf = kvDevice.bufferType().allocate(nBytes, 'state');
        // Touch every page now: memory use is then flat from the first token on, and a cache that
        // does not fit fails here rather than mid-generation.
        buf.clear();
        this.stateBuffers.push(buf);
        this.state.set(`cache_${kind}_l${il}`, { device: kvDevice, placement: { buffer: buf, offset: 0, nBytes } });
      }
    }
    const leaves = {
      get: (t: TensorDesc) => (t.role === 'state' ? this.state.get(t.name) : model.placements.get(t.name)),
    };
    this.schedPrefill = new Scheduler({ devices, leaves, forceDevice: opts.prefillDevice });
    this.schedDecode = opts.decodeDevice || opts.prefillDevice ? new Scheduler({ devices, leaves, forceDevice: opts.decodeDevice }) : this.schedPrefill;
    this.logits = new Float32Array(this.nVocab);
  }

  private planFor(nTok: number, nOut: number): CachedPlan {
    const key = `${nTok}:${nOut}`;
    let c = this.plans.get(key);
    if (!c) {
      const g: Graph = buildTransformer(this.model.spec, this.model.hp, this.model.weights, { nTokens: nTok, nOutputs: nOut, nCtx: this.nCtx, kvType: this.kvType });
      const sched = nTok > 1 ? this.schedPrefill : this.schedDecode;
      c = { plan: sched.plan(g), tokens: new Int32Array(nTok), positions: new Int32Array(nTok), outRows: new Int32Array(nOut) };
      this.plans.set(key, c);
    }
    return c;
  }

  /** Device assignment of a batch shape's plan, for reports (`devices` command, tests). */
  describePlan(nTok: number): { device: string; nodes: number }[] {
    const c = this.planFor(nTok, 1);
    return c.plan.splits.map((s) => ({ device: s.device.name, nodes: s.nodes.length }));
  }

  /**
   * Evaluates `tokens` at positions nPast.. and returns the logits: of the last token
   * (length nVocab), or of every token when `allLogits` (length n * nVocab).
   */
  async decode(tokens: ArrayLike<number>, allLogits = false): Promise<Float32Array> {
    const n = tokens.length;
    if (n === 0) throw new ContextError('BAD_ARGUMENT', 'decode needs at least one token');
    if (this.nPast + n > this.nCtx) throw new ContextError('CONTEXT_FULL', `context is full: ${this.nPast} + ${n} tokens > ${this.nCtx} (raise --ctx)`);
    for (let i = 0; i < n; i++) {
      const t = tokens[i]!;
      if (!Number.isInteger(t) || t < 0 || t >= this.nVocab) throw new ContextError('BAD_TOKEN', `token id ${t} is outside the vocabulary (0..${this.nVocab - 1})`);
    }
    const out = allLogits ? new Float32Array(n * this.nVocab) : this.logits;
    for (let start = 0; start < n; start += this.nBatch) {
      const m = Math.min(this.nBatch, n - start);
      const isLast = start + m === n;
      const nOut = allLogits ? m : 1;
      const c = this.planFor(m, nOut);
      for (let i = 0; i < m; i++) { c.tokens[i] = tokens[start + i]!; c.positions[i] = this.nPast + i; }
      if (allLogits) for (let i = 0; i < m; i++) c.outRows[i] = i;
      else c.outRows[0] = m - 1;
      c.plan.setInput(c.plan.graph.inputs.tokens, c.tokens);
      c.plan.setInput(c.plan.graph.inputs.positions, c.positions);
      c.plan.setInput(c.plan.graph.inputs.outputRows, c.outRows);
      const sched = m > 1 ? this.schedPrefill : this.schedDecode;
      await sched.compute(c.plan);
      this.nPast += m;
      if (allLogits) c.plan.readOutput(out.subarray(start * this.nVocab, (start + m) * this.nVocab));
      else if (isLast) c.plan.readOutput(out);
    }
    return out;
  }

  /** Forgets every cached token (the cache bytes are simply overwritten later). */
  clear(): void { this.nPast = 0; }

  /** Drops cached tokens from position `keep` on (the next decode continues there). */
  truncate(keep: number): void { this.nPast = Math.max(0, Math.min(keep, this.nPast)); }

  close(): void {
    for (const c of this.plans.values()) c.plan.free();
    this.plans.clear();
    this.schedPrefill.close();
    if (this.schedDecode !== this.schedPrefill) this.schedDecode.close();
    for (const b of this.stateBuffers) b.free();
  }
}

// The scheduler: assigns every node of a graph to a device (whole claimed groups to accelerators,
// the rest op by op), cuts the node list into splits, inserts copies where a split reads a tensor
// living on another device, and places every intermediate in ONE compute arena per device.
//
// As ggml_backend_sched_reserve does, the arenas are sized once, at context creation, from the
// worst-case layouts (`reserve`); every later plan is placed inside them and never grows them: a
// plan whose graph has the structure and device assignment of a reserved layout reuses that
// layout's offsets (every tensor is no larger, lifetimes are the same, so no two live tensors
// overlap), and anything else is planned afresh and must fit (checked; a clear error otherwise).

import type { Backend, CompileRequest, ComputeContext, Device, DeviceBuffer, NodeGroup, Phase, Placement } from '../backends/backend.js';
import { DeviceError, tensorBytes } from '../backends/backend.js';
import { flashAttention, multiSequence, type Graph, type TensorDesc } from '../graph/graph.js';
import { rowBytes } from '../gguf/ggml-types.js';
import { planArena, type ArenaRequest } from './arena.js';
import type { Profiler } from './profile.js';

export interface WeightLookup {
  /** where a weight's bytes live (the device it was loaded to) */
  get(t: TensorDesc): { device: Device; placement: Placement } | undefined;
}

/** The copy of a state tensor (a KV cache layer) on a device. */
export type StateLookup = (t: TensorDesc, device: Device) => Placement | undefined;

export interface SchedulerOptions {
  /** devices in priority order; the last one is the host: it supports every op and takes what no other device does */
  devices: Device[];
  weights?: WeightLookup;
  /**
   * Standalone use (no Context): weights and one copy of each state tensor by name; plans made without a
   * key claim their groups on first use and size the arenas for themselves.
   */
  leaves?: WeightLookup;
  /** standalone use: the explicit device of both phases */
  forceDevice?: Device;
  /** an explicit device per phase: it takes every node (or claimed group) of that phase it supports, whatever the batch */
  phaseDevice?: Partial<Record<Phase, Device>>;
  /** batches of at least this many tokens go to group-claiming accelerators when no phase device is explicit (default 32) */
  offloadMinBatch?: number;
  profiler?: Profiler;
}

export interface Copy {
  from: Placement;
  to: Placement;
  fromDevice: Device;
}

export interface Split {
  device: Device;
  backend: Backend;
  nodes: number[];
  /** the claimed group this split runs (an accelerator's engine), if any */
  group?: string;
  /** copies to perform before the split runs */
  copies: Copy[];
  placement: (id: number) => Placement;
  /** the split's compute context (made once per plan: running it allocates nothing) */
  ctx: ComputeContext;
  /** the nodes one by one (profiling of per-op devices) */
  single?: number[][];
}

/** What a plan was made for. `accel`: group-claiming accelerators take their claimed groups. */
export interface PlanKey {
  phase: Phase;
  nTokens: number;
  nOutputs: number;
  accel: boolean;
}

export interface Plan extends PlanKey {
  graph: Graph;
  splits: Split[];
  /** host-side staging of the i32 inputs: fill them, then upload() */
  tokens: Int32Array;
  positions: Int32Array;
  outRows: Int32Array;
  /** the cache row of each token: graphs of several sequences only (Graph.inputs.kvRows) */
  kvRows?: Int32Array;
  /** the two counts of Graph.inputs.batchRows (graphs of several sequences only) */
  batchRows?: Int32Array;
  /** each token's two rows in the sliding-window rings (graphs whose sliding-window layers keep rings only) */
  swaRows?: Int32Array;
  swaMirror?: Int32Array;
  /** writes the staged inputs to every device slot that holds them */
  upload(): void;
  /** reads the graph output (f32) */
  readOutput(dest: Float32Array): Float32Array;
  /** stages and uploads one input (tokens, positions or output rows) */
  setInput(id: number, values: Int32Array): void;
  /** device each node runs on */
  assignment: Map<number, string>;
  /** device that reads and writes each state tensor (by name) */
  stateDevice: Map<string, Device>;
  /** every split's backend is synchronous (no submit): computeSync may run it */
  readonly sync: boolean;
  free(): void;
}

/** Device assignment and arena offsets of one graph: everything but the buffers. */
interface Layout extends PlanKey {
  graph: Graph;
  devOf: Device[];
  runs: { device: Device; nodes: number[]; group?: string }[];
  /** per run: the sources it needs a local copy of (tensor id -> arena key) */
  localKey: Map<number, number>[];
  /** home device of each non-leaf, input and copy slot, with its arena offset */
  home: Map<number, Device>;
  offsets: Map<Device, Map<number, number>>;
  sizes: Map<Device, number>;
  stateDevice: Map<string, Device>;
}

const tBytes = (t: TensorDesc) => tensorBytes(t, rowBytes);
/** Can `d` run node `t`? Its own answer, and a multi-sequence attention only on a device that declares it understands one. */
const supports = (d: Device, t: TensorDesc, g: Graph) => d.supportsOp(t, g) && (d.multiSequence === true || !multiSequence(t)) && (d.flashAttention !== undefined || !flashAttention(t));
const inputIdsOf = (g: Graph) => [g.inputs.tokens, g.inputs.positions, g.inputs.outputRows, ...(g.inputs.kvRows === undefined ? [] : [g.inputs.kvRows]), ...(g.inputs.batchRows === undefined ? [] : [g.inputs.batchRows]),
  ...(g.inputs.swaRows === undefined ? [] : [g.inputs.swaRows, g.inputs.swaMirror!])];
const groupKey = (phase: Phase, nTokens: number, nOutputs: number) => `${phase}:${nTokens}:${nOutputs}`;

/** Two graphs with the same tensors, ops and sources (they may differ in sizes only). */
function sameStructure(a: Graph, b: Graph): boolean {
  if (a.tensors.length !== b.tensors.length || a.nodes.length !== b.nodes.length) return false;
  for (let i = 0; i < a.tensors.length; i++) {
    const x = a.tensors[i]!, y = b.tensors[i]!;
    if (x.op !== y.op || x.role !== y.role || x.src.length !== y.src.length) return false;
    for (let j = 0; j < x.src.length; j++) if (x.src[j] !== y.src[j]) return false;
  }
  return true;
}
/** every arena tensor (not a weight or state leaf) of `a` takes at most the bytes of its counterpart in `b` */
function dominated(a: Graph, b: Graph): boolean {
  for (let i = 0; i < a.tensors.length; i++) {
    const t = a.tensors[i]!;
    if (t.role !== 'weight' && t.role !== 'state' && tBytes(t) > tBytes(b.tensors[i]!)) return false;
  }
  return true;
}

export class SchedulerError extends Error {
  constructor(readonly code: 'NO_DEVICE' | 'ARENA_OVERFLOW' | 'NOT_PREPARED', message: string) {
    super(message);
    this.name = 'SchedulerError';
  }
}

export class Scheduler {
  private readonly backends = new Map<Device, Backend>();
  readonly host: Device;
  readonly offloadMinBatch: number;
  /** accepted group claims per (phase, tokens, outputs), made at load */
  private readonly claims = new Map<string, Map<string, Device>>();
  /** groups a device lost to a reservation that did not fit (never claimed again) */
  private readonly overBudget = new Map<Device, Set<string>>();
  /** why a group fell back, for reports: "blk.3 on sim-npu: COMPILE_FAILED ..." */
  readonly fallbacks: string[] = [];
  private reserved: Layout[] = [];
  private arenas = new Map<Device, DeviceBuffer>();
  private states: StateLookup = () => undefined;
  private profiler?: Profiler;

  private readonly standalone: boolean;
  constructor(private opts: SchedulerOptions & { weights?: WeightLookup }) {
    if (opts.devices.length === 0) throw new SchedulerError('NO_DEVICE', 'scheduler needs at least one device');
    this.standalone = !opts.weights;
    if (!opts.weights) {
      const leaves = opts.leaves;
      if (!leaves) throw new SchedulerError('NO_DEVICE', 'scheduler needs the weights (or leaves) placements');
      opts = this.opts = { ...opts, weights: leaves, phaseDevice: opts.phaseDevice ?? (opts.forceDevice ? { prefill: opts.forceDevice, decode: opts.forceDevice } : undefined) };
      this.states = (t) => leaves.get(t)?.placement;
    }
    this.host = opts.devices[opts.devices.length - 1]!;
    this.offloadMinBatch = opts.offloadMinBatch ?? 32;
    for (const d of opts.devices) this.backends.set(d, d.createBackend());
    this.profiler = opts.profiler;
  }

  get devices(): Device[] { return this.opts.devices; }
  phaseDevice(phase: Phase): Device | undefined { return this.opts.phaseDevice?.[phase]; }

  /** the group-claiming devices a phase offloads to (explicit device first) */
  accelerators(phase: Phase): Device[] {
    const f = this.opts.phaseDevice?.[phase];
    if (f) return f.claimGroups ? [f] : [];
    return this.opts.devices.filter((d) => d.claimGroups);
  }

  /** Does a batch of `m` real tokens of this phase go to the accelerators? */
  offloads(phase: Phase, m: number): boolean {
    if (this.accelerators(phase).length === 0) return false;
    return this.opts.phaseDevice?.[phase] !== undefined || m >= this.offloadMinBatch;
  }

  /** Token counts the phase's accelerator runs (its static shapes, or power-of-two buckets up to maxBatch). */
  staticShapes(phase: Phase, maxBatch: number): number[] {
    const d = this.accelerators(phase)[0];
    if (!d) return [];
    if (d.staticShapes && d.staticShapes.length) return [...d.staticShapes].sort((a, b) => a - b);
    const out: number[] = [];
    for (let s = 1; s < maxBatch; s *= 2) out.push(s);
    out.push(maxBatch);
    return out;
  }

  // ---- claims (load time) ----

  /**
   * Load time, once per (phase, static shape): asks each accelerator for its groups of `g` and keeps
   * those it supports whole and compiles. Never called mid-run; plans of shapes not claimed here run
   * op by op on the other devices.
   */
  claim(g: Graph, phase: Phase, weights: Pick<CompileRequest, 'weightBytes' | 'weightType'>): void | Promise<void> {
    const key = groupKey(phase, g.nTokens, g.nOutputs);
    if (this.claims.has(key)) return;
    const owner = new Map<string, Device>();
    this.claims.set(key, owner);
    const pending: Promise<void>[] = [];
    for (const d of this.accelerators(phase)) {
      // (standalone callers pick their own shapes)
      if (!this.standalone && d.staticShapes && !d.staticShapes.includes(g.nTokens)) continue;
      for (const group of d.claimGroups!(g)) {
        if (owner.has(group.name) || this.overBudget.get(d)?.has(group.name)) continue;
        const why = this.unsupported(g, group, d);
        if (why) { this.fallbacks.push(`${group.name} at ${g.nTokens} tokens: ${d.name} ${why}; runs on the next device`); continue; }
        const fail = (e: unknown) => {
          owner.delete(group.name);
          if (!(e instanceof DeviceError) || (e.code !== 'COMPILE_FAILED' && e.code !== 'OVER_BUDGET' && e.code !== 'UNSUPPORTED')) throw e;
          this.fallbacks.push(`${group.name} at ${g.nTokens} tokens: ${d.name} ${e.code}: ${e.message}; runs on the next device`);
        };
        owner.set(group.name, d);
        try {
          const r = d.compileGroup?.({ graph: g, group, nTokens: g.nTokens, ...weights });
          if (r) pending.push(r.catch(fail));
        } catch (e) { fail(e); }
      }
    }
    if (pending.length) return Promise.all(pending).then(() => undefined);
  }

  /** why device `d` cannot take `group` whole, or undefined when it can */
  private unsupported(g: Graph, group: NodeGroup, d: Device): string | undefined {
    for (const id of group.nodes) {
      const t = g.tensors[id]!;
      if (t.group !== group.name) return `claimed ${t.name} of ${t.group ?? 'no group'} in ${group.name}`;
      if (!supports(d, t, g)) return `does not support ${t.op} (${t.name})${multiSequence(t) ? ' over several sequences' : ''}${flashAttention(t) ? ' with flash attention' : ''}`;
    }
    return undefined;
  }

  /** Drops a device's claim of a group everywhere (its reservation did not fit). */
  dropGroup(d: Device, name: string, why: string): void {
    let s = this.overBudget.get(d);
    if (!s) this.overBudget.set(d, (s = new Set()));
    s.add(name);
    for (const owner of this.claims.values()) if (owner.get(name) === d) owner.delete(name);
    this.fallbacks.push(`${name}: ${d.name} ${why}; runs on the next device`);
  }

  /** groups each accelerator holds in any claim: for reservations and reports */
  claimedGroups(): Map<Device, string[]> {
    const out = new Map<Device, Set<string>>();
    for (const owner of this.claims.values()) for (const [name, d] of owner) {
      let s = out.get(d);
      if (!s) out.set(d, (s = new Set()));
      s.add(name);
    }
    return new Map([...out].map(([d, s]) => [d, [...s]]));
  }

  // ---- assignment ----

  private perOp(g: Graph, t: TensorDesc, phase: Phase, batch: number): Device {
    const f = this.opts.phaseDevice?.[phase];
    if (f && !f.claimGroups && supports(f, t, g)) return f;
    for (const d of this.opts.devices) if (!d.claimGroups && supports(d, t, g) && d.prefersOp(t, g, batch)) return d;
    for (const d of this.opts.devices) if (!d.claimGroups && supports(d, t, g)) return d;
    throw new SchedulerError('NO_DEVICE', `no device supports op ${t.op} (${t.name})`);
  }

  private assign(g: Graph, k: PlanKey): { devOf: Device[]; groupOf: (string | undefined)[]; stateDevice: Map<string, Device> } {
    const owner = k.accel ? this.claims.get(groupKey(k.phase, k.nTokens, k.nOutputs)) : undefined;
    const dropped = new Set<string>();
    const forced = new Set<number>();
    for (;;) {
      const devOf: Device[] = [];
      const groupOf: (string | undefined)[] = [];
      for (const id of g.nodes) {
        const t = g.tensors[id]!;
        const gd = t.group !== undefined && !dropped.has(t.group) ? owner?.get(t.group) : undefined;
        if (gd) { devOf[id] = gd; groupOf[id] = t.group; continue; }
        devOf[id] = forced.has(id) ? this.host : this.perOp(g, t, k.phase, g.nTokens);
      }
      // Every node reading one state tensor (a layer's kv_store and attention) runs on one device, so
      // the rows a batch stores are there when its attention reads them.
      const stateDevice = new Map<string, Device>();
      let retry = false;
      for (const id of g.nodes) {
        for (const s of g.tensors[id]!.src) {
          const st = g.tensors[s]!;
          if (st.role !== 'state') continue;
          const d = stateDevice.get(st.name);
          if (!d) { stateDevice.set(st.name, devOf[id]!); continue; }
          if (d === devOf[id]) continue;
          // split across devices: un-claim the groups involved, or pull per-op nodes to the host
          for (const j of g.nodes) {
            if (!g.tensors[j]!.src.includes(s)) continue;
            const gr = groupOf[j];
            if (gr !== undefined) { dropped.add(gr); this.fallbacks.push(`${gr}: ${st.name} is read on two devices; runs on the next device`); }
            else forced.add(j);
          }
          retry = true;
        }
      }
      if (!retry) return { devOf, groupOf, stateDevice };
    }
  }

  private layout(g: Graph, k: PlanKey): Layout {
    const { devOf, groupOf, stateDevice } = this.assign(g, k);
    // Splits: maximal runs of nodes on one device; a claimed group is a split of its own (one engine).
    const runs: Layout['runs'] = [];
    for (const id of g.nodes) {
      const d = devOf[id]!, gr = groupOf[id];
      const last = runs[runs.length - 1];
      if (last && last.device === d && last.group === gr) last.nodes.push(id);
      else runs.push({ device: d, nodes: [id], group: gr });
    }
    const inputIds = inputIdsOf(g);
    const home = new Map<number, Device>();
    for (const id of g.nodes) home.set(id, devOf[id]!);
    const reqs = new Map<Device, ArenaRequest[]>();
    const req = (d: Device) => { let r = reqs.get(d); if (!r) reqs.set(d, (r = [])); return r; };
    const step = new Map<number, number>();
    g.nodes.forEach((id, i) => step.set(id, i));
    const lastUse = new Map<number, number>();
    g.nodes.forEach((id, i) => { for (const s of g.tensors[id]!.src) lastUse.set(s, i); });
    lastUse.set(g.output, Infinity);

    let copyKey = -1;
    const localKey: Map<number, number>[] = runs.map(() => new Map());
    runs.forEach((run, ri) => {
      const firstStep = step.get(run.nodes[0]!)!;
      const lastStep = step.get(run.nodes[run.nodes.length - 1]!)!;
      for (const id of run.nodes) {
        for (const s of g.tensors[id]!.src) {
          const st = g.tensors[s]!;
          if (st.role === 'state') continue; // each device reads its own copy of the cache
          if (st.role === 'weight' && run.device.holdsWeight?.(st.name)) continue; // compiled into the device
          if (inputIds.includes(s) && !home.has(s)) home.set(s, run.device);
          const h = st.role === 'weight' ? this.opts.weights!.get(st)?.device : home.get(s);
          if (!h) throw new SchedulerError('NO_DEVICE', `tensor ${st.name} has no placement`);
          if (h !== run.device && !localKey[ri]!.has(s)) {
            const key = copyKey--;
            localKey[ri]!.set(s, key);
            req(run.device).push({ id: key, size: tBytes(st), first: firstStep, last: lastStep });
          }
        }
      }
    });
    for (const [id, d] of home) {
      const isInput = inputIds.includes(id);
      req(d).push({ id, size: tBytes(g.tensors[id]!), first: isInput ? -1 : step.get(id)!, last: isInput ? Infinity : lastUse.get(id) ?? step.get(id)! });
    }
    const offsets = new Map<Device, Map<number, number>>();
    const sizes = new Map<Device, number>();
    for (const [d, r] of reqs) {
      const p = planArena(r, d.bufferType().alignment);
      offsets.set(d, p.offsets);
      sizes.set(d, p.size);
    }
    return { ...k, graph: g, devOf, runs, localKey, home, offsets, sizes, stateDevice };
  }

  /** the device assignment of `g` as a string (worst-case search: batches with equal signatures share a layout) */
  signature(g: Graph, k: PlanKey): string {
    const { devOf } = this.assign(g, k);
    return g.nodes.map((id) => devOf[id]!.name).join(',');
  }

  /** accepted claims for a plan key: group name -> device */
  groupOwners(g: Graph, k: PlanKey): Map<string, Device> {
    return (k.accel ? this.claims.get(groupKey(k.phase, g.nTokens, g.nOutputs)) : undefined) ?? new Map();
  }

  /** devices of the state tensors in a layout made for `g` (which device needs which cache copy) */
  stateDevices(g: Graph, k: PlanKey): Map<string, Device> { return this.assign(g, k).stateDevice; }

  /**
   * Sizes one compute arena per device for the worst cases (`graphs`: the largest graph of each
   * structure and device assignment the context will run) and allocates them. Returns the layouts'
   * per-device bytes (for reservations) before allocating when `dryRun`.
   */
  reserve(graphs: { graph: Graph; key: PlanKey }[], dryRun = false): Map<Device, number> {
    const layouts = graphs.map(({ graph, key }) => this.layout(graph, key));
    const need = new Map<Device, number>();
    for (const l of layouts) for (const [d, s] of l.sizes) need.set(d, Math.max(need.get(d) ?? 0, s));
    if (dryRun) return need;
    for (const a of this.arenas.values()) a.free();
    this.arenas.clear();
    for (const [d, s] of need) this.arenas.set(d, d.bufferType().allocate(s, 'compute'));
    this.reserved = layouts;
    return need;
  }

  /** bytes of each device's compute arena */
  arenaBytes(): Map<string, number> { return new Map([...this.arenas].map(([d, b]) => [d.name, b.size])); }

  /** Sets where each device's copy of a state tensor lives (before the first plan). */
  setStates(s: StateLookup): void { this.states = s; }

  /** Places the layout in the arenas: reuses a reserved layout's offsets when it dominates this one. */
  private fit(l: Layout): Map<Device, Map<number, number>> {
    const same = (r: Layout) => r.phase === l.phase && r.accel === l.accel && sameStructure(r.graph, l.graph) &&
      l.graph.nodes.every((id) => r.devOf[id] === l.devOf[id]) && dominated(l.graph, r.graph);
    const r = this.reserved.find(same);
    if (r) return r.offsets;
    for (const [d, s] of l.sizes) {
      const a = this.arenas.get(d);
      if (!a || a.size < s) {
        throw new SchedulerError('ARENA_OVERFLOW', `plan for ${l.phase} ${l.nTokens} tokens needs ${s} bytes of compute memory on ${d.name} ` +
          `but the arena reserved at context creation holds ${a?.size ?? 0}: no reserved worst case covers this shape`);
      }
    }
    return l.offsets;
  }

  /** A plan for `g`, placed inside the reserved arenas (nothing is allocated on any device). */
  plan(g: Graph, key?: PlanKey): Plan {
    if (!key) {
      // standalone: claim (compile) this shape now and size the arenas for it when they are too small
      key = { phase: g.nTokens > 1 ? 'prefill' : 'decode', nTokens: g.nTokens, nOutputs: g.nOutputs, accel: true };
      const w = this.opts.weights!;
      const bytesOf = (id: number) => { const p = w.get(g.tensors[id]!)!.placement; return p.buffer.hostView?.(p.offset, p.nBytes) ?? p.buffer.get(p.offset, p.nBytes); };
      const r = this.claim(g, key.phase, { weightBytes: bytesOf, weightType: (id) => { const d = g.tensors[id]!.dtype; return typeof d === 'number' ? d : d === 'f16' ? 1 : 0; } });
      if (r) throw new SchedulerError('NOT_PREPARED', 'a device compiles asynchronously: claim() and await it before plan()');
      const l0 = this.layout(g, key);
      if ([...l0.sizes].some(([d, s]) => (this.arenas.get(d)?.size ?? -1) < s)) this.reserve([{ graph: g, key }]);
    }
    if (this.arenas.size === 0) throw new SchedulerError('NOT_PREPARED', 'reserve the compute arenas before planning');
    const l = this.layout(g, key);
    const offsets = this.fit(l);
    const arenas = this.arenas;
    const placeOn = (d: Device, slot: number, t: TensorDesc): Placement => ({ buffer: arenas.get(d)!, offset: offsets.get(d)!.get(slot)!, nBytes: tBytes(t) });
    const global = new Map<number, Placement>();
    for (const [id, d] of l.home) global.set(id, placeOn(d, id, g.tensors[id]!));
    const weights = this.opts.weights!, states = this.states;
    const leafPlacement = (id: number, d: Device): Placement => {
      const t = g.tensors[id]!;
      if (t.role === 'state') {
        const p = states(t, d);
        if (!p) throw new SchedulerError('NO_DEVICE', `${t.name} has no copy on ${d.name}`);
        return p;
      }
      const w = weights.get(t);
      if (!w) throw new SchedulerError('NO_DEVICE', `tensor ${t.name} has no placement`);
      return w.placement;
    };
    const assignment = new Map<number, string>();
    for (const id of g.nodes) assignment.set(id, l.devOf[id]!.name);
    const profiling = !!this.profiler?.perOp;
    const splits: Split[] = l.runs.map((run, ri) => {
      const local = new Map<number, Placement>();
      const copies: Copy[] = [];
      for (const [srcId, slot] of l.localKey[ri]!) {
        const t = g.tensors[srcId]!;
        const to = placeOn(run.device, slot, t);
        local.set(srcId, to);
        const fromDevice = t.role === 'weight' ? weights.get(t)!.device : l.home.get(srcId)!;
        copies.push({ from: global.get(srcId) ?? leafPlacement(srcId, fromDevice), to, fromDevice });
      }
      for (const id of run.nodes) for (const s of g.tensors[id]!.src) {
        if (!local.has(s) && !global.has(s)) local.set(s, leafPlacement(s, run.device));
      }
      const placement = (id: number) => local.get(id) ?? global.get(id)!;
      const split: Split = { device: run.device, backend: this.backends.get(run.device)!, nodes: run.nodes, group: run.group, copies, placement, ctx: { graph: g, placement } };
      if (profiling && !run.group) split.single = run.nodes.map((id) => [id]);
      return split;
    });
    for (const s of splits) s.backend.prepare?.(s.ctx, s.nodes);
    if (profiling) for (const s of splits) for (const one of s.single ?? []) s.backend.prepare?.(s.ctx, one);

    // Inputs: staged on the host, written once per evaluation into their slot (straight into a
    // host-visible arena, else through the buffer's set with a view made here).
    const tokens = new Int32Array(g.nTokens), positions = new Int32Array(g.nTokens), outRows = new Int32Array(g.nOutputs);
    const kvRows = g.inputs.kvRows === undefined ? undefined : new Int32Array(g.nTokens);
    const batchRows = g.inputs.batchRows === undefined ? undefined : new Int32Array(2);
    const swaRows = g.inputs.swaRows === undefined ? undefined : new Int32Array(g.nTokens);
    const swaMirror = g.inputs.swaMirror === undefined ? undefined : new Int32Array(g.nTokens);
    const inputs: { p: Placement; src: Int32Array; bytes: Uint8Array; host: Int32Array | null; srcView: Int32Array | null }[] = [];
    const staged: [number, Int32Array][] = [[g.inputs.tokens, tokens], [g.inputs.positions, positions], [g.inputs.outputRows, outRows]];
    if (kvRows) staged.push([g.inputs.kvRows!, kvRows]);
    if (batchRows) staged.push([g.inputs.batchRows!, batchRows]);
    if (swaRows) staged.push([g.inputs.swaRows!, swaRows]);
    if (swaMirror) staged.push([g.inputs.swaMirror!, swaMirror]);
    for (const [id, src] of staged) {
      const p = global.get(id);
      if (!p) continue; // unused by this graph
      inputs.push({ p, src, bytes: new Uint8Array(src.buffer, src.byteOffset, Math.min(src.byteLength, p.nBytes)), host: null, srcView: null });
    }
    const hostI32 = (p: Placement, n: number): Int32Array | null => {
      const v = p.buffer.hostView?.(p.offset, 4 * n);
      return v ? new Int32Array(v.buffer, v.byteOffset, n) : null;
    };
    const out = global.get(g.output)!;
    let outHost: Float32Array | null = null;
    const outLen = out.nBytes >> 2;
    let outBytes: Uint8Array | null = null;
    let outBytesFor: Float32Array | null = null;
    const sync = splits.every((s) => !s.backend.submit);
    return {
      ...key,
      graph: g,
      splits,
      tokens, positions, outRows,
      ...(kvRows ? { kvRows } : {}),
      ...(batchRows ? { batchRows } : {}),
      ...(swaRows ? { swaRows, swaMirror } : {}),
      assignment,
      stateDevice: l.stateDevice,
      sync,
      upload() {
        for (let i = 0; i < inputs.length; i++) {
          const x = inputs[i]!;
          // a host view goes stale when a non-shared wasm memory grows (its buffer detaches): fetch it again
          if (x.host === null || x.host.byteLength === 0) {
            x.host = hostI32(x.p, x.bytes.byteLength >> 2);
            x.srcView = x.host ? x.src.subarray(0, x.host.length) : null; // made once: a view per upload would allocate per token
          }
          if (x.host) x.host.set(x.srcView!);
          else x.p.buffer.set(x.p.offset, x.bytes);
        }
      },
      setInput(id, values) {
        const dst = id === g.inputs.tokens ? tokens : id === g.inputs.positions ? positions : id === g.inputs.outputRows ? outRows : id === g.inputs.kvRows ? kvRows ?? null : id === g.inputs.batchRows ? batchRows ?? null
          : id === g.inputs.swaRows ? swaRows ?? null : id === g.inputs.swaMirror ? swaMirror ?? null : null;
        if (!dst) return;
        dst.set(values.subarray(0, dst.length));
        this.upload();
      },
      readOutput(dest) {
        if (outHost === null || outHost.byteLength === 0) {
          const v = out.buffer.hostView?.(out.offset, out.nBytes);
          outHost = v ? new Float32Array(v.buffer, v.byteOffset, outLen) : null;
        }
        const n = Math.min(outLen, dest.length);
        if (outHost) { dest.set(n === outLen ? outHost : outHost.subarray(0, n)); return dest; }
        if (outBytesFor !== dest) { outBytes = new Uint8Array(dest.buffer, dest.byteOffset, 4 * n); outBytesFor = dest; }
        out.buffer.get(out.offset, 4 * n, outBytes!);
        return dest;
      },
      free() {
        for (const s of splits) s.backend.release?.(s.nodes);
        splits.length = 0;
        inputs.length = 0;
      },
    };
  }

  /** Runs a plan: per split, its copies in, then its nodes; asynchronous backends are queued and waited on once. */
  async compute(plan: Plan): Promise<void> {
    if (plan.sync && !this.profiler) { this.computeSync(plan); return; }
    const prof = this.profiler;
    // the last queued event per device: a device's submits run in order (a stream), so waiting on its
    // last one waits on all (queue many, wait once)
    let pending: { device: Device; wait(): Promise<void> }[] = [];
    const drain = async (d?: Device) => {
      if (!pending.length) return;
      if (d && !pending.some((p) => p.device === d)) return;
      const all = pending;
      pending = [];
      for (const p of all) await p.wait();
    };
    const queue = (device: Device, ev: { wait(): Promise<void> }) => {
      const i = pending.findIndex((p) => p.device === device);
      if (i >= 0) pending[i] = { device, wait: () => ev.wait() };
      else pending.push({ device, wait: () => ev.wait() });
    };
    for (const s of plan.splits) {
      // a copy from a device with queued work waits for that work first
      for (const c of s.copies) if (pending.length) await drain(c.fromDevice);
      for (const c of s.copies) {
        const t0 = prof ? performance.now() : 0;
        c.from.buffer.copyTo(c.to.buffer, c.from.offset, c.to.offset, c.from.nBytes);
        if (prof) prof.copy(c.fromDevice, s.device, c.from.nBytes, performance.now() - t0);
      }
      const ctx = s.ctx;
      if (s.backend.submit && !prof) {
        queue(s.device, s.backend.submit(ctx, s.nodes));
        continue;
      }
      if (pending.length && pending.some((p) => p.device !== s.device)) await drain();
      if (prof && s.single) {
        for (const one of s.single) {
          const t0 = performance.now();
          const r = s.backend.compute(ctx, one);
          if (r) await r;
          prof.nodes(plan, s, one, performance.now() - t0, t0);
        }
      } else {
        const t0 = prof ? performance.now() : 0;
        const r = s.backend.submit ? s.backend.submit(ctx, s.nodes).wait() : s.backend.compute(ctx, s.nodes);
        if (r) await r;
        if (prof) prof.nodes(plan, s, s.nodes, performance.now() - t0, t0);
      }
    }
    await drain();
  }

  /** Synchronous compute when every backend is synchronous (the decode fast path: allocates nothing). */
  computeSync(plan: Plan): void {
    const splits = plan.splits;
    for (let i = 0; i < splits.length; i++) {
      const s = splits[i]!;
      for (let j = 0; j < s.copies.length; j++) {
        const c = s.copies[j]!;
        c.from.buffer.copyTo(c.to.buffer, c.from.offset, c.to.offset, c.from.nBytes);
      }
      const r = s.backend.compute(s.ctx, s.nodes);
      if (r) throw new Error(`backend ${s.device.name} is asynchronous: use compute()`);
    }
  }

  get profile(): Profiler | undefined { return this.profiler; }

  /** does any device report simulated time (Backend.lastSimulatedSeconds)? */
  get simulated(): boolean { return [...this.backends.values()].some((b) => !!b.lastSimulatedSeconds); }

  close(): void {
    for (const a of this.arenas.values()) a.free();
    this.arenas.clear();
    this.reserved = [];
    for (const b of this.backends.values()) b.close?.();
  }
}

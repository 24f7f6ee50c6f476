// The scheduler: walks a graph once per shape, assigns every node to a device, groups runs of
// nodes on one device into splits, inserts copies where a node reads a tensor that lives on
// another device, and plans every intermediate into one arena per device. The resulting Plan is
// reused for every batch of that shape.

import type { Backend, Device, DeviceBuffer, Placement } from '../backends/backend.js';
import { tensorBytes } from '../backends/backend.js';
import type { Graph, TensorDesc } from '../graph/graph.js';
import { rowBytes } from '../gguf/ggml-types.js';
import { planArena, type ArenaRequest } from './arena.js';

export interface LeafPlacement {
  /** weights and state: where the bytes live and on which device */
  get(t: TensorDesc): { device: Device; placement: Placement } | undefined;
}

export interface SchedulerOptions {
  /** devices in priority order; the last one must support every op (the fallback) */
  devices: Device[];
  leaves: LeafPlacement;
  /** force every node that can run there onto this device (phase policy: --prefill-device / --decode-device) */
  forceDevice?: Device;
}

export interface Copy {
  from: Placement;
  to: Placement;
}

export interface Split {
  device: Device;
  backend: Backend;
  nodes: number[];
  /** copies to perform before the split runs */
  copies: Copy[];
  placement: (id: number) => Placement;
}

export interface Plan {
  graph: Graph;
  splits: Split[];
  /** bytes of each device's arena */
  arenaBytes: Map<string, number>;
  /** writes an i32 input tensor (tokens, positions, output rows) on every device that reads it */
  setInput(id: number, values: Int32Array): void;
  /** reads the graph output (f32) */
  readOutput(dest: Float32Array): Float32Array;
  /** device each node runs on, for reports */
  assignment: Map<number, string>;
  free(): void;
}

const tBytes = (t: TensorDesc) => tensorBytes(t, rowBytes);

export class Scheduler {
  private readonly backends = new Map<Device, Backend>();
  constructor(private readonly opts: SchedulerOptions) {
    if (opts.devices.length === 0) throw new Error('scheduler needs at least one device');
    for (const d of opts.devices) this.backends.set(d, d.createBackend());
  }

  get devices(): Device[] { return this.opts.devices; }

  private assign(g: Graph, t: TensorDesc, batch: number): Device {
    // Nodes that touch persistent state run where the state lives: the KV cache is never moved per token.
    for (const s of t.src) {
      const st = g.tensors[s]!;
      if (st.role === 'state') {
        const leaf = this.opts.leaves.get(st);
        if (leaf) {
          if (!leaf.device.supportsOp(t, g)) throw new Error(`${t.op} (${t.name}) must run where ${st.name} lives, but device ${leaf.device.name} does not support it`);
          return leaf.device;
        }
      }
    }
    const f = this.opts.forceDevice;
    if (f && f.supportsOp(t, g)) return f;
    for (const d of this.opts.devices) if (d.supportsOp(t, g) && d.prefersOp(t, g, batch)) return d;
    for (const d of this.opts.devices) if (d.supportsOp(t, g)) return d;
    throw new Error(`no device supports op ${t.op} (${t.name})`);
  }

  plan(g: Graph): Plan {
    const devOf = new Map<number, Device>();
    const assignment = new Map<number, string>();
    for (const id of g.nodes) {
      const d = this.assign(g, g.tensors[id]!, g.nTokens);
      devOf.set(id, d);
      assignment.set(id, d.name);
    }
    // Splits: maximal runs of consecutive nodes on one device.
    const runs: { device: Device; nodes: number[] }[] = [];
    for (const id of g.nodes) {
      const d = devOf.get(id)!;
      const last = runs[runs.length - 1];
      if (last && last.device === d) last.nodes.push(id);
      else runs.push({ device: d, nodes: [id] });
    }
    // Home of each tensor: leaves where placed; inputs on the first device that reads them; nodes where computed.
    const inputIds = [g.inputs.tokens, g.inputs.positions, g.inputs.outputRows];
    const home = new Map<number, Device>(devOf);
    // Arena requests per device; copies are extra tensors keyed by (id, device).
    const reqs = new Map<Device, ArenaRequest[]>();
    const req = (d: Device) => { let r = reqs.get(d); if (!r) reqs.set(d, (r = [])); return r; };
    const step = new Map<number, number>();
    g.nodes.forEach((id, i) => step.set(id, i));
    const lastUse = new Map<number, number>();
    g.nodes.forEach((id, i) => { for (const s of g.tensors[id]!.src) lastUse.set(s, i); });
    lastUse.set(g.output, Infinity);

    // Local copies: for each split, sources living elsewhere get a slot on the split's device.
    let copyKey = -1;
    const copyPlans: { run: number; srcId: number; key: number }[] = [];
    const localKey: Map<number, number>[] = runs.map(() => new Map());
    runs.forEach((run, ri) => {
      const firstStep = step.get(run.nodes[0]!)!;
      const lastStep = step.get(run.nodes[run.nodes.length - 1]!)!;
      for (const id of run.nodes) {
        for (const s of g.tensors[id]!.src) {
          const st = g.tensors[s]!;
          if (inputIds.includes(s)) {
            if (!home.has(s)) home.set(s, run.device);
          }
          const h = st.role === 'weight' || st.role === 'state' ? this.opts.leaves.get(st)?.device : home.get(s);
          if (!h) throw new Error(`tensor ${st.name} has no placement`);
          if (h !== run.device && !localKey[ri]!.has(s)) {
            const key = copyKey--;
            localKey[ri]!.set(s, key);
            copyPlans.push({ run: ri, srcId: s, key });
            req(run.device).push({ id: key, size: tBytes(st), first: firstStep, last: lastStep });
          }
        }
      }
    });
    for (const [id, d] of home) {
      const t = g.tensors[id]!;
      if (t.role === 'weight' || t.role === 'state') continue;
      const isInput = inputIds.includes(id);
      req(d).push({ id, size: tBytes(t), first: isInput ? -1 : step.get(id)!, last: isInput ? Infinity : lastUse.get(id) ?? step.get(id)! });
    }
    // One arena per device.
    const arenas = new Map<Device, DeviceBuffer>();
    const offsets = new Map<Device, Map<number, number>>();
    const arenaBytes = new Map<string, number>();
    for (const [d, r] of reqs) {
      const bt = d.bufferType();
      const p = planArena(r, bt.alignment);
      arenas.set(d, bt.allocate(p.size, 'compute'));
      offsets.set(d, p.offsets);
      arenaBytes.set(d.name, p.size);
    }
    const placeOn = (d: Device, key: number, t: TensorDesc): Placement => ({ buffer: arenas.get(d)!, offset: offsets.get(d)!.get(key)!, nBytes: tBytes(t) });
    const global = new Map<number, Placement>();
    for (const [id, d] of home) {
      const t = g.tensors[id]!;
      if (t.role !== 'weight' && t.role !== 'state') global.set(id, placeOn(d, id, t));
    }
    const globalPlacement = (id: number): Placement => {
      const p = global.get(id);
      if (p) return p;
      const leaf = this.opts.leaves.get(g.tensors[id]!);
      if (!leaf) throw new Error(`tensor ${g.tensors[id]!.name} has no placement`);
      return leaf.placement;
    };
    const splits: Split[] = runs.map((run, ri) => {
      const local = new Map<number, Placement>();
      const copies: Copy[] = [];
      for (const cp of copyPlans.filter((c) => c.run === ri)) {
        const t = g.tensors[cp.srcId]!;
        const to = placeOn(run.device, cp.key, t);
        local.set(cp.srcId, to);
        copies.push({ from: globalPlacement(cp.srcId), to });
      }
      return {
        device: run.device,
        backend: this.backends.get(run.device)!,
        nodes: run.nodes,
        copies,
        placement: (id: number) => local.get(id) ?? globalPlacement(id),
      };
    });
    return {
      graph: g,
      splits,
      arenaBytes,
      assignment,
      setInput(id, values) {
        const p = global.get(id);
        if (!p) return; // input unused by this graph
        p.buffer.set(p.offset, new Uint8Array(values.buffer, values.byteOffset, Math.min(values.byteLength, p.nBytes)));
      },
      readOutput(dest) {
        const p = global.get(g.output)!;
        p.buffer.get(p.offset, Math.min(p.nBytes, dest.byteLength), new Uint8Array(dest.buffer, dest.byteOffset, Math.min(p.nBytes, dest.byteLength)));
        return dest;
      },
      free() { for (const a of arenas.values()) a.free(); },
    };
  }

  /** Runs a plan: per split, copy in what it reads from elsewhere, then compute its nodes. */
  async compute(plan: Plan): Promise<void> {
    for (const s of plan.splits) {
      for (const c of s.copies) c.from.buffer.copyTo(c.to.buffer, c.from.offset, c.to.offset, c.from.nBytes);
      const r = s.backend.compute({ graph: plan.graph, placement: s.placement }, s.nodes);
      if (r) await r;
    }
  }

  /** Synchronous compute when every backend is synchronous (decode fast path). */
  computeSync(plan: Plan): void {
    for (const s of plan.splits) {
      for (const c of s.copies) c.from.buffer.copyTo(c.to.buffer, c.from.offset, c.to.offset, c.from.nBytes);
      const r = s.backend.compute({ graph: plan.graph, placement: s.placement }, s.nodes);
      if (r) throw new Error(`backend ${s.device.name} is asynchronous: use compute()`);
    }
  }

  close(): void { for (const b of this.backends.values()) b.close?.(); }
}

// What a run spent where: per (phase, op type, device) calls, wall and simulated milliseconds; copies
// between devices each way; the KV hand-over; optionally a Chrome trace (one track per device).
// The scheduler feeds it only when profiling is on (it runs per-op devices node by node then).

import type { Device, Phase } from '../backends/backend.js';
import type { Plan, Split } from './scheduler.js';

export interface OpRow { phase: Phase; op: string; device: string; calls: number; wall_ms: number; sim_ms: number | null }
export interface CopyRow { from: string; to: string; count: number; bytes: number; wall_ms: number; sim_ms: number }
export interface HandOverRow { copies: number; bytes: number; wall_ms: number; sim_ms: number }

export interface ProfileReport {
  ops: OpRow[];
  copies: CopyRow[];
  kv_handover: { to_decode: HandOverRow; to_prefill: HandOverRow };
  phases: Record<Phase, { tokens: number; evaluations: number; wall_ms: number; sim_ms: number }>;
}

interface TraceEvent { name: string; cat: string; ph: string; ts: number; dur?: number; pid: number; tid: number; args?: Record<string, unknown> }

export class Profiler {
  private readonly ops = new Map<string, OpRow>();
  private readonly copyRows = new Map<string, CopyRow>();
  readonly handOver = { to_decode: row(), to_prefill: row() };
  readonly phases: ProfileReport['phases'] = { prefill: phaseRow(), decode: phaseRow() };
  private readonly events: TraceEvent[] = [];
  private readonly tids = new Map<string, number>();
  private readonly t0 = performance.now();
  /** the phase of the evaluation in progress */
  phase: Phase = 'prefill';

  /**
   * `trace`: keep trace events. `perOp`: time per-op devices node by node (exact per-op rows; adds a
   * clock read and a call per node); off: one timing per split (bench's simulated time).
   */
  constructor(readonly trace = false, readonly perOp = true) {}

  /** simulated ms of every evaluation so far (simulated devices' predicted time, the others' wall time, copies' link time) */
  get simulatedMs(): number { return this.phases.prefill.sim_ms + this.phases.decode.sim_ms; }

  private tid(device: string): number {
    let t = this.tids.get(device);
    if (t === undefined) {
      this.tids.set(device, (t = this.tids.size + 1));
      this.events.push({ name: 'thread_name', cat: '__metadata', ph: 'M', ts: 0, pid: 1, tid: t, args: { name: device } });
    }
    return t;
  }
  private event(name: string, device: string, start: number, ms: number, args?: Record<string, unknown>): void {
    if (!this.trace) return;
    this.events.push({ name, cat: this.phase, ph: 'X', ts: Math.round((start - this.t0) * 1000), dur: Math.max(1, Math.round(ms * 1000)), pid: 1, tid: this.tid(device), args });
  }

  /** `nodes` of split `s` ran in `ms` (wall), starting at `start` (performance.now()). */
  nodes(plan: Plan, s: Split, nodes: readonly number[], ms: number, start: number): void {
    const g = plan.graph, d = s.device;
    const simS = s.backend.lastSimulatedSeconds?.();
    const sim = simS !== undefined ? simS * 1000 : null;
    // a split that runs as one unit (an engine) shares its time among its nodes by the device's
    // estimate when it has one, else evenly
    const w = nodes.map((id) => (nodes.length > 1 ? d.estimate?.(plan.phase, g, [id]) : undefined) ?? 1);
    const total = w.reduce((a, b) => a + b, 0) || 1;
    nodes.forEach((id, i) => {
      const op = g.tensors[id]!.op;
      const key = `${plan.phase}|${op}|${d.name}`;
      let r = this.ops.get(key);
      if (!r) this.ops.set(key, (r = { phase: plan.phase, op, device: d.name, calls: 0, wall_ms: 0, sim_ms: null }));
      r.calls++;
      r.wall_ms += (ms * w[i]!) / total;
      if (sim !== null) r.sim_ms = (r.sim_ms ?? 0) + (sim * w[i]!) / total;
    });
    const ph = this.phases[plan.phase];
    ph.wall_ms += ms;
    ph.sim_ms += sim ?? ms;
    this.event(s.group ?? (nodes.length === 1 ? g.tensors[nodes[0]!]!.name : `${nodes.length} nodes`), d.name, start, ms, sim !== null ? { sim_ms: sim } : undefined);
  }

  /** simulated ms of moving `bytes` from `from` to `to` (the devices' transfer models; 0 between host devices) */
  static transferMs(from: Device, to: Device, bytes: number): number {
    return 1000 * ((from.transferSeconds?.(bytes, 'out') ?? 0) + (to.transferSeconds?.(bytes, 'in') ?? 0));
  }

  copy(from: Device, to: Device, bytes: number, ms: number, start = performance.now() - ms): void {
    const key = `${from.name}>${to.name}`;
    let r = this.copyRows.get(key);
    if (!r) this.copyRows.set(key, (r = { from: from.name, to: to.name, count: 0, bytes: 0, wall_ms: 0, sim_ms: 0 }));
    const sim = Profiler.transferMs(from, to, bytes);
    r.count++; r.bytes += bytes; r.wall_ms += ms; r.sim_ms += sim;
    const ph = this.phases[this.phase];
    ph.wall_ms += ms; ph.sim_ms += sim || ms;
    this.event(`copy from ${from.name}`, to.name, start, ms, { bytes, sim_ms: sim });
  }

  /** KV rows crossing devices: after a prefill chunk to the decode device, or before one to the prefill device. */
  kv(direction: 'to_decode' | 'to_prefill', from: Device, to: Device, bytes: number, ms: number, start: number): void {
    const r = this.handOver[direction];
    const sim = Profiler.transferMs(from, to, bytes);
    r.copies++; r.bytes += bytes; r.wall_ms += ms; r.sim_ms += sim;
    const ph = this.phases[this.phase];
    ph.wall_ms += ms; ph.sim_ms += sim || ms;
    this.event(`kv hand-over ${direction}`, to.name, start, ms, { bytes, sim_ms: sim });
  }

  /** one evaluation of `tokens` real tokens in the current phase */
  evaluated(tokens: number): void {
    const ph = this.phases[this.phase];
    ph.tokens += tokens;
    ph.evaluations++;
  }

  report(): ProfileReport {
    const r2 = (x: number) => Math.round(x * 1000) / 1000;
    return {
      ops: [...this.ops.values()].map((r) => ({ ...r, wall_ms: r2(r.wall_ms), sim_ms: r.sim_ms === null ? null : r2(r.sim_ms) })),
      copies: [...this.copyRows.values()].map((r) => ({ ...r, wall_ms: r2(r.wall_ms), sim_ms: r2(r.sim_ms) })),
      kv_handover: this.handOver,
      phases: this.phases,
    };
  }

  /** Chrome trace-event format (JSON object form): opens in Perfetto and chrome://tracing. */
  traceJson(): string {
    return JSON.stringify({ traceEvents: this.events, displayTimeUnit: 'ms' });
  }
}

function row(): HandOverRow { return { copies: 0, bytes: 0, wall_ms: 0, sim_ms: 0 }; }
function phaseRow() { return { tokens: 0, evaluations: 0, wall_ms: 0, sim_ms: 0 }; }

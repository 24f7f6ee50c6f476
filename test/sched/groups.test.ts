// Whole-group claims, static shapes, phase devices and the KV hand-over, on a small test accelerator:
// it takes whole 'blk.N' groups, runs only 1- and 8-token graphs, refuses rope in blk.1 (so that
// layer falls back whole), keeps its own copies of the weights it compiles and has no host-visible
// memory. Computing with reference kernels, every split, padding and hand-over must leave the logits
// bit-identical to the reference device alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Backend, BufferType, ComputeContext, Device, DeviceBuffer, NodeGroup, Placement } from '../../src/backends/backend.js';
import { computeNode, referenceDevice } from '../../src/backends/reference/device.js';
import { hostBuffer } from '../../src/backends/host-buffer.js';
import type { Graph } from '../../src/graph/graph.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { Profiler } from '../../src/sched/profile.js';
import { fixture } from '../helpers/fixtures.js';

function testAccelerator(o: { async?: boolean; refuseRopeIn?: string } = {}): Device & { compiled: Set<string>; submits: number; waits: number } {
  const own = new WeakMap<DeviceBuffer, Uint8Array>();
  const bt: BufferType = {
    name: 'accel-private', alignment: 64,
    allocate(size, usage) {
      const bytes = new Uint8Array(Math.ceil(Math.max(size, 1) / 8) * 8);
      const b = hostBuffer(bytes, usage, bt) as DeviceBuffer & { hostView?: unknown };
      delete b.hostView; // device memory: reached through set/get/copyTo only
      own.set(b, bytes);
      return b;
    },
  };
  const weights = new Map<string, Uint8Array>();
  const compiled = new Set<string>();
  const view = (bytes: Uint8Array): DeviceBuffer => hostBuffer(bytes, 'compute', bt);
  const dev: Device & { compiled: Set<string>; submits: number; waits: number } = {
    name: 'accel', kind: 'sim', description: 'test accelerator: whole layers, shapes 1 and 8',
    compiled, submits: 0, waits: 0,
    staticShapes: [1, 8],
    memory: () => ({ free: 0, total: 0 }),
    bufferType: () => bt,
    supportsOp: (t) => !(t.op === 'rope' && t.group === (o.refuseRopeIn ?? 'blk.1')),
    prefersOp: () => true,
    claimGroups(g: Graph): NodeGroup[] {
      const by = new Map<string, number[]>();
      for (const id of g.nodes) { const gr = g.tensors[id]!.group; if (gr?.startsWith('blk.')) { if (!by.has(gr)) by.set(gr, []); by.get(gr)!.push(id); } }
      return [...by].map(([name, nodes]) => ({ name, nodes }));
    },
    compileGroup(req) {
      assert.ok(req.nTokens === 1 || req.nTokens === 8, `compile at ${req.nTokens} tokens`);
      for (const id of req.group.nodes) for (const s of req.graph.tensors[id]!.src) {
        const t = req.graph.tensors[s]!;
        if (t.role === 'weight' && !weights.has(t.name)) weights.set(t.name, Uint8Array.from(req.weightBytes(s)));
      }
      compiled.add(`${req.group.name}@${req.nTokens}`);
    },
    holdsWeight: (name) => weights.has(name),
    createBackend(): Backend {
      const queue: (() => void)[] = [];
      const b: Backend = {
        device: dev,
        compute(ctx: ComputeContext, nodes: readonly number[]) {
          const g = ctx.graph;
          const at = (id: number): Placement => {
            const t = g.tensors[id]!;
            if (t.role === 'weight') { const w = weights.get(t.name)!; return { buffer: view(w), offset: 0, nBytes: w.length }; }
            const p = ctx.placement(id);
            const bytes = own.get(p.buffer);
            assert.ok(bytes, `${t.name} is not in the accelerator's memory`);
            return { buffer: view(bytes), offset: p.offset, nBytes: p.nBytes };
          };
          for (const id of nodes) computeNode(g, g.tensors[id]!, at);
        },
      };
      // asynchronous variant: submit queues the work (run in order when an event is waited on)
      if (o.async) {
        b.submit = (ctx, nodes) => {
          dev.submits++;
          queue.push(() => { b.compute(ctx, nodes); });
          return { wait: async () => { dev.waits++; while (queue.length) queue.shift()!(); } };
        };
      }
      return b;
    },
  };
  return dev;
}

test('prefill on a whole-layer accelerator (padded 8-token chunks), decode on the host: bit-identical, KV handed over', async () => {
  const file = openGguf(fixture('parity/qwen2-q8_0.gguf'));
  const ref = referenceDevice();
  const model = loadModel(file, { device: ref });
  const prompt = [1, 403, 407, 261, 378, 432, 383, 286, 300, 301, 302]; // 8 + 3 (padded to 8)
  const base = new Context(model, { nCtx: 32 });
  const a = [Float32Array.from(await base.decode(prompt, true))];
  for (const t of [310, 311, 312]) a.push(Float32Array.from(await base.decode([t])));

  const acc = testAccelerator();
  const profiler = new Profiler();
  const ctx = await Context.create(model, { nCtx: 32, devices: [acc, ref], prefillDevice: acc, decodeDevice: ref, profiler });
  // compiled at load, at the static shapes only; blk.1 refused whole
  assert.ok(acc.compiled.has('blk.0@8') && !acc.compiled.has('blk.1@8') && ![...acc.compiled].some((k) => k.endsWith('@3')), [...acc.compiled].join(' '));
  assert.ok(ctx.sched.fallbacks.some((f) => f.includes('blk.1')), ctx.sched.fallbacks.join('\n'));
  const plan = ctx.describePlan(8);
  for (const s of plan) if (s.device === 'accel') assert.ok(s.group?.startsWith('blk.') && s.group !== 'blk.1', JSON.stringify(s));
  assert.ok(plan.some((s) => s.device === 'reference' && s.nodes > 0));
  assert.deepEqual(ctx.describePlan(1).map((s) => s.device), ['reference']);

  const b = [Float32Array.from(await ctx.decode(prompt, true))];
  for (const t of [310, 311, 312]) b.push(Float32Array.from(await ctx.decode([t])));
  for (let i = 0; i < a.length; i++) assert.deepEqual(Array.from(b[i]!), Array.from(a[i]!), `evaluation ${i}`);

  const r = profiler.report();
  const onAccel = r.ops.filter((o) => o.phase === 'prefill' && o.op === 'mul_mat' && o.device === 'accel');
  assert.ok(onAccel.length === 1 && onAccel[0]!.calls > 0);
  assert.ok(r.ops.filter((o) => o.phase === 'decode').every((o) => o.device === 'reference'));
  // hand-over: the prompt's K/V rows of every layer the accelerator ran (all but blk.1), once
  const hp = model.hp, layerBytes = 2 * hp.nHeadKv * (hp.headDimK + hp.headDimV);
  assert.equal(r.kv_handover.to_decode.bytes, prompt.length * layerBytes * (hp.nLayer - 1));
  assert.equal(r.kv_handover.to_prefill.bytes, 0);
  // a second prompt after decoding: the accelerator first receives the rows decoded on the host
  await ctx.decode([320, 321]);
  await base.decode([320, 321]);
  assert.equal(profiler.report().kv_handover.to_prefill.bytes, 3 * layerBytes * (hp.nLayer - 1));
  assert.deepEqual(Array.from(await ctx.decode([5])), Array.from(await base.decode([5])));
  ctx.close(); base.close();
  file.source.close?.();
});

test('offload threshold: batches under --offload-min-batch stay on the host, the rest go to the accelerator', async () => {
  const file = openGguf(fixture('parity/qwen2-q8_0.gguf'));
  const ref = referenceDevice();
  const model = loadModel(file, { device: ref });
  const acc = testAccelerator();
  const ctx = await Context.create(model, { nCtx: 32, devices: [acc, ref], offloadMinBatch: 4 });
  assert.ok(ctx.describePlan(3).every((s) => s.device === 'reference'));
  assert.ok(ctx.describePlan(6).some((s) => s.device === 'accel'));
  const base = new Context(model, { nCtx: 32 });
  const p = [1, 403, 407, 261, 378, 432];
  assert.deepEqual(Array.from(await ctx.decode(p)), Array.from(await base.decode(p)));
  ctx.close(); base.close();
  file.source.close?.();
});

test('bench on a simulated accelerator: rows carry sim_tps beside tps_mean', async () => {
  const { ggufEdgeEngine, runBench } = await import('../../src/bench/runner.js');
  const ref = referenceDevice();
  const acc = testAccelerator();
  const simSeconds = 0.004; // the test device "predicts" 4 ms per engine call
  const inner = acc.createBackend.bind(acc);
  acc.createBackend = () => ({ ...inner(), lastSimulatedSeconds: () => simSeconds });
  const path = fixture('parity/qwen2-q8_0.gguf');
  const engine = ggufEdgeEngine(path, 'accel', { devices: async () => ({ host: ref, devices: [acc, ref], prefillDevice: acc, decodeDevice: ref, offloadMinBatch: 32 }) });
  const rows = await runBench(path, [engine], { pp: [8], tg: [2], threads: [1], reps: 1, noWarmup: true });
  const pp = rows.find((r) => r.test === 'pp8')!;
  assert.ok(pp.tps_mean > 0 && pp.sim_tps !== undefined);
  // 8 tokens, one chunk: the accelerator's layers at 4 ms each (simulated) plus the host's wall time for the rest
  assert.ok(8000 / pp.sim_tps! >= (model_layers(path) - 1) * simSeconds * 1000 - 1e-6, `sim ms ${8000 / pp.sim_tps!}`);
});

function model_layers(path: string): number {
  const f = openGguf(path);
  const m = loadModel(f, { device: referenceDevice() });
  f.source.close?.();
  return m.hp.nLayer;
}

test('asynchronous submit: a run of layers is queued and waited on once; same logits', async () => {
  const file = openGguf(fixture('parity/qwen2-q8_0.gguf'));
  const ref = referenceDevice();
  const model = loadModel(file, { device: ref });
  const acc = testAccelerator({ async: true, refuseRopeIn: 'none' });
  const ctx = await Context.create(model, { nCtx: 32, devices: [acc, ref], prefillDevice: acc, decodeDevice: ref });
  const base = new Context(model, { nCtx: 32 });
  const p = [1, 403, 407, 261, 378, 432, 383, 286];
  assert.deepEqual(Array.from(await ctx.decode(p)), Array.from(await base.decode(p)));
  // every layer submitted back to back, one wait before the host reads the result
  assert.equal(acc.submits, model.hp.nLayer);
  assert.equal(acc.waits, 1);
  ctx.close(); base.close();
  file.source.close?.();
});

test('phase policy auto: each phase on the device predicted fastest (accelerator cost model vs the host measured)', async () => {
  const { pickPhaseDevices } = await import('../../src/sched/policy.js');
  const file = openGguf(fixture('parity/qwen2-q8_0.gguf'));
  const ref = referenceDevice();
  const model = loadModel(file, { device: ref });
  const acc = testAccelerator();
  acc.estimate = (phase) => (phase === 'prefill' ? 1e-9 : 1e3);
  const p = await pickPhaseDevices(model, [acc, ref], ref, 16);
  assert.equal(p.prefill.device, acc);
  assert.equal(p.decode.device, ref);
  assert.ok(p.decode.candidates.some((c) => c.device === 'reference' && c.how === 'measured' && c.seconds > 0));
  file.source.close?.();
});

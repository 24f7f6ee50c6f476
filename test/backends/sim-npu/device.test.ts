// The sim-npu device's own plumbing, on a test double of the runtime whose engines run the reference
// kernels: with every layer group on the device (engines bound to device buffers, KV cache in device
// memory) the logits must equal the reference device's bit for bit, prompt and decode; budgets,
// unsupported ops and missing engines give typed DeviceErrors. End-to-end runs on the real mock
// runtime and encoder are in test/backends/sim-npu/parity.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceError, tensorBytes, type CompileRequest, type Device, type NodeGroup, type Placement } from '../../../src/backends/backend.js';
import { referenceDevice } from '../../../src/backends/reference/device.js';
import { createSimNpuDevice, type SimNpuDevice } from '../../../src/backends/sim-npu/device.js';
import { callCost, groupWork, NPU_TARGETS } from '../../../src/backends/sim-npu/cost-model.js';
import { openGguf } from '../../../src/gguf/open.js';
import type { Graph, Op } from '../../../src/graph/graph.js';
import { buildTransformer } from '../../../src/models/transformer.js';
import { loadModel, type Model } from '../../../src/runtime/model.js';
import { rowBytes } from '../../../src/gguf/ggml-types.js';
import { fixture } from '../../helpers/fixtures.js';
import { createFakeRuntime, fakeEncode } from './fake-runtime.js';

const N_CTX = 32;
const ref = referenceDevice();

function simNpu(capacity = 256 << 20, disabledOps?: Op[]): SimNpuDevice {
  return createSimNpuDevice({ runtime: createFakeRuntime(capacity), encode: (req) => fakeEncode(req), disabledOps });
}

/** KV cache leaves of every layer on `dev`. */
function kvCache(model: Model, dev: Device) {
  const state = new Map<string, { device: Device; placement: Placement }>();
  const hp = model.hp;
  for (let il = 0; il < hp.nLayer; il++) {
    for (const [kind, width] of [['k', hp.nHeadKv * hp.headDimK], ['v', hp.nHeadKv * hp.headDimV]] as const) {
      const nBytes = width * N_CTX * 2;
      const buffer = dev.bufferType().allocate(nBytes, 'state');
      buffer.clear();
      state.set(`cache_${kind}_l${il}`, { device: dev, placement: { buffer, offset: 0, nBytes } });
    }
  }
  return state;
}

/** The load-time compile request of one group: weight bytes and GGUF types as stored in the file (host placements). */
function request(model: Model, g: Graph, group: NodeGroup): CompileRequest {
  return {
    graph: g, group, nTokens: g.nTokens,
    weightBytes: (id) => { const p = model.placements.get(g.tensors[id]!.name)!.placement; return p.buffer.hostView!(p.offset, p.nBytes); },
    weightType: (id) => model.file.tensorsByName.get(g.tensors[id]!.name)!.type,
  };
}

/**
 * Evaluates tokens at positions pos0.. and returns the last row's logits: every node on the reference
 * device, or, with `npu`, the layer groups as engines on it (compiled here, as the scheduler does at
 * load) and the rest on the reference device, copying tensors across where a run reads what the other
 * device wrote. A small stand-alone scheduler, so these tests depend only on the device contract.
 */
async function evalTokens(model: Model, state: Map<string, { device: Device; placement: Placement }>, tokens: number[], pos0: number, npu?: SimNpuDevice): Promise<Float32Array> {
  const g: Graph = buildTransformer(model.spec, model.hp, model.weights, { nTokens: tokens.length, nOutputs: 1, nCtx: N_CTX, kvType: 'f16' });
  const weightPlace = (id: number) => model.placements.get(g.tensors[id]!.name)!.placement;
  if (npu) {
    for (const group of npu.claimGroups!(g)) {
      npu.compileGroup!(request(model, g, group));
    }
  }
  const onNpu = (id: number) => !!npu && npu.supportsOp(g.tensors[id]!, g);
  // every activation has a copy on each device; `where` tracks which one is current
  const copies = new Map<number, Map<Device, Placement>>();
  const where = new Map<number, Device>();
  const devices: Device[] = npu ? [ref, npu] : [ref];
  for (const t of g.tensors) {
    if (t.role === 'weight' || t.role === 'state' || t.op === 'kv_store') continue;
    const nBytes = tensorBytes(t, rowBytes), m = new Map<Device, Placement>();
    for (const d of devices) m.set(d, { buffer: d.bufferType().allocate(nBytes, 'compute'), offset: 0, nBytes });
    copies.set(t.id, m);
  }
  const setInput = (id: number, v: Int32Array) => { copies.get(id)!.get(ref)!.buffer.set(0, new Uint8Array(v.buffer)); where.set(id, ref); };
  setInput(g.inputs.tokens, Int32Array.from(tokens));
  setInput(g.inputs.positions, Int32Array.from(tokens, (_, i) => pos0 + i));
  setInput(g.inputs.outputRows, Int32Array.of(tokens.length - 1));
  const placement = (d: Device) => (id: number): Placement => {
    const t = g.tensors[id]!;
    if (t.role === 'weight') return weightPlace(id);
    if (t.role === 'state') return state.get(t.name)!.placement;
    return copies.get(id)?.get(d) ?? { buffer: d.bufferType().allocate(4, 'compute'), offset: 0, nBytes: 0 };
  };
  const runs: { d: Device; nodes: number[] }[] = [];
  for (const id of g.nodes) {
    const d = onNpu(id) ? npu! : ref;
    const last = runs[runs.length - 1];
    if (last && last.d === d) last.nodes.push(id); else runs.push({ d, nodes: [id] });
  }
  for (const run of runs) {
    for (const id of run.nodes) for (const s of g.tensors[id]!.src) {
      const from = where.get(s);
      if (from && from !== run.d) { const c = copies.get(s)!; c.get(from)!.buffer.copyTo(c.get(run.d)!.buffer, 0, 0, c.get(from)!.nBytes); where.set(s, run.d); }
    }
    await run.d.createBackend().compute({ graph: g, placement: placement(run.d) }, run.nodes);
    for (const id of run.nodes) where.set(id, run.d);
  }
  const out = copies.get(g.output)!.get(where.get(g.output)!)!;
  const logits = new Float32Array(model.hp.nVocab);
  out.buffer.get(0, logits.byteLength, new Uint8Array(logits.buffer));
  for (const m of copies.values()) for (const p of m.values()) p.buffer.free();
  return logits;
}

const prompt = [1, 403, 407, 261, 378, 432, 383, 286];

for (const name of ['qwen3-q8_0', 'gemma2-q4_0']) {
  test(`${name}: every layer group on sim-npu (test runtime) equals the reference bit for bit, prompt and decode`, async () => {
    const file = openGguf(fixture(`parity/${name}.gguf`));
    const model = loadModel(file, { device: ref });
    const refState = kvCache(model, ref);
    const npu = simNpu();
    const npuState = kvCache(model, npu);
    const a1 = await evalTokens(model, refState, prompt, 0);
    const b1 = await evalTokens(model, npuState, prompt, 0, npu);
    assert.deepEqual(Array.from(b1), Array.from(a1));
    const a2 = await evalTokens(model, refState, [300], prompt.length);
    const b2 = await evalTokens(model, npuState, [300], prompt.length, npu);
    assert.deepEqual(Array.from(b2), Array.from(a2));
    // every layer and the output ran as engines: nLayer + 1 calls per evaluation
    const s = npu.stats();
    assert.equal(s.engineCalls, 2 * (model.hp.nLayer + 1));
    // the engines hold the layer weights; the embedding table only when the output layer reads it (tied)
    assert.equal(npu.holdsWeight!('blk.0.attn_q.weight'), true);
    assert.equal(npu.holdsWeight!('token_embd.weight'), !model.weights.has('output.weight'));
    // simulated time: the engines' cost-model seconds, plus one crossing per compute, plus the copies' link time
    assert.ok(s.engineSeconds > 0 && s.seconds >= s.engineSeconds + s.transferSeconds - 1e-12, JSON.stringify(s));
    assert.ok(s.bytesToDevice > 0 && s.bytesFromDevice > 0);
    await npu.close();
    file.source.close?.();
  });
}

test('claims whole layer groups; the op table answers per node; describe() lists ops, types and shapes', () => {
  const file = openGguf(fixture('parity/qwen3-q8_0.gguf'));
  const model = loadModel(file, { device: ref });
  const g = buildTransformer(model.spec, model.hp, model.weights, { nTokens: 4, nOutputs: 1, nCtx: N_CTX, kvType: 'f16' });
  const npu = simNpu();
  const groups = npu.claimGroups!(g);
  assert.deepEqual(groups.map((x) => x.name), [...Array.from({ length: model.hp.nLayer }, (_, i) => `blk.${i}`), 'output']);
  for (const gr of groups) for (const id of gr.nodes) assert.ok(npu.supportsOp(g.tensors[id]!, g), `${gr.name}: ${g.tensors[id]!.op}`);
  // the embedding lookup stays on the host
  const embd = g.nodes.find((id) => g.tensors[id]!.group === 'input' && g.tensors[id]!.op === 'get_rows')!;
  assert.equal(npu.supportsOp(g.tensors[embd]!, g), false);
  const d = npu.describe!();
  assert.ok(d.ops.includes('mul_mat') && d.ops.includes('attention'));
  assert.deepEqual(d.weightTypes.slice(0, 2), ['Q8_0', 'Q4_0']);
  assert.ok(d.weightTypes.includes('Q4_K') && d.weightTypes.includes('F16'), d.weightTypes.join());
  assert.deepEqual(d.staticShapes, [1, 128]);
  file.source.close?.();
});

test('a disabled op makes its groups fail to compile (COMPILE_FAILED: the scheduler falls back)', () => {
  const file = openGguf(fixture('parity/qwen3-q8_0.gguf'));
  const model = loadModel(file, { device: ref });
  const g = buildTransformer(model.spec, model.hp, model.weights, { nTokens: 4, nOutputs: 1, nCtx: N_CTX, kvType: 'f16' });
  const npu = simNpu(256 << 20, ['rope']);
  const rope = g.nodes.find((id) => g.tensors[id]!.op === 'rope')!;
  assert.equal(npu.supportsOp(g.tensors[rope]!, g), false);
  const blk0 = npu.claimGroups!(g)[0]!;
  assert.throws(() => npu.compileGroup!(request(model, g, blk0)),
    (e: unknown) => e instanceof DeviceError && e.code === 'COMPILE_FAILED' && /rope/.test(e.message));
  file.source.close?.();
});

test('memory: reservations, buffers and engines over capacity are OVER_BUDGET DeviceErrors naming --npu-mem', () => {
  const npu = simNpu(1 << 20);
  assert.equal(npu.memory().total, 1 << 20);
  assert.throws(() => npu.reserve!({ weights: 1 << 20, kv: 1, scratch: 0 }), (e: unknown) => e instanceof DeviceError && e.code === 'OVER_BUDGET' && /--npu-mem/.test(e.message));
  // the last reservation is the one in force (the scheduler retries with fewer groups)
  npu.reserve!({ weights: 512 << 10, kv: 0, scratch: 0 });
  npu.reserve!({ weights: 600 << 10, kv: 100 << 10, scratch: 300 << 10 });
  assert.throws(() => npu.bufferType().allocate(2 << 20, 'compute'), (e: unknown) => e instanceof DeviceError && e.code === 'OVER_BUDGET' && /--npu-mem/.test(e.message));
  // buffers are in device memory: bytes round-trip through memcpy, and free() returns them
  const b = npu.bufferType().allocate(256 << 10, 'compute');
  assert.equal(b.hostView, undefined);
  assert.equal(npu.memory().free, (1 << 20) - (256 << 10));
  b.set(100, Uint8Array.of(1, 2, 3));
  assert.deepEqual(Array.from(b.get(99, 5)), [0, 1, 2, 3, 0]);
  const c = npu.bufferType().allocate(16, 'compute');
  b.copyTo(c, 100, 4, 3);
  assert.deepEqual(Array.from(c.get(0, 8)), [0, 0, 0, 0, 1, 2, 3, 0]);
  b.free(); c.free();
  assert.equal(npu.memory().free, 1 << 20);
});

test('an engine that does not fit is OVER_BUDGET at compile; a group never compiled is refused at compute', async () => {
  const file = openGguf(fixture('parity/qwen3-q8_0.gguf'));
  const model = loadModel(file, { device: ref });
  const g = buildTransformer(model.spec, model.hp, model.weights, { nTokens: 1, nOutputs: 1, nCtx: N_CTX, kvType: 'f16' });
  const npu = simNpu(4 << 10);
  const blk0 = npu.claimGroups!(g)[0]!;
  assert.throws(() => npu.compileGroup!(request(model, g, blk0)), (e: unknown) => e instanceof DeviceError && e.code === 'OVER_BUDGET');
  assert.throws(() => npu.createBackend().compute({ graph: g, placement: () => { throw new Error('unreachable'); } }, blk0.nodes),
    (e: unknown) => e instanceof DeviceError && e.code === 'UNSUPPORTED' && /compiled at load/.test(e.message));
  file.source.close?.();
});

test('estimateSeconds is the cost model of the groups (deterministic, shape-only)', () => {
  const file = openGguf(fixture('parity/qwen3-q8_0.gguf'));
  const model = loadModel(file, { device: ref });
  const g = buildTransformer(model.spec, model.hp, model.weights, { nTokens: 128, nOutputs: 1, nCtx: 256, kvType: 'f16' });
  const npu = simNpu();
  const groups = npu.claimGroups!(g);
  const t = NPU_TARGETS.ax8850!;
  const expect = groups.reduce((s, gr) => s + callCost(t, groupWork(g, gr.nodes)).seconds, 0) + t.crossingS;
  assert.equal(npu.estimateSeconds(g, groups.flatMap((x) => x.nodes)), expect);
  assert.ok(expect >= groups.length * t.callS);
  file.source.close?.();
});

test('compiled engines are cached on disk by sha256: a second load skips the encoder and computes the same', async () => {
  const { mkdtempSync, rmSync, readdirSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { diskEngineCache } = await import('../../../src/backends/sim-npu/disk-cache.js');
  const dir = mkdtempSync(join(tmpdir(), 'sim-npu-cache-'));
  try {
    const file = openGguf(fixture('parity/qwen3-q8_0.gguf'));
    const model = loadModel(file, { device: ref });
    const runs: Float32Array[] = [];
    const encodes: number[] = [];
    for (let round = 0; round < 2; round++) {
      let n = 0;
      const cache = diskEngineCache(dir);
      const npu = createSimNpuDevice({ runtime: createFakeRuntime(256 << 20), encode: (req) => { n++; return fakeEncode(req); }, cache });
      const state = kvCache(model, npu);
      runs.push(await evalTokens(model, state, prompt, 0, npu));
      encodes.push(n);
      if (round === 1) assert.equal(cache.hits, model.hp.nLayer + 1);
      await npu.close();
    }
    assert.deepEqual(encodes, [model.hp.nLayer + 1, 0]);
    assert.deepEqual(Array.from(runs[1]!), Array.from(runs[0]!));
    assert.equal(readdirSync(dir).filter((f) => f.endsWith('.engine')).length, model.hp.nLayer + 1);
    file.source.close?.();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Hostile blobs: seeded mutations of a real engine's header bytes and program fields end in a typed error
// (EngineFormatError at parse, NpuRuntimeError from the mock) or a clean run, never another exception.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createMockNpuRuntime } from '../../../src/backends/npu/mock-runtime.js';
import { NpuRuntimeError } from '../../../src/backends/npu/runtime-api.js';
import { createEngineBlob, parseEngine, EngineFormatError, type EngineProgram } from '../../../src/backends/npu/engine-format.js';
import { referenceGroupRuns } from './group-harness.js';
import { rng } from '../../re/prng.js';

const rtP = createMockNpuRuntime({ threads: 1, capacityBytes: 64 << 20 });
after(async () => (await rtP).close());

test('3,000 mutated blobs: typed errors or clean runs', async () => {
  const rt = await rtP;
  const { runs } = referenceGroupRuns('qwen3-q8_0', 4, 1, 'ax8850', 16);
  const base = runs.find((r) => r.group === 'blk.1')!.engine.blob;
  const parsed = parseEngine(base);
  const r = rng(77);
  const ctx = rt.createContext(0);
  let loaded = 0, ran = 0;
  const wild = () => r.pick([0, -1, 1, 2, 3, 7, 31, 32, 64, 255, 256, 1023, 2 ** 31, 2 ** 32 + 5, 1e9, 0.5, NaN]);
  for (let i = 0; i < 3000; i++) {
    let blob: Uint8Array;
    if (i % 3 === 0) {
      blob = base.slice();
      const k = r.int(1, 4);
      for (let j = 0; j < k; j++) blob[r.int(0, Math.min(blob.length - 1, 31 + r.int(0, 64)))] = r.int(0, 255);
    } else {
      const p: EngineProgram = JSON.parse(JSON.stringify(parsed.program));
      const k = r.int(1, 3);
      for (let j = 0; j < k; j++) {
        const what = r.int(0, 5);
        if (what === 0) { const t = r.pick(p.tensors); t.shape[r.int(0, t.shape.length - 1)] = wild(); }
        else if (what === 1) { const t = r.pick(p.tensors); const f = r.pick(['planes', 'scales', 'data'] as const); if (t[f]) t[f]![r.bool() ? 'offset' : 'bytes'] = wild(); else t.scratch = wild(); }
        else if (what === 2) { const o = r.pick(p.ops); o.src[r.int(0, o.src.length - 1)] = wild(); }
        else if (what === 3) { const o = r.pick(p.ops); const keys = Object.keys(o.params); if (keys.length) o.params[r.pick(keys)] = wild(); else o.out = wild(); }
        else if (what === 4) { const io = r.pick([...p.inputs, ...p.outputs]); io[r.pick(['tensor', 'bytes'] as const)] = wild(); }
        else p.scratchBytes = wild();
      }
      const { blob: b, data } = createEngineBlob({ target: 'ax8850', nTokens: parsed.header.nTokens, name: parsed.header.name }, p, parsed.data.length);
      data.set(parsed.data);
      blob = b;
    }
    let h: number;
    try {
      h = ctx.loadEngine(blob);
    } catch (e) {
      assert.ok(e instanceof NpuRuntimeError && (e.code === 'BAD_ENGINE' || e.code === 'OUT_OF_DEVICE_MEMORY'), `mutation ${i}: ${(e as Error).stack}`);
      continue;
    }
    loaded++;
    const info = ctx.engineInfo(h);
    const ptrs: number[] = [];
    try {
      const ins = info.inputs.map((io) => { const p = ctx.malloc(io.bytes); ptrs.push(p); ctx.memset(p, 0, io.bytes); return p; });
      const outs = info.outputs.map((io) => { const p = ctx.malloc(io.bytes); ptrs.push(p); return p; });
      ctx.execute(h, ins, outs);
      ran++;
    } catch (e) {
      // only data-dependent checks may stop a validated engine: a kernel failure means validation missed a case
      assert.ok(e instanceof NpuRuntimeError && e.code === 'BAD_IO', `mutation ${i}: ${(e as Error).stack}`);
    } finally {
      for (const p of ptrs) ctx.free(p);
      ctx.unloadEngine(h);
    }
  }
  ctx.destroy();
  assert.ok(loaded > 50 && ran > 50, `loaded ${loaded}, ran ${ran}: the mutations should leave many blobs valid`);
  assert.throws(() => parseEngine(base.subarray(0, base.length - 1)), EngineFormatError);
});

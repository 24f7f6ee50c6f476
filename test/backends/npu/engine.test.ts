// Engines compiled from parity fixtures, run through the mock runtime, against the reference backend's
// nodes: every group of the model (embedding lookup, each transformer layer with its KV cache in/out,
// the output head), prefill and decode shapes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createMockNpuRuntime } from '../../../src/backends/npu/mock-runtime.js';
import { parseEngine } from '../../../src/backends/npu/engine-format.js';
import { referenceGroupRuns } from './group-harness.js';
import { f16ToF32 } from '../../../src/quant/index.js';

const rtP = createMockNpuRuntime({ threads: 1, numerics: 'exact' });
after(async () => (await rtP).close());

function f32Of(b: Uint8Array, dtype: string): Float32Array | null {
  const c = b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
  if (dtype === 'f32') return new Float32Array(c);
  if (dtype === 'f16') return Float32Array.from(new Uint16Array(c), f16ToF32);
  return null;
}

/** Runs every group's engine on the mock; returns the largest output error relative to the output's max |value|. */
async function runGroups(name: string, nTokens: number, nOutputs: number): Promise<{ group: string; rel: number; bitExact: boolean }[]> {
  const rt = await rtP;
  const { runs } = referenceGroupRuns(name, nTokens, nOutputs);
  const ctx = rt.createContext(0);
  const res: { group: string; rel: number; bitExact: boolean }[] = [];
  try {
    for (const run of runs) {
      const h = ctx.loadEngine(run.engine.blob);
      const info = ctx.engineInfo(h);
      assert.equal(info.inputs.length, run.engine.inputIds.length);
      assert.equal(info.outputs.length, run.engine.outputIds.length);
      const ins = info.inputs.map((io, i) => { const p = ctx.malloc(io.bytes); ctx.memcpyHostToDevice(p, run.inputs[i]!); return p; });
      // in/out (the KV cache) bound to the same device buffer: updated in place
      const outs = info.outputs.map((io, j) => {
        const k = run.engine.inputIds.indexOf(run.engine.outputIds[j]!);
        return k >= 0 ? ins[k]! : ctx.malloc(io.bytes);
      });
      ctx.execute(h, ins, outs);
      let rel = 0, bitExact = true;
      info.outputs.forEach((io, j) => {
        const got = new Uint8Array(io.bytes);
        ctx.memcpyDeviceToHost(got, outs[j]!);
        const want = run.outputs[j]!;
        if (!Buffer.from(got).equals(Buffer.from(want))) bitExact = false;
        const a = f32Of(got, io.dtype), b = f32Of(want, io.dtype);
        if (a && b) {
          let maxAbs = 0, maxErr = 0;
          for (let i = 0; i < a.length; i++) { maxAbs = Math.max(maxAbs, Math.abs(b[i]!)); maxErr = Math.max(maxErr, Math.abs(a[i]! - b[i]!)); }
          assert.ok(Number.isFinite(maxErr), `${run.group} ${io.name}: non-finite output`);
          rel = Math.max(rel, maxErr / (maxAbs || 1));
        } else assert.ok(bitExact, `${run.group} ${io.name}: ${io.dtype} output differs`);
      });
      res.push({ group: run.group, rel, bitExact });
      ctx.unloadEngine(h);
    }
  } finally {
    ctx.destroy();
  }
  return res;
}

for (const name of ['qwen3-q8_0', 'llama-q4_0', 'gemma2-q8_0']) {
  test(`engines of ${name} (every group, prefill 8 tokens and decode) match the reference nodes`, async () => {
    for (const [nTok, nOut] of [[8, 1], [1, 1]] as const) {
      const res = await runGroups(name, nTok, nOut);
      assert.ok(res.some((r) => r.group === 'blk.0') && res.some((r) => r.group === 'output'));
      for (const r of res) {
        // Q8_0: the mock's exact-numerics kernels equal the reference (llama.cpp's order) bit for bit;
        // Q4_0: the same integers summed as Q8_0 blocks differ from Q4_0's float order by rounding only
        if (name.endsWith('q8_0')) assert.ok(r.bitExact, `${name} n=${nTok} ${r.group}: not bit-exact (relative error ${r.rel})`);
        assert.ok(r.rel < 2e-6, `${name} n=${nTok} ${r.group}: relative error ${r.rel}`);
      }
      console.log(name, nTok, res.map((r) => `${r.group}:${r.bitExact ? 'bit-exact' : r.rel.toExponential(2)}`).join(' '));
    }
  });
}

test('requantized types (q4_k, f16) run within the int8 error and report it', async () => {
  const res = await runGroups('qwen3-q4_k', 8, 1);
  for (const r of res) assert.ok(r.rel < 0.05, `${r.group}: ${r.rel}`);
  const { runs } = referenceGroupRuns('qwen3-q4_k', 1, 1);
  const blk = runs.find((r) => r.group === 'blk.0')!;
  assert.ok(blk.engine.report.tensors.length >= 7);
  for (const t of blk.engine.report.tensors) {
    if (t.sourceType === 'Q8_0' || t.sourceType === 'Q4_0') assert.deepEqual([t.exact, t.maxAbsErr, t.relErr], [true, 0, 0]);
    else assert.ok(!t.exact && t.maxAbsErr > 0 && t.relErr > 0 && t.relErr < 0.02, JSON.stringify(t));
  }
  const parsed = parseEngine(blk.engine.blob);
  assert.equal(parsed.header.name, 'blk.0');
  assert.equal(parsed.header.nTokens, 1);
});

test('the encoder reads weights with CompileRequest.weightType when the graph carries a host layout id', async () => {
  const { openGguf } = await import('../../../src/gguf/open.js');
  const { fixture } = await import('../../helpers/fixtures.js');
  const { modelGraphs, graphGroups } = await import('../../../src/backends/npu/compile-model.js');
  const { encodeGroupEngine } = await import('../../../src/backends/npu/encoder.js');
  const mg = modelGraphs(openGguf(fixture('parity/qwen3-q8_0.gguf')), 64);
  const g = mg.graph(1, 1);
  const group = graphGroups(g).find((x) => x.name === 'blk.0')!;
  const plain = encodeGroupEngine({ graph: g, group, nTokens: 1, weightBytes: (id) => mg.weightBytes(g, id) }, 'ax8850');
  // as a cpu device that repacked its Q8_0 weights would have them in the graph (CpuLayout.Q8_0r4)
  const fileTypes = new Map(g.tensors.map((t) => [t.id, t.dtype]));
  const repacked = { ...g, tensors: g.tensors.map((t) => (t.role === 'weight' && t.dtype === 8 ? { ...t, dtype: 0x1004 } : t)) };
  const viaType = encodeGroupEngine({ graph: repacked, group, nTokens: 1, weightBytes: (id) => mg.weightBytes(g, id), weightType: (id) => fileTypes.get(id) as number }, 'ax8850');
  assert.deepEqual(viaType.blob, plain.blob);
  assert.ok(viaType.report.tensors.every((t) => t.sourceType === 'Q8_0' && t.exact));
});

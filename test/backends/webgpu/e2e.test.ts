// The webgpu device end to end on the parity fixtures (lavapipe: correctness, not speed, so small here):
// - every op of a token on webgpu (one split: one command buffer), forced with the cpu device's greedy
//   tokens: top-1 agreement >= 99% of steps and the cpu's top-10 probabilities within 0.02;
// - prefill on webgpu, decode on the cpu device (--prefill-device webgpu --decode-device cpu): llama.cpp's
//   tokens and probabilities under the parity rule (test/helpers/parity.ts runParity), as the cpu alone.
// npm test runs a subset; GGUF_EDGE_WEBGPU_FULL=1 runs all 6 dense architectures x f32, f16, q8_0, q4_0,
// q4_k_m with 3 prompts x 32 steps (NOTES.md has the figures: 24 of 30 bit-identical with the exact cpu);
// GGUF_EDGE_WEBGPU_ONLY=a,b picks fixtures for both groups.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { openGguf } from '../../../src/gguf/open.js';
import { Context } from '../../../src/runtime/context.js';
import { loadModel } from '../../../src/runtime/model.js';
import { fixture } from '../../helpers/fixtures.js';
import { MARGIN, PARITY_ARCHS, runParity, tolerance } from '../../helpers/parity.js';
import { closeGpus, needGpu } from './adapter.js';
import { forcedAgreement } from './agreement.js';

const cpu = await createCpuDevice({ threads: 2 });
// forced decoding compares against the cpu device in exact numerics (llama.cpp's x86 float orders, as the
// webgpu kernels reproduce them): the fast cpu kernels sum in another order, and that order alone moved
// gemma3-q8_0's top-1 to 97.9% (the 8-bit activations amplify last-bit differences)
const exact = await createCpuDevice({ threads: 2, numerics: 'exact' });
after(async () => { await closeGpus(); await cpu.close(); await exact.close(); });
const FULL = process.env.GGUF_EDGE_WEBGPU_FULL === '1';
const TYPES = ['f32', 'f16', 'q8_0', 'q4_0', 'q4_k_m'];
const all = PARITY_ARCHS.flatMap((a) => TYPES.map((t) => `${a}-${t}`));

// npm test: the f16 of every architecture and three quantized fixtures, one prompt, 8 steps
const only = process.env.GGUF_EDGE_WEBGPU_ONLY?.split(',');
const forced = only ?? (FULL ? all : [...PARITY_ARCHS.map((a) => `${a}-f16`), 'llama-q4_0', 'gemma2-q8_0', 'qwen3-q4_k_m']);
const [seqs, steps] = FULL ? [3, 32] : [1, 8];
for (const name of forced) {
  test(`forced decoding ${name}: webgpu top-1 and top-10 probabilities vs the cpu device`, async (t) => {
    const gpu = await needGpu(t);
    if (!gpu) return;
    const r = await forcedAgreement(name, exact, { devices: [gpu, exact] }, seqs, steps);
    console.log(`# ${name}: ${r.steps} steps, top-1 ${(100 * r.top1Agree).toFixed(1)}%, max top-10 prob err ${r.maxTop10Err.toExponential(2)} (${r.worst})`);
    assert.deepEqual(r.decodeSplits, ['webgpu'], 'a decode token is one split on webgpu');
    assert.ok(r.top1Agree >= 0.99, `${name}: top-1 agreement ${r.top1Agree}`);
    assert.ok(r.maxTop10Err <= 0.02, `${name}: ${r.worst}`);
  });
}

const phased = only ?? (FULL ? all : ['llama-q4_0', 'qwen2-f32', 'qwen3-q8_0', 'gemma2-f16', 'gemma3-q8_0', 'phi3-q4_k_m']);
for (const name of phased) {
  test(`parity ${name}: prefill on webgpu, decode on cpu`, async (t) => {
    const gpu = await needGpu(t);
    if (!gpu) return;
    const opts = { devices: [gpu, cpu], prefillDevice: gpu, decodeDevice: cpu };
    const type = name.slice(name.indexOf('-') + 1);
    const r = await runParity(name, cpu, tolerance(type), MARGIN, 'f16', opts);
    console.log(`# ${name}: ${r.compared} steps compared, max prob err ${r.maxProbErr.toExponential(2)}`);
    assert.ok(r.compared > 0, `${name}: no step compared`);
    assert.deepEqual(r.failures, [], `${name}: ${r.failures.slice(0, 5).join('; ')}`);
    // the plans: a prompt batch on webgpu, a decode token on the cpu
    const model = loadModel(openGguf(fixture(`parity/${name}.gguf`)), { device: cpu });
    const ctx = await Context.create(model, { nCtx: 64, ...opts });
    try {
      assert.deepEqual(ctx.describePlan(8).map((s) => s.device), ['webgpu']);
      assert.deepEqual(ctx.describePlan(1).map((s) => s.device), ['cpu']);
      assert.deepEqual(ctx.kvDevices(), { primary: 'cpu', copies: ['cpu', 'webgpu'] });
    } finally { ctx.close(); model.file.source.close?.(); }
  });
}

test('KV hand-over both ways (prompt on webgpu, decode on cpu, another prompt chunk, truncate) matches the cpu alone', async (t) => {
  const gpu = await needGpu(t);
  if (!gpu) return;
  const model = loadModel(openGguf(fixture('parity/llama-f32.gguf')), { device: cpu });
  const ref = await Context.create(model, { nCtx: 64 });
  const phased = await Context.create(model, { nCtx: 64, devices: [gpu, cpu], prefillDevice: gpu, decodeDevice: cpu });
  const all = await Context.create(model, { nCtx: 64, devices: [gpu, cpu] });
  const nmse = (a: Float32Array, b: Float32Array) => { let e = 0, r = 0; for (let i = 0; i < a.length; i++) { e += (a[i]! - b[i]!) ** 2; r += b[i]! ** 2; } return e / r; };
  try {
    // the second prompt chunk needs the rows decoded on the cpu since the first (copied to webgpu first)
    for (const batch of [[1, 50, 60, 70, 80, 90], [5], [6], [7, 8, 9, 10, 11], [12], 'truncate', [20, 21, 22], [23]] as const) {
      if (batch === 'truncate') { for (const c of [ref, phased, all]) c.truncate(3); continue; }
      const want = (await ref.decode(batch)).slice();
      for (const [what, c] of [['prefill webgpu / decode cpu', phased], ['all webgpu', all]] as const) {
        const e = nmse(await c.decode(batch), want);
        assert.ok(e < 1e-7, `${what}, batch [${batch}]: logits nmse ${e} against the cpu`);
      }
    }
    assert.deepEqual(phased.kvDevices(), { primary: 'cpu', copies: ['cpu', 'webgpu'] });
    assert.deepEqual(all.kvDevices(), { primary: 'webgpu', copies: ['webgpu'] });
  } finally { ref.close(); phased.close(); all.close(); model.file.source.close?.(); }
});

test('forced decoding over GLES (no f16, no subgroups): gemma2-f16 vs the cpu device', async (t) => {
  const gpu = await needGpu(t, 'opengles');
  if (!gpu) return;
  const r = await forcedAgreement('gemma2-f16', exact, { devices: [gpu, exact] }, 1, 8);
  console.log(`# gemma2-f16 over GLES: top-1 ${(100 * r.top1Agree).toFixed(1)}%, max top-10 prob err ${r.maxTop10Err.toExponential(2)}`);
  assert.deepEqual(r.decodeSplits, ['webgpu']);
  assert.ok(r.top1Agree >= 0.99 && r.maxTop10Err <= 0.02, r.worst);
});

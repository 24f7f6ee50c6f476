// The device conformance suite's small form (test/backends/conformance/suite.ts; `npm run test:backend-ops
// -- --device webgpu` runs the full one) on the webgpu device against the reference device, held to
// llama.cpp's NMSE limits: Dawn over Mesa's lavapipe (Vulkan: shader-f16 and subgroups present, unused) and
// over llvmpipe GLES (compatibility: neither), plus big matrices bound in row chunks.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { referenceDevice } from '../../../src/backends/reference/device.js';
import { createWebGpuDevice } from '../../../src/backends/webgpu/index.js';
import { buildCases, runConformance } from '../conformance/suite.js';
import { closeGpus, needGpu } from './adapter.js';

after(closeGpus);
const ref = referenceDevice();
// what the six dense architectures' graphs need, all claimed on both adapters
const DENSE_OPS = ['mul_mat', 'get_rows', 'add', 'mul', 'scale', 'rms_norm', 'rope', 'swiglu', 'geglu', 'softcap', 'view_cols', 'kv_store', 'attention'];

for (const backend of ['vulkan', 'opengles'] as const) {
  test(`backend-ops (small) on webgpu over ${backend}`, async (t) => {
    const d = await needGpu(t, backend);
    if (!d) return;
    const entries = await runConformance(d, ref, buildCases({ size: 'small' }));
    const ops = new Set(entries.map((e) => e.op));
    for (const op of DENSE_OPS) assert.ok(ops.has(op), `${op} not claimed`);
    for (const ty of ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q6_K']) assert.ok(entries.some((e) => e.op === 'mul_mat' && e.types[0] === ty), `mul_mat ${ty} not claimed`);
    const failed = entries.filter((e) => !e.pass).map((e) => `${e.op} [${e.types}] ${e.shape}: nmse ${e.nmse} > ${e.threshold}`);
    assert.deepEqual(failed, []);
    const worst = (op: string) => Math.max(...entries.filter((e) => e.op === op).map((e) => e.nmse ?? Infinity));
    console.log(`# webgpu ${backend} (${d.description}): ${entries.length} cases, worst nmse mul_mat ${worst('mul_mat').toExponential(2)}, attention ${worst('attention').toExponential(2)}`);
  });
}

test('weights wider than the binding limit run in row chunks (limit lowered to 1 KiB)', async (t) => {
  if (!(await needGpu(t))) return;
  const d = await createWebGpuDevice({ backend: 'vulkan', maxBindingBytes: 1024 });
  try {
    // the small suite's weight ops whose weights exceed 1 KiB (activations still fit one binding)
    const cases = buildCases({ size: 'small' }).filter((c) => c.op === 'mul_mat' || c.op === 'get_rows');
    const entries = await runConformance(d, ref, cases);
    // (Q6_K's 210-byte rows cannot start a 1 KiB chunk at a 16-byte aligned offset: unclaimed, not wrong)
    for (const ty of ['F32', 'F16', 'Q8_0', 'Q4_0', 'Q4_K']) assert.ok(entries.some((e) => e.op === 'mul_mat' && e.types[0] === ty), `mul_mat ${ty} not claimed in chunks`);
    assert.deepEqual(entries.filter((e) => !e.pass).map((e) => `${e.op} [${e.types}] ${e.shape}: ${e.nmse}`), []);
  } finally { await d.close(); }
});

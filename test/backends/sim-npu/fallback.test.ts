// Whole-group fallback from sim-npu to the cpu device: an op the NPU lacks in the middle of every layer
// sends each layer group (whole) to the cpu while the output group stays on the NPU; a model larger
// than --npu-mem falls back partly or entirely at load. Either way the tokens are llama.cpp's (the
// parity rule and tolerances of the cpu device), never a crash or wrong tokens.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { createSimNpu } from '../../../src/backends/sim-npu/index.js';
import type { SimNpuDevice } from '../../../src/backends/sim-npu/device.js';
import { openGguf } from '../../../src/gguf/open.js';
import { loadModel } from '../../../src/runtime/model.js';
import { Context } from '../../../src/runtime/context.js';
import { fixture } from '../../helpers/fixtures.js';
import { MARGIN, runParity, tolerance, type RefFile } from '../../helpers/parity.js';

const cpu = await createCpuDevice({ threads: 2 });
const opened: SimNpuDevice[] = [];
after(async () => { for (const d of opened) await d.close(); await cpu.close(); });
const NAME = 'qwen3-q8_0';
const nSeq = (JSON.parse(readFileSync(fixture(`parity/${NAME}.ref.json`), 'utf8')) as RefFile).sequences.length;

async function parityWith(npu: SimNpuDevice) {
  const before = npu.stats().engineCalls;
  const r = await runParity(NAME, cpu, tolerance('q8_0'), MARGIN, 'f16', { devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
  assert.ok(r.compared > 0);
  assert.deepEqual(r.failures, [], r.failures.slice(0, 3).join('; '));
  return npu.stats().engineCalls - before;
}

/** The fallback notes of a context made like runParity's (prefill on npu, decode on cpu). */
async function fallbacks(npu: SimNpuDevice): Promise<string[]> {
  const file = openGguf(fixture(`parity/${NAME}.gguf`));
  try {
    const ctx = await Context.create(loadModel(file, { device: cpu }), { nCtx: 256, devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
    const f = [...ctx.sched.fallbacks];
    ctx.close();
    return f;
  } finally {
    file.source.close?.();
  }
}

test('an op the NPU lacks inside every layer (swiglu): each layer group runs whole on the cpu, the output on sim-npu, same tokens', async () => {
  const npu = await createSimNpu({ threads: 1, disabledOps: ['swiglu'] });
  opened.push(npu);
  const notes = await fallbacks(npu);
  assert.ok(notes.some((n) => /^blk\.0 .*sim-npu .*swiglu/.test(n)), notes.join('\n'));
  assert.ok(!notes.some((n) => n.startsWith('output')), notes.join('\n'));
  // per prompt: the output engine only, never a lone op of a layer
  assert.equal(await parityWith(npu), nSeq);
});

test('a model larger than --npu-mem: groups that do not fit fall back at load (partly or wholly), same tokens', async () => {
  // 4 MiB holds some of the 2-layer fixture's engines, KV and scratch but not all; 0.05 MiB none
  const part = await createSimNpu({ threads: 1, npuMemMiB: 4 });
  const none = await createSimNpu({ threads: 1, npuMemMiB: 0.05 });
  opened.push(part, none);
  const notes = await fallbacks(part);
  assert.ok(notes.some((n) => /OVER_BUDGET.*--npu-mem/.test(n)), notes.join('\n'));
  const partCalls = await parityWith(part);
  assert.ok(partCalls > 0 && partCalls < nSeq * 3, `engine calls ${partCalls}`);
  assert.equal(await parityWith(none), 0);
});

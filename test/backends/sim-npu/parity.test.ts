// Prefill on the simulated NPU, decode on the cpu device (`run MODEL --prefill-device sim-npu
// --decode-device cpu`): every Q8_0 and Q4_0 parity fixture of the supported architectures under the
// same rule and tolerances as the cpu device alone (test/parity/cpu.test.ts). Q8_0 and Q4_0 weights
// map to the engines' int8 exactly and the activations are quantized to int8 per 32 as ggml's Q8_0,
// so the NPU's integer dot products are the ones llama.cpp computes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../../src/backends/cpu/device.js';
import { createSimNpu } from '../../../src/backends/sim-npu/index.js';
import { openGguf } from '../../../src/gguf/open.js';
import { readHParams } from '../../../src/models/hparams.js';
import { fixture } from '../../helpers/fixtures.js';
import { MARGIN, PARITY_ARCHS, runParity, tolerance, type RefFile } from '../../helpers/parity.js';
import { readFileSync } from 'node:fs';

const cpu = await createCpuDevice({ threads: 2 });
const npu = await createSimNpu({ threads: 1 });
after(async () => { await npu.close(); await cpu.close(); });

for (const arch of PARITY_ARCHS) {
  for (const type of ['q8_0', 'q4_0']) {
    const name = `${arch}-${type}`;
    test(`parity ${name}: prefill on sim-npu, decode on cpu`, async () => {
      const file = openGguf(fixture(`parity/${name}.gguf`));
      const nLayer = readHParams(file).nLayer;
      file.source.close?.();
      const nSeq = (JSON.parse(readFileSync(fixture(`parity/${name}.ref.json`), 'utf8')) as RefFile).sequences.length;
      const before = npu.stats().engineCalls;
      const r = await runParity(name, cpu, tolerance(type), MARGIN, 'f16', { devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
      assert.ok(r.compared > 0, `${name}: no step compared`);
      assert.deepEqual(r.failures, [], `${name}: ${r.failures.slice(0, 5).join('; ')} (max prob err ${r.maxProbErr.toExponential(2)})`);
      // each prompt (<= 128 tokens: one chunk) ran every layer and the output as engines, once
      assert.equal(npu.stats().engineCalls - before, nSeq * (nLayer + 1), 'every layer group of every prompt ran on sim-npu');
    });
  }
}

// Every parity fixture (6 architectures x 7 weight types) on the reference backend against
// llama.cpp's recorded greedy tokens and top-10 probabilities.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { NOISY_KQUANT, PARITY_ARCHS, PARITY_TYPES, runParity, tolerance, MARGIN } from '../helpers/parity.js';

const device = referenceDevice();
for (const arch of PARITY_ARCHS) {
  for (const type of PARITY_TYPES) {
    const name = `${arch}-${type}`;
    test(`parity ${name} (reference backend)`, async () => {
      const noisy = NOISY_KQUANT.has(name);
      const r = await runParity(name, device, noisy ? 0.05 : tolerance(type), noisy ? 0.03 : MARGIN);
      assert.ok(r.compared > 0, `${name}: no step compared`);
      assert.deepEqual(r.failures, [], `${name}: ${r.failures.slice(0, 5).join('; ')} (max prob err ${r.maxProbErr.toExponential(2)})`);
    });
  }
}

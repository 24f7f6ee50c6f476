// Every parity fixture on the cpu device (WASM SIMD kernels, 2 threads), under the same rule
// and tolerances as the reference backend.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { PARITY_ARCHS, PARITY_TYPES, runParity, tolerance } from '../helpers/parity.js';

const device = await createCpuDevice({ threads: 2 });
after(() => device.close());
for (const arch of PARITY_ARCHS) {
  for (const type of PARITY_TYPES) {
    const name = `${arch}-${type}`;
    test(`parity ${name} (cpu backend)`, async () => {
      const r = await runParity(name, device, tolerance(type));
      assert.ok(r.compared > 0, `${name}: no step compared`);
      assert.deepEqual(r.failures, [], `${name}: ${r.failures.slice(0, 5).join('; ')} (max prob err ${r.maxProbErr.toExponential(2)})`);
    });
  }
}

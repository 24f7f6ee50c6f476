// The cpu device with its default ('fast') numerics against llama.cpp's references on every fixture of every
// supported architecture: every prompt position and every teacher-forced decode step. Free-order Q8_0 and Q4_0
// kernels and the Q4_K GEMV change the last bits, so these types are held to a tolerance a little over the
// measured maximum; F32, F16 and Q6_K (and the Q4_K GEMM, attention) keep llama.cpp's order in fast numerics
// too, and are held to the last bit, as are Q5_K, Q3_K and the Q5_K mix. The weight types whose x86 order is not
// reproduced (GENERIC_TOL: bf16, q4_1, q5_0, q5_1, iq4_*, q2_k and its mix) run the same WASM kernels
// in both numerics, so this file is their parity test. The tolerances are absolute errors in the recorded
// top-10 probabilities.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { fixture } from '../helpers/fixtures.js';
import { CPU_FAST_TOL as FAST_TOL, GENERIC_TOL, ParityStats, distCount, distributions, parityFixtures, readRef } from '../helpers/parity.js';


const device = await createCpuDevice({ threads: 2 });
after(() => device.close());

for (const f of parityFixtures().filter((x) => x.supported)) {
  test(`parity ${f.name} (cpu device, default numerics), every distribution`, async (t) => {
    const tol = FAST_TOL[f.type] ?? GENERIC_TOL[f.type];
    assert.ok(tol !== undefined, `${f.name}: weight type ${f.type} has no measured tolerance`);
    const refs = readRef(f.name);
    const file = openGguf(fixture(`parity/${f.name}.gguf`));
    try {
      const model = loadModel(file, { device });
      // a flip of the argmax needs both probabilities to move by half of llama.cpp's top-1/top-2 margin
      const st = new ParityStats(2 * tol);
      for await (const d of distributions(model, refs)) st.add(f.name, d);
      t.diagnostic(`${f.name}: ${st.summary()} (tolerance ${tol})`);
      assert.equal(st.dists, distCount(refs), 'every recorded distribution compared');
      assert.deepEqual(st.tokenFailures, []);
      if (tol === 0) assert.equal(st.bitEqual, st.values, `${st.values - st.bitEqual} probabilities differ from llama.cpp's (first: ${st.firstDiff})`);
      else assert.ok(st.maxAbsErr <= tol, `max abs err ${st.maxAbsErr.toExponential(2)} > ${tol} (${st.worst})`);
    } finally {
      file.source.close?.();
    }
  });
}

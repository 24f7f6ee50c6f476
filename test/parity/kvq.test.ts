// The quantized KV cache against llama.cpp's q8_0-KV references (../shared/fixtures/parity-kvq8: the parity
// fixtures' prompts and settings with flash attention on and `-ctk q8_0 -ctv q8_0`), with the parity suites' rule:
// every prompt position (all-outputs batch) and every teacher-forced decode step.
// - exact: the reference device and the cpu device with --numerics exact compute the same logits bit for bit, and
//   reproduce llama.cpp's probabilities bit for bit (its q8_0 store, the Hadamard rotation of Q/K/V and of the
//   output for heads of 64k, Q quantized to q8_0, ggml_vec_dot_q8_0_q8_0's x86 order, the f32 V accumulator).
// - fast: the cpu device's default numerics within the flash-attention suite's measured tolerances (CPU_FAST_FA_TOL).
// CI runs KVQ_CI_SUBSET; GGUF_EDGE_PARITY_KVQ=full runs all 18 (npm run test:parity-kvq).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { fixture } from '../helpers/fixtures.js';
import {
  CPU_FAST_FA_TOL, KVQ_CI_SUBSET, ParityStats, distCount, distributions, kvqFull, parityFixtures, readRef, refNames,
  zipDistributions,
} from '../helpers/parity.js';

const cpu = await createCpuDevice({ threads: 2 });
const exact = await createCpuDevice({ threads: 2, numerics: 'exact' });
const ref = referenceDevice();
after(async () => { await cpu.close(); await exact.close(); });
const fa = { flashAttn: 'on' as const };

const names = refNames('parity-kvq8');
const fixtures = parityFixtures().filter((f) => names.includes(f.name));
test('parity-kvq8 has its 18 references, each of a parity fixture the engine supports, and the CI subset is among them', () => {
  assert.equal(names.length, 18);
  assert.equal(fixtures.length, names.length, 'every reference has its GGUF in parity/');
  for (const f of fixtures) assert.ok(f.supported, `${f.name}: architecture ${f.arch} unsupported`);
  for (const n of KVQ_CI_SUBSET) assert.ok(names.includes(n), `${n} has no parity-kvq8 reference`);
});

const selected = fixtures.filter((f) => kvqFull() || KVQ_CI_SUBSET.includes(f.name));

for (const f of selected) {
  test(`q8_0 KV exact ${f.name}: reference and cpu --numerics exact vs llama.cpp (FA on, q8_0 KV), every distribution`, async (t) => {
    const refs = readRef(f.name, 'parity-kvq8');
    const file = openGguf(fixture(`parity/${f.name}.gguf`));
    try {
      const onRef = loadModel(file, { device: ref }), onCpu = loadModel(file, { device: exact });
      const sr = new ParityStats(0);
      let logitDiffs = 0, firstLogitDiff = '';
      for await (const [a, b] of zipDistributions(distributions(onRef, refs, 'q8_0', fa), distributions(onCpu, refs, 'q8_0', fa))) {
        sr.add(f.name, a);
        const x = new Uint32Array(a.logits.buffer, a.logits.byteOffset, a.logits.length);
        const y = new Uint32Array(b.logits.buffer, b.logits.byteOffset, b.logits.length);
        for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) { logitDiffs++; firstLogitDiff ||= `seq ${a.seq} ${a.kind} ${a.index} logit ${i}: ${a.logits[i]} vs ${b.logits[i]}`; }
      }
      t.diagnostic(`${f.name} (q8_0 KV): ${sr.summary()}; cpu logits == reference logits: ${logitDiffs === 0 ? 'all bits' : `${logitDiffs} differ`}`);
      assert.equal(sr.dists, distCount(refs), 'every recorded distribution compared');
      assert.equal(logitDiffs, 0, `cpu exact vs reference: ${logitDiffs} logits differ (first: ${firstLogitDiff})`);
      assert.deepEqual(sr.tokenFailures, []);
      assert.equal(sr.bitEqual, sr.values, `${sr.values - sr.bitEqual} probabilities differ from llama.cpp's (first: ${sr.firstDiff})`);
    } finally {
      file.source.close?.();
    }
  });
}

for (const f of selected) {
  test(`q8_0 KV ${f.name} (cpu device, default numerics) vs llama.cpp (FA on, q8_0 KV), every distribution`, async (t) => {
    // the flash-attention suite's tolerances: the free-order matmul kernels' last bits (0 for f16 weights)
    const tol = CPU_FAST_FA_TOL[f.type];
    assert.ok(tol !== undefined, `${f.name}: weight type ${f.type} has no measured tolerance`);
    const refs = readRef(f.name, 'parity-kvq8');
    const file = openGguf(fixture(`parity/${f.name}.gguf`));
    try {
      const model = loadModel(file, { device: cpu });
      const st = new ParityStats(2 * tol);
      for await (const d of distributions(model, refs, 'q8_0', fa)) st.add(f.name, d);
      t.diagnostic(`${f.name} (q8_0 KV): ${st.summary()} (tolerance ${tol})`);
      assert.equal(st.dists, distCount(refs), 'every recorded distribution compared');
      assert.deepEqual(st.tokenFailures, []);
      if (tol === 0) assert.equal(st.bitEqual, st.values, `${st.values - st.bitEqual} probabilities differ from llama.cpp's (first: ${st.firstDiff})`);
      else assert.ok(st.maxAbsErr <= tol, `max abs err ${st.maxAbsErr.toExponential(2)} > ${tol} (${st.worst})`);
    } finally {
      file.source.close?.();
    }
  });
}

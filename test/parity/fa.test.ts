// Flash attention against llama.cpp's flash-attention references (../shared/fixtures/parity-fa: the same fixtures,
// prompts and settings as ../parity, made with `--flash-attention on`), with the parity suites' rule: every prompt
// position (all-outputs batch) and every teacher-forced decode step.
// - exact: the reference device and the cpu device with --numerics exact, flash attention on, reproduce llama.cpp's
//   probabilities bit for bit on the weight types whose x86 orders are reproduced, and their logits are equal.
// - fast: the cpu device's default numerics, flash attention on, within measured tolerances (CPU_FAST_FA_TOL: the
//   free-order matmul kernels' last bits, as in test/parity/cpu.test.ts; the attention is llama.cpp's bits).
// CI runs FA_CI_SUBSET (every architecture and weight type at least once); GGUF_EDGE_PARITY_FA=full runs all 90
// fixtures (npm run test:parity-fa). The plain parity suites stay on the original references with flash attention off.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { fixture } from '../helpers/fixtures.js';
import {
  BIT_EXACT_MORE_TYPES, BIT_EXACT_TYPES, CPU_FAST_FA_TOL, FA_CI_SUBSET, ParityStats, distCount, distributions, faFull,
  parityFixtures, readRef, refNames, zipDistributions,
} from '../helpers/parity.js';

const cpu = await createCpuDevice({ threads: 2 });
const exact = await createCpuDevice({ threads: 2, numerics: 'exact' });
const ref = referenceDevice();
after(async () => { await cpu.close(); await exact.close(); });
const fa = { flashAttn: 'on' as const };

const fixtures = parityFixtures().filter((f) => f.supported);
test('every parity fixture has a flash-attention reference, and the CI subset covers every architecture and type', () => {
  const fa = new Set(refNames('parity-fa'));
  for (const f of fixtures) assert.ok(fa.has(f.name), `parity-fa/${f.name}.ref.json is missing`);
  const sub = fixtures.filter((f) => FA_CI_SUBSET.includes(f.name));
  assert.equal(sub.length, FA_CI_SUBSET.length, 'every CI fixture exists');
  for (const arch of new Set(fixtures.map((f) => f.arch))) assert.ok(sub.some((f) => f.arch === arch), `no CI fixture of ${arch}`);
  for (const type of new Set(fixtures.map((f) => f.type))) assert.ok(sub.some((f) => f.type === type), `no CI fixture of type ${type}`);
});

const selected = fixtures.filter((f) => faFull() || FA_CI_SUBSET.includes(f.name));
const bitExact = (type: string) => BIT_EXACT_TYPES.includes(type) || BIT_EXACT_MORE_TYPES.includes(type);

for (const f of selected.filter((x) => bitExact(x.type))) {
  test(`flash attention exact ${f.name}: reference and cpu --numerics exact vs llama.cpp (FA on), every distribution`, async (t) => {
    const refs = readRef(f.name, 'parity-fa');
    const file = openGguf(fixture(`parity/${f.name}.gguf`));
    try {
      const onRef = loadModel(file, { device: ref }), onCpu = loadModel(file, { device: exact });
      const sr = new ParityStats(0);
      let logitDiffs = 0, firstLogitDiff = '';
      for await (const [a, b] of zipDistributions(distributions(onRef, refs, 'f16', fa), distributions(onCpu, refs, 'f16', fa))) {
        sr.add(f.name, a);
        const x = new Uint32Array(a.logits.buffer, a.logits.byteOffset, a.logits.length);
        const y = new Uint32Array(b.logits.buffer, b.logits.byteOffset, b.logits.length);
        for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) { logitDiffs++; firstLogitDiff ||= `seq ${a.seq} ${a.kind} ${a.index} logit ${i}: ${a.logits[i]} vs ${b.logits[i]}`; }
      }
      t.diagnostic(`${f.name} (FA): ${sr.summary()}; cpu logits == reference logits: ${logitDiffs === 0 ? 'all bits' : `${logitDiffs} differ`}`);
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
  test(`flash attention ${f.name} (cpu device, default numerics) vs llama.cpp (FA on), every distribution`, async (t) => {
    const tol = CPU_FAST_FA_TOL[f.type];
    assert.ok(tol !== undefined, `${f.name}: weight type ${f.type} has no measured tolerance`);
    const refs = readRef(f.name, 'parity-fa');
    const file = openGguf(fixture(`parity/${f.name}.gguf`));
    try {
      const model = loadModel(file, { device: cpu });
      const st = new ParityStats(2 * tol);
      for await (const d of distributions(model, refs, 'f16', fa)) st.add(f.name, d);
      t.diagnostic(`${f.name} (FA): ${st.summary()} (tolerance ${tol})`);
      assert.equal(st.dists, distCount(refs), 'every recorded distribution compared');
      assert.deepEqual(st.tokenFailures, []);
      if (tol === 0) assert.equal(st.bitEqual, st.values, `${st.values - st.bitEqual} probabilities differ from llama.cpp's (first: ${st.firstDiff})`);
      else assert.ok(st.maxAbsErr <= tol, `max abs err ${st.maxAbsErr.toExponential(2)} > ${tol} (${st.worst})`);
    } finally {
      file.source.close?.();
    }
  });
}

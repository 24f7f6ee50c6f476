// The bit-identity claim, proven on every recorded distribution: the reference device and the cpu device
// with --numerics exact against llama.cpp's references, on every fixture of every supported architecture,
// every sequence, every prompt position (all-outputs batch) and every decode step (teacher-forced).
// - The cpu device's logits equal the reference device's bit for bit (all 512 logits, every distribution).
// - On the weight types whose x86 kernel orders are reproduced (BIT_EXACT_TYPES: the 42 fixtures of 6
//   architectures x 7 types; BIT_EXACT_MORE_TYPES: q5_k, q3_k, q5_k_m, q3_k_m of llama and qwen3), our top-10 probabilities, computed as the reference tool computed its own
//   (test/helpers/llamacpp-probs.ts), equal the recorded f32 values to the last bit, and our argmax equals
//   llama.cpp's token at every step. The refs hold f32 probabilities, not logits: equality proves the top-10
//   probabilities bit for bit; a logit differing in its last bit would show in most of them, but one far below
//   the top could move the f32 sum by less than its rounding and go unseen.
// - The fixtures' other weight types run generic formulas and are tested in cpu.test.ts.
// One model load per device per fixture; both engines run in lockstep.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { fixture } from '../helpers/fixtures.js';
import { BIT_EXACT_MORE_TYPES, BIT_EXACT_TYPES, ParityStats, distCount, distributions, parityFixtures, readRef, zipDistributions } from '../helpers/parity.js';

const cpu = await createCpuDevice({ threads: 2, numerics: 'exact' });
const ref = referenceDevice();
after(() => cpu.close());

for (const f of parityFixtures().filter((x) => x.supported && (BIT_EXACT_TYPES.includes(x.type) || BIT_EXACT_MORE_TYPES.includes(x.type)))) {
  test(`exact ${f.name}: reference and cpu --numerics exact vs llama.cpp, every distribution`, async (t) => {
    const refs = readRef(f.name);
    const file = openGguf(fixture(`parity/${f.name}.gguf`));
    try {
      const onRef = loadModel(file, { device: ref });
      const onCpu = loadModel(file, { device: cpu });
      const sr = new ParityStats(0);
      let logitDiffs = 0, firstLogitDiff = '';
      for await (const [a, b] of zipDistributions(distributions(onRef, refs), distributions(onCpu, refs))) {
        sr.add(f.name, a);
        const x = new Uint32Array(a.logits.buffer, a.logits.byteOffset, a.logits.length);
        const y = new Uint32Array(b.logits.buffer, b.logits.byteOffset, b.logits.length);
        for (let i = 0; i < x.length; i++) {
          if (x[i] !== y[i]) { logitDiffs++; firstLogitDiff ||= `seq ${a.seq} ${a.kind} ${a.index} logit ${i}: ${a.logits[i]} vs ${b.logits[i]}`; }
        }
      }
      t.diagnostic(`${f.name}: ${sr.summary()}; cpu logits == reference logits: ${logitDiffs === 0 ? 'all bits' : `${logitDiffs} differ`}`);
      assert.equal(sr.dists, distCount(refs), 'every recorded distribution compared');
      assert.equal(logitDiffs, 0, `cpu exact vs reference: ${logitDiffs} logits differ (first: ${firstLogitDiff})`);
      assert.deepEqual(sr.tokenFailures, []);
      assert.equal(sr.bitEqual, sr.values, `${sr.values - sr.bitEqual} probabilities differ from llama.cpp's (first: ${sr.firstDiff})`);
    } finally {
      file.source.close?.();
    }
  });
}

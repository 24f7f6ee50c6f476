// The sim-NPU cost model: the roofline per engine call on a hand-computed case, and the calibration
// of the ax8850 preset against the published AX8850 figures on the Qwen3-0.6B shape (computed from the
// shape alone: no weights, no run). Real AX8850 (Pi 5, PCIe Gen2 x1): vendor runtime 13.5-14.5 tok/s
// decode, open int8 engine 19.5 (1.51 ms/layer, 7.92 ms lm_head); 128-token chunked prefill 716-1,276 tok/s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callCost, engineWeightBytes, groupWork, NPU_TARGETS, npuTarget, transferSeconds } from '../../../src/backends/sim-npu/cost-model.js';
import { predictSynthetic } from '../../../src/bench/npu-predict.js';
import { GraphBuilder } from '../../../src/graph/graph.js';
import { GgmlType } from '../../../src/gguf/ggml-types.js';

const ax = NPU_TARGETS.ax8850!, htp = NPU_TARGETS.htp!;

test('one engine call: max(ops / achieved ops, bytes / achieved bandwidth) + fixed call cost', () => {
  // a 1024 x 4096 Q8_0 matmul over m tokens, alone in group blk.0
  for (const m of [1, 128]) {
    const b = new GraphBuilder();
    const w = b.leaf('w', 'weight', GgmlType.Q8_0, [1024, 4096]);
    const x = b.leaf('x', 'input', 'f32', [1024, m]);
    b.setGroup('blk.0');
    const y = b.mulMat(w, x);
    const g = b.finish({ tokens: x.id, positions: x.id, outputRows: x.id }, y, m, m);
    const work = groupWork(g, [y.id]);
    const ops = 2 * 1024 * 4096 * m;
    // int8 rows padded to 36 (1044 bytes) plus a 2-byte scale per 32 (64 bytes), 4096 rows; f32 x in, y out
    const bytes = 4096 * (1044 + 64) + 4 * 1024 * m + 4 * 4096 * m;
    assert.equal(engineWeightBytes(1024, 4096), 4096 * 1108);
    assert.deepEqual(work, { ops, bytes, nOps: 1 });
    const c = callCost(ax, work);
    assert.equal(c.seconds, Math.max(ops / 2.6e12, bytes / 25e9) + 457e-6);
    // decode streams weights (memory bound); a 128-token chunk is compute bound
    assert.equal(c.bound, m === 1 ? 'memory' : 'compute');
    // htp: 20 us per op inside the engine, no per-call cost
    assert.equal(callCost(htp, work).seconds, Math.max(ops / 5e12, bytes / 39e9) + 20e-6);
  }
});

test('host link: PCIe Gen2 x1 at 0.5 GB/s plus 50 us per copy on ax8850; nothing on shared-memory htp', () => {
  assert.equal(transferSeconds(ax, 1e6), 1e6 / 0.5e9 + 50e-6);
  assert.equal(transferSeconds(ax, 0), 0);
  assert.equal(transferSeconds(htp, 1e6), 0);
  assert.throws(() => npuTarget('tpu'), /unknown --npu-target "tpu" \(available: ax8850, htp\)/);
});

test('calibration: ax8850 on qwen3-0.6b:q8_0 predicts decode 10-30 tok/s and 128-token prefill 500-2,000 tok/s', () => {
  // the AX8850 engines' KV cache holds 2048 positions (vendor build flags; the open engine's KV I/O)
  const p = predictSynthetic('qwen3-0.6b:q8_0', ax, { nCtx: 2048 });
  assert.equal(p.decode.calls, 29); // 28 layers + the output (lm_head) engine
  assert.ok(p.decode.tokensPerS >= 10 && p.decode.tokensPerS <= 30, `decode ${p.decode.tokensPerS.toFixed(1)} tok/s`);
  assert.ok(p.prefill.tokensPerS >= 500 && p.prefill.tokensPerS <= 2000, `prefill ${p.prefill.tokensPerS.toFixed(0)} tok/s`);
  // per layer close to the measured 1.51 ms of the open int8 engine, the lm_head close to its 7.92 ms
  const layer = p.decode.breakdown[0]!, post = p.decode.breakdown[28]!;
  assert.equal(layer.bound, 'memory');
  assert.ok(layer.seconds > 1.2e-3 && layer.seconds < 1.8e-3, `layer ${(layer.seconds * 1e3).toFixed(2)} ms`);
  assert.ok(post.seconds > 6e-3 && post.seconds < 9e-3, `lm_head ${(post.seconds * 1e3).toFixed(2)} ms`);
  assert.equal(p.prefill.breakdown[0]!.bound, 'compute');
});

test('htp preset: faster than ax8850 on both phases (more bandwidth, more ops, no PCIe)', () => {
  const a = predictSynthetic('llama-3.2-1b:q4_0', ax, { nCtx: 640 });
  const h = predictSynthetic('llama-3.2-1b:q4_0', htp, { nCtx: 640 });
  assert.ok(h.decode.tokensPerS > a.decode.tokensPerS && h.prefill.tokensPerS > a.prefill.tokensPerS);
  assert.equal(h.decode.calls, 17);
});

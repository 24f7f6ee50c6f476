// Continuous batching (Context nSeq > 1, decodeSeqs) against llama.cpp's references: a fixture's sequences run
// at once in one context, interleaved (prefill chunks of one sequence in the same evaluation as decode tokens
// of the others, a sequence starting while others decode), and each sequence's distributions are held to the
// parity rule and tolerances of the cpu device's default numerics (test/parity/cpu.test.ts). Then: batched
// logits against the single-sequence context's, truncateSeq + prefix reuse against the references, and
// isolation (a sequence's logits do not change, to the bit, when another sequence's tokens do).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { referenceDevice } from '../../src/backends/reference/device.js';
import type { Device } from '../../src/backends/backend.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel, type Model } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { fixture } from '../helpers/fixtures.js';
import { CPU_FAST_TOL, ParityStats, readRef, type RefFile } from '../helpers/parity.js';
import { interleave, type SeqSchedule } from '../helpers/interleave.js';

const cpu = await createCpuDevice({ threads: 2 });
const exact = await createCpuDevice({ threads: 2, numerics: 'exact' });
after(async () => { await cpu.close(); await exact.close(); });

async function withModel<T>(name: string, device: Device, fn: (m: Model) => Promise<T>): Promise<T> {
  const file = openGguf(fixture(`parity/${name}.gguf`));
  try { return await fn(loadModel(file, { device })); } finally { file.source.close?.(); }
}

/** The fixture's sequences as interleaved schedules: chunked prompts, one all-rows prompt, a late starter. */
function schedules(ref: RefFile): SeqSchedule[] {
  return ref.sequences.map((s, i) => ({
    prompt: s.prompt, continuation: s.continuation, steps: s.steps.length,
    chunk: [8, 64, 12][i % 3]!, start: [0, 0, 3][i % 3]!, all: i % 3 === 1,
  }));
}

const SEQ_SLOTS = 256; // each sequence's slots, as the single-sequence parity context's nCtx

// (1) every architecture, quantized types the cpu device holds to a measured tolerance
for (const name of ['llama-q8_0', 'qwen2-q4_0', 'qwen3-q4_k_m', 'gemma2-q4_0', 'gemma3-q4_k_m', 'phi3-q4_k']) {
  test(`decodeSeqs parity ${name}: the fixture's sequences interleaved in one context match llama.cpp`, async (t) => {
    const ref = readRef(name);
    const type = name.slice(name.indexOf('-') + 1), tol = CPU_FAST_TOL[type]!;
    await withModel(name, cpu, async (model) => {
      const plans = schedules(ref);
      const ctx = new Context(model, { nCtx: SEQ_SLOTS * plans.length, nSeq: plans.length });
      const st = new ParityStats(2 * tol);
      let expected = 0;
      plans.forEach((p, i) => { expected += p.steps + (p.all ? ref.sequences[i]!.prompt_top.length : 0); });
      const calls = await interleave(ctx, plans, (seq, kind, index, logits) => {
        const rs = ref.sequences[seq]!;
        if (kind === 'prompt') st.add(name, { seq, kind, index, logits, ref: rs.prompt_top[index]! });
        else st.add(name, { seq, kind, index, logits, ref: rs.steps[index]!.top, token: rs.steps[index]!.token });
      });
      t.diagnostic(`${name}: ${calls} evaluations, ${st.summary()} (tolerance ${tol})`);
      assert.equal(st.dists, expected, 'every distribution compared');
      assert.deepEqual(st.tokenFailures, []);
      assert.ok(st.maxAbsErr <= tol, `max abs err ${st.maxAbsErr.toExponential(2)} > ${tol} (${st.worst})`);
      plans.forEach((p, i) => assert.equal(ctx.seqPast(i), p.prompt.length + p.steps - 1, `sequence ${i}'s cached tokens`));
      ctx.close();
    });
  });
}

/** Teacher-forced logits of each sequence alone in a one-sequence context: [seq][step] copies. */
async function singleSequence(model: Model, ref: RefFile): Promise<Float32Array[][]> {
  const ctx = new Context(model, { nCtx: SEQ_SLOTS });
  const out: Float32Array[][] = [];
  for (const s of ref.sequences) {
    ctx.clear();
    const rows: Float32Array[] = [(await ctx.decode(s.prompt)).slice()];
    for (let k = 1; k < s.steps.length; k++) rows.push((await ctx.decode([s.continuation[k - 1]!])).slice());
    out.push(rows);
  }
  ctx.close();
  return out;
}

const softmax = (l: Float32Array) => {
  let max = -Infinity;
  for (const v of l) max = Math.max(max, v);
  const p = new Float64Array(l.length);
  let sum = 0;
  for (let i = 0; i < l.length; i++) sum += (p[i] = Math.exp(l[i]! - max));
  return p.map((v) => v / sum);
};

// (2) batched against single-sequence: each sequence's logits are the single-sequence context's to the bit (the
// Context stages each sequence's rows in the kernel orders it would get alone, graph.ts inp_batch_rows; prefill
// chunks are multiples of 4 tokens, the Q4_K GEMM's row groups), except f16/f32 weights, whose one-token dot order
// (ggml_vec_dot) a batch of several tokens does not use: those within the parity tolerance (0.002)
for (const [name, device, label] of [['qwen3-q4_k_m', cpu, 'cpu'], ['gemma3-q4_k_m', exact, 'cpu exact'], ['gemma2-q4_0', cpu, 'cpu'], ['llama-q8_0', cpu, 'cpu'], ['phi3-q6_k', cpu, 'cpu'], ['qwen2-f16', cpu, 'cpu']] as const) {
  test(`decodeSeqs ${name} (${label}): logits equal the single-sequence context's`, async () => {
    const ref = readRef(name);
    const float = name.endsWith('-f16') || name.endsWith('-f32');
    await withModel(name, device, async (model) => {
      const single = await singleSequence(model, ref);
      // every fixture sequence twice (the copy starting one call later): up to 2K decode tokens share an
      // evaluation, so the kernels' several-token GEMV groups (4 at a time, then the rest) are exercised
      const base = schedules(ref).map((p) => ({ ...p, all: false }));
      const K = base.length;
      const plans = [...base, ...base.map((p) => ({ ...p, start: p.start + 1 }))];
      const ctx = new Context(model, { nCtx: SEQ_SLOTS * 2 * K, nSeq: 2 * K });
      let maxErr = 0, n = 0, bitEqual = 0;
      await interleave(ctx, plans, (seq, kind, index, logits) => {
        if (kind !== 'step') return;
        const want = single[seq % K]![index]!;
        const a = softmax(logits), b = softmax(want);
        for (let i = 0; i < a.length; i++) maxErr = Math.max(maxErr, Math.abs(a[i]! - b[i]!));
        if (logits.every((v, i) => v === want[i])) bitEqual++;
        n++;
      });
      assert.equal(n, plans.reduce((s, p) => s + p.steps, 0));
      if (float) assert.ok(maxErr <= 0.002, `batched vs single-sequence probabilities differ by ${maxErr.toExponential(2)} > 0.002`);
      else assert.equal(bitEqual, n, `${n - bitEqual} of ${n} steps' logits differ from the single-sequence context's (max probability error ${maxErr.toExponential(2)})`);
      // one sequence per evaluation, in the last region first: bit-identical with the single-sequence context
      for (let s = K - 1; s >= 0; s--) {
        const rs = ref.sequences[s]!;
        ctx.truncateSeq(s, 0);
        let l = await ctx.decodeSeqs([{ seq: s, tokens: rs.prompt, logits: 'last' }]);
        for (let k = 0; k < rs.steps.length; k++) {
          if (k > 0) l = await ctx.decodeSeqs([{ seq: s, tokens: [rs.continuation[k - 1]!], logits: 'last' }]);
          assert.deepEqual(l, single[s]![k], `sequence ${s} step ${k}: not bit-identical with the single-sequence context`);
        }
      }
      ctx.close();
    });
  });
}

// (3) truncateSeq + prefix reuse: a sequence goes off on other tokens, is cut back to a prefix of what it had,
// and continues from there: its distributions still match llama.cpp's
test('decodeSeqs llama-q8_0: truncateSeq + prefix reuse continues as llama.cpp does', async () => {
  const name = 'llama-q8_0', ref = readRef(name), tol = CPU_FAST_TOL.q8_0!;
  await withModel(name, cpu, async (model) => {
    const K = ref.sequences.length;
    const ctx = new Context(model, { nCtx: SEQ_SLOTS * K, nSeq: K });
    const st = new ParityStats(2 * tol);
    const s0 = ref.sequences[0]!, P = s0.prompt.length, keep = 6;
    // sequence 0: prompt, 10 teacher-forced steps, then a detour of 8 other tokens; the other sequences decode alongside
    const plans = schedules(ref).map((p, i) => (i === 0 ? { ...p, steps: 11 } : p));
    await interleave(ctx, plans, (seq, kind, index, logits) => {
      if (seq === 0 && kind === 'step') st.add(name, { seq, kind, index, logits, ref: s0.steps[index]!.top, token: s0.steps[index]!.token });
    });
    assert.equal(ctx.seqPast(0), P + 10);
    await ctx.decodeSeqs([{ seq: 0, tokens: s0.prompt.slice(0, 8).reverse(), logits: 'last' }, { seq: 1, tokens: [1, 2, 3], logits: 'none' }]);
    assert.equal(ctx.seqPast(0), P + 18);
    ctx.truncateSeq(0, P + keep);
    assert.equal(ctx.seqPast(0), P + keep);
    ctx.truncateSeq(0, P + 99); // keeping more than is cached changes nothing
    assert.equal(ctx.seqPast(0), P + keep);
    // continue from step keep + 1 with the reference's tokens (fed: continuation[keep..])
    let l = await ctx.decodeSeqs([{ seq: 0, tokens: [s0.continuation[keep]!], logits: 'last' }, { seq: 2, tokens: [5, 6], logits: 'last' }]);
    for (let k = keep + 1; k < s0.steps.length; k++) {
      if (k > keep + 1) l = await ctx.decodeSeqs([{ seq: 0, tokens: [s0.continuation[k - 1]!], logits: 'last' }]);
      st.add(name, { seq: 0, kind: 'step', index: k, logits: l.subarray(0, ctx.nVocab), ref: s0.steps[k]!.top, token: s0.steps[k]!.token });
    }
    assert.equal(st.dists, 11 + s0.steps.length - keep - 1);
    assert.deepEqual(st.tokenFailures, []);
    assert.ok(st.maxAbsErr <= tol, `max abs err ${st.maxAbsErr.toExponential(2)} > ${tol} (${st.worst})`);
    ctx.close();
  });
});

// (4) isolation: the same schedule with other tokens in sequences 0 and 2 leaves sequence 1's logits unchanged, to the bit
for (const [name, device, label] of [['gemma3-q4_k_m', cpu, 'cpu'], ['qwen3-q4_k_m', referenceDevice(), 'reference']] as const) {
  test(`decodeSeqs ${name} (${label}): a sequence never sees another's KV`, async () => {
    const ref = readRef(name);
    await withModel(name, device, async (model) => {
      const runs: Float32Array[][] = [];
      for (const variant of [0, 1]) {
        const plans = schedules(ref).map((p, i) => ({
          ...p, steps: Math.min(p.steps, 12),
          ...(i !== 1 && variant === 1 ? { prompt: p.prompt.map((t) => (t * 7 + 3) % model.hp.nVocab), continuation: [...p.continuation].reverse() } : {}),
        }));
        const ctx = new Context(model, { nCtx: SEQ_SLOTS * plans.length, nSeq: plans.length });
        const mine: Float32Array[] = [];
        await interleave(ctx, plans, (seq, kind, _i, logits) => { if (seq === 1) mine.push(logits.slice()); });
        runs.push(mine);
        ctx.close();
      }
      assert.ok(runs[0]!.length >= 12);
      runs[0]!.forEach((l, i) => assert.deepEqual(runs[1]![i], l, `sequence 1 row ${i} changed with the other sequences' tokens`));
    });
  });
}

// the cpu device (exact numerics) computes several sequences as the reference device does, bit for bit
test('decodeSeqs gemma2-q4_k: cpu exact equals the reference device bit for bit', async () => {
  const name = 'gemma2-q4_k', ref = readRef(name);
  const rows: Float32Array[][] = [];
  for (const device of [exact, referenceDevice()]) {
    await withModel(name, device, async (model) => {
      const plans = schedules(ref).map((p) => ({ ...p, steps: Math.min(p.steps, 10) }));
      const ctx = new Context(model, { nCtx: SEQ_SLOTS * plans.length, nSeq: plans.length });
      const mine: Float32Array[] = [];
      await interleave(ctx, plans, (_s, _k, _i, logits) => { mine.push(logits.slice()); });
      rows.push(mine);
      ctx.close();
    });
  }
  assert.equal(rows[0]!.length, rows[1]!.length);
  rows[0]!.forEach((l, i) => assert.deepEqual(l, rows[1]![i], `row ${i}`));
});

// Context nSeq / decodeSeqs: typed errors for bad input (sequence ids, a sequence's slots, entries), the
// scheduler rule that keeps multi-sequence attention off devices that do not declare it, and the refusal of
// static-shape accelerators.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createCpuDevice } from '../../src/backends/cpu/device.js';
import { createSimNpu } from '../../src/backends/sim-npu/index.js';
import type { Device } from '../../src/backends/backend.js';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context, ContextError, type SeqTokens } from '../../src/runtime/context.js';
import { fixture } from '../helpers/fixtures.js';
import { readRef } from '../helpers/parity.js';

const cpu = await createCpuDevice({ threads: 2 });
const npu = await createSimNpu({ threads: 1 });
after(async () => { await npu.close(); await cpu.close(); });

const file = openGguf(fixture('parity/llama-q8_0.gguf'));
const model = loadModel(file, { device: cpu });
after(() => file.source.close?.());

async function rejects(p: Promise<unknown> | (() => unknown), code: string, match: RegExp): Promise<void> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    assert.ok(e instanceof ContextError, `not a ContextError: ${String(e)}`);
    assert.equal(e.code, code, e.message);
    assert.match(e.message, match);
    return;
  }
  assert.fail(`no ${code} error`);
}

test('nSeq: options and per-sequence slots', async () => {
  const ctx = new Context(model, { nCtx: 100, nSeq: 3 });
  assert.equal(ctx.nSeq, 3);
  assert.equal(ctx.seqCtx, 33);
  for (let s = 0; s < 3; s++) assert.equal(ctx.seqPast(s), 0);
  assert.equal(new Context(model, { nCtx: 100 }).nSeq, 1);
  assert.equal(new Context(model, { nCtx: 100 }).seqCtx, 100);
  for (const nSeq of [0, -1, 1.5, 101, Number.NaN]) assert.throws(() => new Context(model, { nCtx: 100, nSeq }), (e: unknown) => e instanceof ContextError && e.code === 'BAD_ARGUMENT' && /nSeq/.test(e.message));
  ctx.close();
});

test('decodeSeqs: bad sequence ids, entries and tokens are typed errors; nothing is cached by a refused batch', async () => {
  const ctx = new Context(model, { nCtx: 64, nSeq: 2 });
  for (const seq of [-1, 2, 0.5, Number.NaN, '1' as unknown as number]) {
    await rejects(ctx.decodeSeqs([{ seq, tokens: [1], logits: 'last' }]), 'BAD_SEQUENCE', /sequence id .* outside 0\.\.1/);
    await rejects(() => ctx.seqPast(seq), 'BAD_SEQUENCE', /outside 0\.\.1/);
    await rejects(() => ctx.truncateSeq(seq, 0), 'BAD_SEQUENCE', /outside 0\.\.1/);
  }
  await rejects(() => ctx.truncateSeq(1, -1), 'BAD_ARGUMENT', /keep/);
  await rejects(ctx.decodeSeqs([{ seq: 0, tokens: [1], logits: 'last' }, { seq: 1, tokens: [model.hp.nVocab], logits: 'last' }]), 'BAD_TOKEN', /token id .* sequence 1/);
  await rejects(ctx.decodeSeqs([{ seq: 1, tokens: [], logits: 'last' }]), 'BAD_ARGUMENT', /no tokens/);
  await rejects(ctx.decodeSeqs([{ seq: 1, tokens: [1], logits: 'first' as SeqTokens['logits'] }]), 'BAD_ARGUMENT', /logits must be/);
  await rejects(ctx.decodeSeqs([]), 'BAD_ARGUMENT', /at least one token/);
  await rejects(ctx.decodeSeqs([{ seq: 0, tokens: [], logits: 'none' }]), 'BAD_ARGUMENT', /at least one token/);
  await rejects(ctx.decodeSeqs(null as unknown as SeqTokens[]), 'BAD_ARGUMENT', /array/);
  await rejects(ctx.decodeSeqs([null as unknown as SeqTokens]), 'BAD_ARGUMENT', /entry 0/);
  assert.equal(ctx.seqPast(0), 0);
  assert.equal(ctx.seqPast(1), 0);
  ctx.close();
  await rejects(ctx.decodeSeqs([{ seq: 0, tokens: [1], logits: 'last' }]), 'BAD_ARGUMENT', /closed/);
});

test("decodeSeqs: a sequence's slots are floor(nCtx / nSeq); overflowing them is CONTEXT_FULL and caches nothing", async () => {
  const ctx = new Context(model, { nCtx: 64, nSeq: 3 }); // 21 slots each
  const toks = (n: number) => Array.from({ length: n }, (_, i) => 1 + i);
  await ctx.decodeSeqs([{ seq: 0, tokens: toks(20), logits: 'none' }, { seq: 2, tokens: toks(21), logits: 'last' }]);
  assert.equal(ctx.seqPast(0), 20);
  assert.equal(ctx.seqPast(2), 21);
  await rejects(ctx.decodeSeqs([{ seq: 1, tokens: [1], logits: 'last' }, { seq: 2, tokens: [1], logits: 'last' }]), 'CONTEXT_FULL', /sequence 2 is full: 21 \+ 1 tokens > its 21 slots/);
  // two entries of one sequence add up
  await rejects(ctx.decodeSeqs([{ seq: 0, tokens: [1], logits: 'none' }, { seq: 0, tokens: [2], logits: 'last' }]), 'CONTEXT_FULL', /sequence 0 is full: 20 \+ 2/);
  assert.equal(ctx.seqPast(1), 0);
  // the single-sequence API is sequence 0 and its slots
  await rejects(ctx.decode([1, 2]), 'CONTEXT_FULL', /20 \+ 2 tokens > 21/);
  await ctx.decode([1]);
  assert.equal(ctx.seqPast(0), 21);
  assert.equal(ctx.nPast, 21);
  ctx.truncateSeq(0, 3);
  assert.equal(ctx.nPast, 3);
  ctx.clear();
  assert.equal(ctx.seqPast(0), 0);
  assert.equal(ctx.seqPast(2), 21, 'clear() is sequence 0 only');
  ctx.close();
});

test('decodeSeqs: several entries, outputs in entry order; chunks past nBatch give the rows a one-shot call gives', async () => {
  const ref = readRef('llama-q8_0');
  const [a, b] = [ref.sequences[0]!.prompt, ref.sequences[2]!.prompt];
  const nv = model.hp.nVocab;
  const one = new Context(model, { nCtx: 256, nSeq: 2 });
  const whole = Float32Array.from(await one.decodeSeqs([{ seq: 0, tokens: a, logits: 'all' }, { seq: 1, tokens: b, logits: 'last' }]));
  assert.equal(whole.length, (a.length + 1) * nv);
  // the same evaluation in chunks of 8 (a multiple of 4: the same kernel orders)
  const chunked = new Context(model, { nCtx: 256, nSeq: 2, nBatch: 8 });
  const got = await chunked.decodeSeqs([{ seq: 0, tokens: a, logits: 'all' }, { seq: 1, tokens: b, logits: 'last' }]);
  assert.equal(got.length, whole.length);
  assert.deepEqual(got, whole);
  // and each sequence's rows are its own: sequence 1 alone gives its row
  const alone = new Context(model, { nCtx: 256, nSeq: 2 });
  const r = await alone.decodeSeqs([{ seq: 1, tokens: b, logits: 'last' }]);
  assert.deepEqual(r, whole.subarray(a.length * nv));
  for (const c of [one, chunked, alone]) c.close();
});

test('multi-sequence attention never goes to a device that does not declare it; static-shape accelerators are refused', async () => {
  // a device claiming every op but not multiSequence (the cpu device without the flag), listed first: it gets
  // the other nodes, the caches stay on cpu
  // (it shares the cpu's memory, so it reads the weights where they are: holdsWeight)
  const plain: Device = { ...cpu, name: 'plain', multiSequence: undefined, holdsWeight: () => true, createBackend() { return { ...cpu.createBackend(), device: plain }; } };
  const ctx = new Context(model, { nCtx: 64, nSeq: 2, devices: [plain, cpu] });
  assert.equal(ctx.kvDevices().primary, 'cpu');
  const splits = ctx.describePlan(2);
  assert.ok(splits.some((s) => s.device === 'plain') && splits.some((s) => s.device === 'cpu'), JSON.stringify(splits));
  const out = await ctx.decodeSeqs([{ seq: 0, tokens: [1, 2, 3], logits: 'last' }, { seq: 1, tokens: [4], logits: 'last' }]);
  const want = new Context(model, { nCtx: 64, nSeq: 2 });
  assert.deepEqual(out.subarray(0, model.hp.nVocab), (await want.decodeSeqs([{ seq: 0, tokens: [1, 2, 3], logits: 'last' }])).subarray(0, model.hp.nVocab));
  ctx.close();
  want.close();
  // one sequence, the same device: it takes everything
  const single = new Context(model, { nCtx: 64, devices: [plain, cpu] });
  assert.equal(single.kvDevices().primary, 'plain');
  single.close();
  assert.throws(() => new Context(model, { nCtx: 256, nSeq: 2, devices: [npu, cpu], prefillDevice: npu }), (e: unknown) => e instanceof ContextError && e.code === 'UNSUPPORTED' && /sim-npu/.test(e.message));
});

test('decodeSeqs with one sequence on a context whose prefill runs on an accelerator goes through decode()', async () => {
  const ref = readRef('llama-q8_0');
  const p = ref.sequences[0]!.prompt;
  const ctx = await Context.create(model, { nCtx: 256, devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
  const want = await Context.create(model, { nCtx: 256, devices: [npu, cpu], prefillDevice: npu, decodeDevice: cpu });
  const got = Float32Array.from(await ctx.decodeSeqs([{ seq: 0, tokens: p.slice(0, 10), logits: 'none' }, { seq: 0, tokens: p.slice(10), logits: 'all' }]));
  const all = await want.decode(p, true);
  assert.deepEqual(got, all.subarray(10 * model.hp.nVocab));
  assert.equal(ctx.seqPast(0), p.length);
  const next = await ctx.decodeSeqs([{ seq: 0, tokens: [5], logits: 'last' }]);
  assert.deepEqual(next, await want.decode([5]));
  ctx.close();
  want.close();
});

test("decode() on a context of several sequences is sequence 0's, with the one-sequence context's logits", async () => {
  const p = readRef('llama-q8_0').sequences[2]!.prompt;
  const one = new Context(model, { nCtx: 128 });
  const two = new Context(model, { nCtx: 256, nSeq: 2 });
  await two.decodeSeqs([{ seq: 1, tokens: p.slice(0, 9), logits: 'none' }]);
  assert.deepEqual(Float32Array.from(await two.decode(p, true)), await one.decode(p, true));
  assert.deepEqual(Float32Array.from(await two.decode([7])), await one.decode([7]));
  assert.equal(two.seqPast(0), p.length + 1);
  assert.equal(two.seqPast(1), 9);
  one.close();
  two.close();
});

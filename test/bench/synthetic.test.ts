// Synthetic benchmark models: the file parses, shapes and per-tensor types follow the rules
// (llama.cpp's Q4_K_M mix included), block contents are valid, and a tiny one runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { GgmlType, ggmlTypeName } from '../../src/gguf/ggml-types.js';
import { metaNumber, metaString, readTensorData } from '../../src/gguf/reader.js';
import { dequantizeRow } from '../../src/quant/dequantize.js';
import { getDevice } from '../../src/backends/registry.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { argmax } from '../../src/runtime/sampler.js';
import { SHAPES, parseSyntheticSpec, type ModelShape } from '../../src/bench/shapes.js';
import { syntheticModel, syntheticModelBytes, syntheticTensors, writeSyntheticModel } from '../../src/bench/synthetic.js';
import { tensorType, useMoreBits } from '../../src/bench/quant-mix.js';
import { fixture } from '../helpers/fixtures.js';

const tmp = mkdtempSync(join(tmpdir(), 'gguf-edge-synth-test-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));

const typesOf = (shape: ModelShape, mix: Parameters<typeof syntheticTensors>[1]) =>
  Object.fromEntries(syntheticTensors(shape, mix).map((t) => [t.name, ggmlTypeName(t.type)]));

test('tiny-qwen3:q4_k_m parses with our reader: metadata, shapes, types and valid blocks', () => {
  const { path, built, bytes } = syntheticModel('tiny-qwen3', 'q4_k_m', { cacheDir: tmp });
  assert.equal(built, true);
  assert.equal(statSync(path).size, bytes);
  const f = openGguf(path);
  try {
    const s = SHAPES['tiny-qwen3']!;
    assert.equal(metaString(f, 'general.architecture'), 'qwen3');
    assert.equal(metaNumber(f, 'general.file_type'), 15);
    assert.equal(metaNumber(f, 'qwen3.block_count'), s.nLayer);
    assert.equal(metaNumber(f, 'qwen3.attention.key_length'), s.headDim);
    assert.equal((f.metadata.get('tokenizer.ggml.tokens') as string[]).length, s.nVocab);
    const expect = syntheticTensors(s, 'q4_k_m');
    assert.deepEqual(f.tensors.map((t) => [t.name, t.dims, t.type]), expect.map((t) => [t.name, t.dims, t.type]));
    assert.deepEqual(f.tensorsByName.get('blk.0.attn_q.weight')!.dims, [256, 512]);
    assert.deepEqual(f.tensorsByName.get('blk.1.ffn_down.weight')!.dims, [512, 256]);
    // every matrix dequantizes to finite values with std ~0.03 and mean ~0 (valid, calibrated blocks)
    for (const t of f.tensors) {
      const data = readTensorData(f, t);
      const n = Math.min(t.nElements, 16 * t.dims[0]!);
      const out = new Float32Array(n);
      dequantizeRow(t.type, data, 0, out, 0, n);
      let sum = 0, sq = 0;
      for (const v of out) { assert.ok(Number.isFinite(v), `${t.name}: non-finite value`); sum += v; sq += v * v; }
      if (t.dims.length === 2) {
        const mean = sum / n, std = Math.sqrt(sq / n - mean * mean);
        assert.ok(std > 0.015 && std < 0.06, `${t.name} (${ggmlTypeName(t.type)}): std ${std}`);
        assert.ok(Math.abs(mean) < 0.01, `${t.name}: mean ${mean}`);
      }
    }
  } finally {
    f.source.close?.();
  }
  // cached: the second call does not rebuild
  assert.equal(syntheticModel('tiny-qwen3', 'q4_k_m', { cacheDir: tmp }).built, false);
});

test('the same seed gives the same bytes; another seed other bytes', () => {
  const s = SHAPES['tiny-llama']!;
  const a = join(tmp, 'a.gguf'), b = join(tmp, 'b.gguf'), c = join(tmp, 'c.gguf');
  writeSyntheticModel(a, s, 'q4_0', { seed: 5 });
  writeSyntheticModel(b, s, 'q4_0', { seed: 5 });
  writeSyntheticModel(c, s, 'q4_0', { seed: 6 });
  const read = (p: string) => { const f = openGguf(p); const d = readTensorData(f, 'blk.0.attn_q.weight'); f.source.close?.(); return d; };
  assert.deepEqual(read(a), read(b));
  assert.notDeepEqual(read(a), read(c));
});

test('uniform types: every matrix in the type, 1-D tensors f32; llama-3.2-1b has llama3 rope_freqs', () => {
  for (const [mix, id] of [['f16', GgmlType.F16], ['q8_0', GgmlType.Q8_0], ['q4_0', GgmlType.Q4_0]] as const) {
    for (const t of syntheticTensors(SHAPES['llama-3.2-1b']!, mix)) {
      assert.equal(t.type, t.dims.length === 2 ? id : GgmlType.F32, `${mix} ${t.name}`);
    }
  }
  const l = syntheticTensors(SHAPES['llama-3.2-1b']!, 'q4_0');
  assert.deepEqual(l.find((t) => t.name === 'rope_freqs.weight')?.dims, [32]);
  assert.equal(l.find((t) => t.name === 'output.weight'), undefined, 'llama-3.2-1b is tied');
  assert.deepEqual(l.find((t) => t.name === 'token_embd.weight')?.dims, [2048, 128256]);
  assert.ok(syntheticTensors(SHAPES['tinyllama-1.1b']!, 'f16').some((t) => t.name === 'output.weight'), 'tinyllama is untied');
  assert.throws(() => parseSyntheticSpec('nope:q4_0'), /unknown synthetic shape/);
  assert.throws(() => parseSyntheticSpec('qwen3-0.6b:q2_k'), /unknown synthetic type/);
  assert.equal(parseSyntheticSpec('qwen3-0.6b:Q5_K_M').type, 'q5_k_m');
});

test('use_more_bits matches llama.cpp for 2, 6 and 28 layers', () => {
  const on = (n: number) => Array.from({ length: n }, (_, i) => i).filter((i) => useMoreBits(i, n));
  assert.deepEqual(on(2), [1]);
  assert.deepEqual(on(6), [2, 5]);
  assert.deepEqual(on(28), [0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27]);
});

test('Q4_K_M, 2 and 6 layers: the same per-tensor types as the llama.cpp-rule parity fixtures', () => {
  // the parity fixtures' shapes (see ../shared/fixtures/parity/README.md)
  const base = { nVocab: 512, nCtxTrain: 512, ropeBase: 10000, eps: 1e-5 };
  const cases: [string, ModelShape][] = [
    ['qwen3-q4_k_m', { ...base, name: 'q', arch: 'qwen3', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 128, nFf: 512, tied: true }],
    ['llama-q4_k_m', { ...base, name: 'l', arch: 'llama', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 64, nFf: 512, tied: false }],
    ['gemma3-q4_k_m', { ...base, name: 'g', arch: 'gemma3', nEmbd: 256, nLayer: 6, nHead: 4, nHeadKv: 1, headDim: 64, nFf: 256, tied: true, slidingWindow: 16 }],
  ];
  for (const [name, shape] of cases) {
    const f = openGguf(fixture(`parity/${name}.gguf`));
    const theirs = Object.fromEntries(f.tensors.map((t) => [t.name, ggmlTypeName(t.type)]));
    f.source.close?.();
    assert.deepEqual(typesOf(shape, 'q4_k_m'), theirs, name);
  }
});

test('Q5_K_M and Q3_K_M, 2 layers: the same per-tensor types as the llama.cpp-rule parity fixtures', () => {
  const base = { nVocab: 512, nCtxTrain: 512, ropeBase: 10000, eps: 1e-5 };
  const shapes: Record<string, ModelShape> = {
    qwen3: { ...base, name: 'q', arch: 'qwen3', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 128, nFf: 512, tied: true },
    llama: { ...base, name: 'l', arch: 'llama', nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, headDim: 64, nFf: 512, tied: false },
  };
  for (const mix of ['q5_k_m', 'q3_k_m'] as const) {
    for (const [arch, shape] of Object.entries(shapes)) {
      const f = openGguf(fixture(`parity/${arch}-${mix}.gguf`));
      const theirs = Object.fromEntries(f.tensors.map((t) => [t.name, ggmlTypeName(t.type)]));
      f.source.close?.();
      assert.deepEqual(typesOf(shape, mix), theirs, `${arch}-${mix}`);
    }
  }
});

test('Q5_K_M, Q3_K_M, Q6_K, IQ4_XS at 28 / 16 layers: the rules of llama.cpp', () => {
  const count = (types: Record<string, string>) => {
    const c: Record<string, number> = {};
    for (const t of Object.values(types)) c[t] = (c[t] ?? 0) + 1;
    return c;
  };
  const more = new Set([0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27]);
  const q5 = typesOf(SHAPES['qwen3-0.6b']!, 'q5_k_m');
  assert.equal(q5['token_embd.weight'], 'Q6_K');
  for (let il = 0; il < 28; il++) for (const m of ['attn_v', 'ffn_down']) assert.equal(q5[`blk.${il}.${m}.weight`], more.has(il) ? 'Q6_K' : 'Q5_K');
  assert.deepEqual(count(q5), { Q6_K: 29, Q5_K: 168, F32: 113 });
  const q3 = typesOf(SHAPES['qwen3-0.6b']!, 'q3_k_m');
  // attn_v: Q5_K in layers 0-1; ffn_down: Q5_K for i < 28/16 = 1; attn_output Q4_K
  assert.equal(q3['blk.1.attn_v.weight'], 'Q5_K');
  assert.equal(q3['blk.2.attn_v.weight'], 'Q4_K');
  assert.equal(q3['blk.0.ffn_down.weight'], 'Q5_K');
  assert.equal(q3['blk.1.ffn_down.weight'], 'Q4_K');
  assert.equal(q3['blk.5.attn_output.weight'], 'Q4_K');
  assert.deepEqual(count(q3), { Q6_K: 1, Q5_K: 3, Q4_K: 26 + 27 + 28, Q3_K: 28 * 4, F32: 113 });
  assert.deepEqual(count(typesOf(SHAPES['qwen3-0.6b']!, 'q6_k')), { Q6_K: 197, F32: 113 });
  // iq4_xs: attn_v Q5_K when n_gqa >= 4 (llama-3.2-1b: 32/8), ffn_down Q5_K for i < n/8
  const iq = typesOf(SHAPES['llama-3.2-1b']!, 'iq4_xs');
  assert.equal(iq['token_embd.weight'], 'Q6_K');
  assert.equal(iq['blk.7.attn_v.weight'], 'Q5_K');
  assert.equal(iq['blk.1.ffn_down.weight'], 'Q5_K');
  assert.equal(iq['blk.2.ffn_down.weight'], 'IQ4_XS');
  assert.equal(iq['blk.2.attn_q.weight'], 'IQ4_XS');
  assert.equal(typesOf(SHAPES['qwen3-0.6b']!, 'iq4_xs')['blk.7.attn_v.weight'], 'IQ4_XS', 'qwen3-0.6b: n_gqa 2');
});

test('synthetic q5_k_m, q3_k_m, q6_k, iq4_xs blocks are valid and calibrated', () => {
  for (const mix of ['q5_k_m', 'q3_k_m', 'q6_k', 'iq4_xs'] as const) {
    const { path } = syntheticModel('tiny-llama', mix, { cacheDir: tmp });
    const f = openGguf(path);
    try {
      for (const t of f.tensors) {
        if (t.dims.length !== 2) continue;
        const data = readTensorData(f, t);
        const n = Math.min(t.nElements, 16 * t.dims[0]!);
        const out = new Float32Array(n);
        dequantizeRow(t.type, data, 0, out, 0, n);
        let sum = 0, sq = 0;
        for (const v of out) { assert.ok(Number.isFinite(v), `${mix} ${t.name}: non-finite value`); sum += v; sq += v * v; }
        const mean = sum / n, std = Math.sqrt(sq / n - mean * mean);
        assert.ok(std > 0.015 && std < 0.06, `${mix} ${t.name} (${ggmlTypeName(t.type)}): std ${std}`);
        assert.ok(Math.abs(mean) < 0.01, `${mix} ${t.name}: mean ${mean}`);
      }
    } finally {
      f.source.close?.();
    }
  }
});

test('Q4_K_M, 28 layers (qwen3-0.6b): Q6_K output and more-bits attn_v/ffn_down, Q4_K elsewhere', () => {
  const types = typesOf(SHAPES['qwen3-0.6b']!, 'q4_k_m');
  const more = new Set([0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 24, 25, 26, 27]);
  assert.equal(types['token_embd.weight'], 'Q6_K', 'tied: token_embd takes the output type');
  for (let il = 0; il < 28; il++) {
    for (const m of ['attn_v', 'ffn_down']) assert.equal(types[`blk.${il}.${m}.weight`], more.has(il) ? 'Q6_K' : 'Q4_K', `layer ${il} ${m}`);
    for (const m of ['attn_q', 'attn_k', 'attn_output', 'ffn_gate', 'ffn_up']) assert.equal(types[`blk.${il}.${m}.weight`], 'Q4_K');
    for (const m of ['attn_norm', 'ffn_norm', 'attn_q_norm', 'attn_k_norm']) assert.equal(types[`blk.${il}.${m}.weight`], 'F32');
  }
  const counts: Record<string, number> = {};
  for (const t of Object.values(types)) counts[t] = (counts[t] ?? 0) + 1;
  assert.deepEqual(counts, { Q6_K: 29, Q4_K: 168, F32: 113 });
  // untied: the output is Q6_K and token_embd stays Q4_K
  const tl = typesOf(SHAPES['tinyllama-1.1b']!, 'q4_k_m');
  assert.equal(tl['output.weight'], 'Q6_K');
  assert.equal(tl['token_embd.weight'], 'Q4_K');
});

test('Q4_K_M fallbacks when a row is not a multiple of 256 (gemma3-270m: 640, smollm2-135m: 576)', () => {
  const g = typesOf(SHAPES['gemma3-270m']!, 'q4_k_m'); // 18 layers: more bits at 0,1,4,7,10,13,15,16,17
  assert.equal(g['token_embd.weight'], 'Q8_0', 'output rule: Q8_0 when ne0 % 256 != 0');
  assert.equal(g['blk.3.attn_q.weight'], 'Q5_0', 'Q4_K -> Q5_0');
  assert.equal(g['blk.3.attn_v.weight'], 'Q5_0');
  assert.equal(g['blk.4.attn_v.weight'], 'Q8_0', 'Q6_K -> Q8_0');
  assert.equal(g['blk.3.attn_output.weight'], 'Q4_K', 'ne0 = 4 heads x 256 = 1024 needs no fallback');
  assert.equal(g['blk.3.ffn_down.weight'], 'Q4_K', 'ne0 = ffn 2048');
  assert.equal(g['blk.4.ffn_down.weight'], 'Q6_K');
  assert.equal(g['blk.3.ffn_up.weight'], 'Q5_0');
  const s = typesOf(SHAPES['smollm2-135m']!, 'q4_k_m');
  assert.equal(s['token_embd.weight'], 'Q8_0');
  assert.equal(s['blk.0.attn_k.weight'], 'Q5_0');
  assert.equal(s['blk.0.ffn_down.weight'], 'Q6_K', 'ne0 = 1536 = 6 x 256');
  assert.equal(s['blk.0.attn_output.weight'], 'Q5_0', 'ne0 = 9 heads x 64 = 576');
  // and F16 when not even a 32-block divides the row
  assert.equal(ggmlTypeName(tensorType('q4_k_m', 'blk.0.attn_q.weight', [100, 64], 2, true)), 'F16');
});

test('a tiny synthetic model runs through the runtime on the reference device', async () => {
  for (const spec of ['tiny-llama:q4_k_m', 'tiny-qwen3:q8_0', 'tiny-qwen3moe:q4_k_m']) {
    const { shape, type } = parseSyntheticSpec(spec);
    const { path } = syntheticModel(shape.name, type, { cacheDir: tmp });
    const f = openGguf(path);
    const model = loadModel(f, { device: await getDevice('reference') });
    const ctx = new Context(model, { nCtx: 32 });
    let logits = await ctx.decode([1, 300, 301, 302]);
    assert.equal(logits.length, shape.nVocab);
    const seen = new Set<number>();
    for (let i = 0; i < 4; i++) {
      for (const v of logits) assert.ok(Number.isFinite(v), `${spec}: non-finite logit`);
      const tok = argmax(logits);
      seen.add(tok);
      logits = await ctx.decode([tok]);
    }
    let min = Infinity, max = -Infinity;
    for (const v of logits) { min = Math.min(min, v); max = Math.max(max, v); }
    assert.ok(max - min > 1, `${spec}: logits spread ${max - min}`);
    ctx.close();
    f.source.close?.();
  }
});

test("qwen3-30b-a3b-4l: Qwen3-30B-A3B's MoE layer at its real size (4 of 48 layers), F32 router, 3-D experts in the mix", () => {
  const shape = SHAPES['qwen3-30b-a3b-4l']!;
  const ts = syntheticTensors(shape, 'q4_k_m');
  const by = new Map(ts.map((t) => [t.name, t]));
  assert.deepEqual(by.get('blk.0.ffn_gate_exps.weight')?.dims, [2048, 768, 128]);
  assert.deepEqual(by.get('blk.3.ffn_down_exps.weight')?.dims, [768, 2048, 128]);
  assert.equal(ggmlTypeName(by.get('blk.0.ffn_gate_inp.weight')!.type), 'F32');
  assert.equal(ggmlTypeName(by.get('blk.1.ffn_up_exps.weight')!.type), 'Q4_K');
  assert.ok(!by.has('blk.0.ffn_down.weight'), 'no dense FFN in a MoE layer');
  assert.equal(ts.filter((t) => t.name.startsWith('blk.')).length, 4 * 12);
  // the experts dominate: ~0.6 G parameters per layer
  const bytes = syntheticModelBytes(shape, 'q4_k_m');
  assert.ok(bytes > 1.4e9 && bytes < 2.4e9, `${bytes} bytes`);
});

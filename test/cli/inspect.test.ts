// inspect's summary: parameter count and type mix from the tensor table, and the memory a run needs — the
// KV cache as llama.cpp sizes it (n_ctx x n_layer x (n_embd_k_gqa + n_embd_v_gqa) x element size, from the
// metadata), and exactly the weights, KV and compute arena a real Context allocates for the same -c / -b.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { loadModel } from '../../src/runtime/model.js';
import { Context } from '../../src/runtime/context.js';
import { getDevice } from '../../src/backends/registry.js';
import { writeSplit } from '../../src/gguf/split-write.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

for (const [name, nCtx, nBatch, kv] of [['models/stories260K.gguf', 256, 64, 'f16'], ['models/TinyStories-656K-Q8_0.gguf', 300, 512, 'f32'], ['parity/llama-f16.gguf', 256, 64, 'q8_0']] as const) {
  test(`inspect ${name} -c ${nCtx} -b ${nBatch} --kv-type ${kv}: counts, llama.cpp's KV size, and what a Context allocates`, async () => {
    const r = cli('inspect', fixture(name), '--json', '-c', String(nCtx), '-b', String(nBatch), '--kv-type', kv);
    assert.equal(r.status, 0, r.stderr);
    const o = JSON.parse(r.stdout);
    const f = openGguf(fixture(name));
    // the tensor table's own sums
    assert.equal(o.summary.params, f.tensors.reduce((a, t) => a + t.nElements, 0));
    assert.equal(o.summary.weight_bytes, f.tensors.reduce((a, t) => a + t.nBytes, 0));
    assert.equal(o.summary.types.reduce((a: number, t: { tensors: number }) => a + t.tensors, 0), f.tensors.length);
    assert.deepEqual(o.summary.types.map((t: { type: string }) => t.type).sort(), [...new Set(o.tensors.map((t: { type: string }) => t.type))].sort());
    // llama.cpp's KV cache size from the metadata
    const m = (k: string) => Number(f.metadata.get(`llama.${k}`));
    const nEmbdGqa = (m('embedding_length') / m('attention.head_count')) * (m('attention.head_count_kv') || m('attention.head_count'));
    // bytes per cached row: f16 2 per value, f32 4, q8_0 34 per block of 32 (ggml_row_size)
    const rowBytes = kv === 'q8_0' ? (nEmbdGqa / 32) * 34 : nEmbdGqa * (kv === 'f16' ? 2 : 4);
    assert.equal(o.summary.memory.kv, nCtx * m('block_count') * 2 * rowBytes);
    assert.equal(o.summary.memory.kv_bytes_per_token, m('block_count') * 2 * rowBytes);
    assert.equal(o.summary.memory.state, 0);
    // what a run on the reference device really allocates
    const device = await getDevice('reference');
    const model = loadModel(f, { device });
    const ctx = await Context.create(model, { nCtx, nBatch, kvType: kv, devices: [device] });
    assert.equal(o.summary.memory.kv, ctx.kvBytesPerToken * ctx.kvCapacity);
    assert.equal(o.summary.memory.arena, [...ctx.sched.arenaBytes().values()].reduce((a, b) => a + b, 0));
    assert.ok(model.weightBytes >= o.summary.memory.weights && model.weightBytes < o.summary.memory.weights + 64 * f.tensors.length);
    assert.equal(o.summary.memory.total, o.summary.memory.weights + o.summary.memory.kv + o.summary.memory.state + o.summary.memory.arena);
    ctx.close();
    f.source.close?.();
    // the fields inspect printed before the summary are all still there
    for (const k of ['file', 'version', 'size', 'alignment', 'data_offset', 'metadata', 'tensors']) assert.ok(k in o, k);
    const text = cli('inspect', fixture(name), '-c', String(nCtx), '-b', String(nBatch), '--kv-type', kv);
    assert.match(text.stdout, new RegExp(`^summary: .* parameters \\(${o.summary.params}\\)`, 'm'));
    assert.match(text.stdout, new RegExp(`^memory for a run at -c ${nCtx} -b ${Math.min(nBatch, nCtx)} --kv-type ${kv}: `, 'm'));
    assert.match(text.stdout, new RegExp(`KV cache .* \\(${o.summary.memory.kv_bytes_per_token} bytes/token\\)`));
  });
}

for (const name of ['parity/lfm2-q8_0.gguf', 'parity/qwen35-f32.gguf']) {
  test(`inspect ${name}: the recurrent state and the KV of its attention layers are what a Context allocates`, async () => {
    const r = cli('inspect', fixture(name), '--json', '-c', '200', '-b', '64');
    assert.equal(r.status, 0, r.stderr);
    const mem = JSON.parse(r.stdout).summary.memory;
    const f = openGguf(fixture(name));
    const device = await getDevice('reference');
    const model = loadModel(f, { device });
    const ctx = await Context.create(model, { nCtx: 200, nBatch: 64, devices: [device] });
    assert.ok(mem.state > 0, 'a recurrent model keeps state');
    assert.equal(mem.state, ctx.recurrentStateBytes);
    assert.equal(mem.kv_bytes_per_token, ctx.kvBytesPerToken);
    assert.equal(mem.kv, ctx.kvBytesPerToken * ctx.kvCapacity);
    assert.equal(mem.arena, [...ctx.sched.arenaBytes().values()].reduce((a, b) => a + b, 0));
    ctx.close();
    f.source.close?.();
  });
}

test('inspect a split model by its first shard: shards listed, the same summary; a model it cannot run says why', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-inspect-'));
  try {
    const f = openGguf(fixture('models/stories260K.gguf'));
    const shards = writeSplit(f, join(dir, 's'), { maxTensors: 20 });
    f.source.close?.();
    const a = JSON.parse(cli('inspect', fixture('models/stories260K.gguf'), '--json', '-c', '128').stdout);
    const b = JSON.parse(cli('inspect', shards[0]!.path, '--json', '-c', '128').stdout);
    assert.deepEqual(b.shards.map((s: { name: string; tensors: number }) => [s.name, s.tensors]), shards.map((s) => [s.path, s.tensors.length]));
    assert.deepEqual(b.summary, a.summary);
    const vocab = JSON.parse(cli('inspect', fixture('vocab/ggml-vocab-baichuan.gguf'), '--json').stdout);
    assert.equal(vocab.summary.memory, null);
    assert.match(vocab.summary.memory_error, /\[UNSUPPORTED_ARCH\]/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

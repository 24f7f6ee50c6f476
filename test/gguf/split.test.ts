// Split GGUF (llama.cpp's gguf-split layout): our writer's shards load as one model (first shard named),
// give the single file's tokens (llama.cpp's recorded greedy run), llama.cpp loads them too, and a
// missing, swapped or foreign shard is a typed error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openGguf } from '../../src/gguf/open.js';
import { GgufError } from '../../src/gguf/errors.js';
import { readTensorData } from '../../src/gguf/reader.js';
import { parseSplitName, planSplit, splitPath } from '../../src/gguf/split.js';
import { writeSplit } from '../../src/gguf/split-write.js';
import { writeGguf } from '../../src/gguf/writer.js';
import { toWriteInput } from '../../src/gguf/rewrite.js';
import { parseGgufSource } from '../../src/gguf/reader.js';
import { fileSource } from '../../src/gguf/file-source.js';
import { loadModel } from '../../src/api/index.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';
import { llamaGreedy } from '../helpers/llamacpp.js';
import { needPeers } from '../helpers/peers.js';

const bin = resolve(repoRoot, 'bin/gguf-edge.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8'));
const stories = greedy.cases.find((c: { model: string; prompt: string }) => c.model === 'stories260K.gguf' && c.prompt === 'Once upon a time');

function withDir(fn: (dir: string) => void | Promise<void>) {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-split-'));
    try { await fn(dir); } finally { rmSync(dir, { recursive: true, force: true }); }
  };
}

/** one shard on its own (openGguf would merge it or refuse a later shard) */
const openGgufShard = (path: string) => { const f = parseGgufSource(fileSource(path)); f.source.close?.(); return f; };

const code = (fn: () => unknown): string => {
  try { fn(); } catch (e) { assert.ok(e instanceof GgufError, String(e)); return e.code; }
  assert.fail('no error');
};

test('shard names: %s-%05d-of-%05d.gguf, split.no 0-based', () => {
  assert.equal(splitPath('/m/model', 0, 3), '/m/model-00001-of-00003.gguf');
  assert.deepEqual(parseSplitName('/m/model-00002-of-00003.gguf'), { prefix: '/m/model', index: 2, count: 3 });
  assert.equal(parseSplitName('/m/model.gguf'), undefined);
});

test('planSplit follows gguf-split: every N tensors, or by 32-padded size, never an empty shard', () => {
  const t = (n: number) => ({ nBytes: n });
  assert.deepEqual(planSplit([t(1), t(1), t(1), t(1), t(1)], { maxTensors: 2 }), [[0, 1], [2, 3], [4]]);
  assert.deepEqual(planSplit([t(40), t(20), t(10), t(100)], { maxBytes: 96 }), [[0, 1], [2], [3]]);
  assert.deepEqual(planSplit([t(1), t(1)], { maxTensors: 1, noTensorFirstSplit: true }), [[], [0], [1]]);
});

test('stories260K split into 3 shards by our writer: same tensors, same metadata, read straight into the destination', withDir((dir) => {
  const single = openGguf(fixture('models/stories260K.gguf'));
  const shards = writeSplit(single, join(dir, 'stories'), { maxTensors: 16 });
  assert.deepEqual(shards.map((s) => s.path), [1, 2, 3].map((i) => join(dir, `stories-0000${i}-of-00003.gguf`)));
  const merged = openGguf(shards[0]!.path);
  assert.equal(merged.shards?.length, 3);
  assert.equal(merged.metadata.get('split.count'), 3);
  assert.equal(merged.metadata.get('split.tensors.count'), 48);
  for (const [k, v] of single.metadata) assert.deepEqual(merged.metadata.get(k), v, k);
  assert.deepEqual(merged.tensors.map((t) => t.name), single.tensors.map((t) => t.name));
  for (const t of single.tensors) {
    const dest = new Uint8Array(t.nBytes + 8);
    const got = readTensorData(merged, merged.tensorsByName.get(t.name)!, dest, 8);
    assert.equal(got.buffer, dest.buffer, 'no intermediate copy');
    assert.deepEqual(got, readTensorData(single, t), t.name);
  }
  merged.source.close?.();
  single.source.close?.();
}));

test('a 64-aligned model splits into 64-aligned shards (general.alignment in each) that read back the same', withDir((dir) => {
  const src = openGguf(fixture('models/stories260K.gguf'));
  const input = toWriteInput(src);
  input.metadata.push(['general.alignment', { type: 'u32', value: 64 }]);
  writeFileSync(join(dir, 'a64.gguf'), writeGguf(input));
  const single = openGguf(join(dir, 'a64.gguf'));
  const shards = writeSplit(single, join(dir, 'a64'), { maxTensors: 20 });
  const merged = openGguf(shards[0]!.path);
  for (const s of merged.shards!) assert.equal(openGgufShard(s.name).alignment, 64, s.name);
  for (const t of single.tensors) assert.deepEqual(readTensorData(merged, t.name), readTensorData(single, t), t.name);
  for (const f of [merged, single, src]) f.source.close?.();
}));

test('gguf-edge split, then run on the first shard: llama.cpp\'s greedy tokens, as the single file gives', withDir((dir) => {
  const split = cli('split', '--split-max-tensors', '16', fixture('models/stories260K.gguf'), join(dir, 'stories.gguf'));
  assert.equal(split.status, 0, split.stderr);
  assert.equal(split.stdout.trim().split('\n').length, 3);
  const first = join(dir, 'stories-00001-of-00003.gguf');
  const args = ['-p', 'Once upon a time', '-n', '32', '--temp', '0', '--json'];
  const a = cli('run', first, ...args);
  assert.equal(a.status, 0, a.stderr);
  const b = cli('run', fixture('models/stories260K.gguf'), ...args);
  assert.deepEqual(JSON.parse(a.stdout).tokens, stories.default.generated_ids);
  assert.deepEqual(JSON.parse(a.stdout).tokens, JSON.parse(b.stdout).tokens);
  // --merge gives back a loadable single file with the same tokens
  const merged = join(dir, 'merged.gguf');
  const m = cli('split', '--merge', first, merged);
  assert.equal(m.status, 0, m.stderr);
  assert.equal(openGguf(merged).metadata.has('split.count'), false);
  assert.deepEqual(JSON.parse(cli('run', merged, ...args).stdout).tokens, stories.default.generated_ids);
}));

test('the library (loadModel) takes a split model by its first shard (a path or an http URL); from bytes it says what is missing', withDir(async (dir) => {
  const single = openGguf(fixture('models/stories260K.gguf'));
  const shards = writeSplit(single, join(dir, 'stories'), { maxTensors: 16 });
  single.source.close?.();
  const model = await loadModel(shards[0]!.path, { device: 'reference' });
  try {
    const ctx = await model.createContext({ ctx: 128 });
    const r = await ctx.generate('Once upon a time', { maxTokens: 32, temperature: 0 }).result;
    assert.deepEqual(r.tokens, stories.default.generated_ids);
  } finally {
    await model.close();
  }
  await assert.rejects(loadModel(new Uint8Array(readFileSync(shards[0]!.path))), (e: GgufError) => e.code === 'SPLIT_MISSING_SHARD');
  // over http (the browser's way): the other shards are fetched from beside the first
  const { createServer } = await import('node:http');
  const server = createServer((req, res) => {
    const p = join(dir, decodeURIComponent(new URL(req.url!, 'http://x').pathname.replace(/^\/models\//, '')));
    if (!/stories-0000\d-of-00003\.gguf$/.test(p)) { res.writeHead(404); return res.end(); }
    try { const b = readFileSync(p); res.writeHead(200, { 'Content-Length': b.length }); res.end(b); } catch { res.writeHead(404); res.end(); }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  try {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}/models/`;
    const remote = await loadModel(`${base}stories-00001-of-00003.gguf`, { device: 'reference' });
    try {
      const ctx = await remote.createContext({ ctx: 128 });
      assert.deepEqual((await ctx.generate('Once upon a time', { maxTokens: 32, temperature: 0 }).result).tokens, stories.default.generated_ids);
    } finally {
      await remote.close();
    }
    unlinkSync(shards[2]!.path);
    await assert.rejects(loadModel(`${base}stories-00001-of-00003.gguf`), (e: GgufError) => e.code === 'SPLIT_MISSING_SHARD' && /stories-00003-of-00003\.gguf/.test(e.message));
  } finally {
    server.closeAllConnections();
    server.close();
  }
}));

test('split by size (--split-max-size) and --dry-run', withDir((dir) => {
  const dry = cli('split', '--split-max-size', '400K', '--dry-run', fixture('models/stories260K.gguf'), join(dir, 's'));
  assert.equal(dry.status, 0, dry.stderr);
  const n = Number(/^n_split: (\d+)\n/.exec(dry.stdout)?.[1]);
  assert.ok(n >= 3, dry.stdout);
  const r = cli('split', '--split-max-size', '400K', fixture('models/stories260K.gguf'), join(dir, 's'));
  assert.equal(r.status, 0, r.stderr);
  const f = openGguf(join(dir, `s-00001-of-0000${n}.gguf`));
  assert.equal(f.shards!.length, n);
  f.shards!.forEach((s, i) => {
    const data = f.tensors.filter((t) => t.shard === i).reduce((a, t) => a + Math.ceil(t.nBytes / 32) * 32, 0);
    assert.ok(data <= 400e3, `${s.name}: ${data} bytes of tensor data`);
  });
  f.source.close?.();
  const bad = cli('split', '--split-max-size', '12X', fixture('models/stories260K.gguf'), join(dir, 'x'));
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /\[USAGE\] --split-max-size/);
}));

test('a missing, swapped or foreign shard, or a shard other than the first, is a typed error', withDir((dir) => {
  const single = openGguf(fixture('models/stories260K.gguf'));
  const p = (i: number, pre = 'a') => join(dir, `${pre}-0000${i}-of-00003.gguf`);
  writeSplit(single, join(dir, 'a'), { maxTensors: 16 });
  writeSplit(single, join(dir, 'b'), { maxTensors: 20 }); // 3 shards too, other tensors in each
  // naming the second shard
  assert.equal(code(() => openGguf(p(2))), 'SPLIT_NOT_FIRST');
  // shard 3 of another split: same split.no and count, but the tensors do not add up to split.tensors.count
  copyFileSync(p(3, 'b'), p(3));
  let err: GgufError | undefined;
  try { openGguf(p(1)); } catch (e) { err = e as GgufError; }
  assert.equal(err?.code, 'SPLIT_MISMATCH');
  assert.equal(err?.detail?.key, 'split.tensors.count');
  // shards 2 and 3 swapped
  writeSplit(single, join(dir, 'a'), { maxTensors: 16 });
  renameSync(p(2), join(dir, 'tmp'));
  renameSync(p(3), p(2));
  renameSync(join(dir, 'tmp'), p(3));
  try { openGguf(p(1)); } catch (e) { err = e as GgufError; }
  assert.equal(err?.code, 'SPLIT_MISMATCH');
  assert.equal(err?.detail?.key, 'split.no');
  // a missing shard
  writeSplit(single, join(dir, 'a'), { maxTensors: 16 });
  unlinkSync(p(2));
  try { openGguf(p(1)); } catch (e) { err = e as GgufError; }
  assert.equal(err?.code, 'SPLIT_MISSING_SHARD');
  assert.match(err!.message, /a-00002-of-00003\.gguf/);
  const r = cli('run', p(1), '-p', 'x', '-n', '1');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /\[SPLIT_MISSING_SHARD\] .*a-00002-of-00003\.gguf/);
  // a first shard renamed so its siblings cannot be found
  copyFileSync(p(1), join(dir, 'renamed.gguf'));
  assert.equal(code(() => openGguf(join(dir, 'renamed.gguf'))), 'SPLIT_BAD_NAME');
  single.source.close?.();
}));

test('llama.cpp loads our shards (first shard named) and generates what it generates on the single file', async (t) => {
  if (!needPeers(t, 'node-llama-cpp')) return;
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-split-llama-'));
  try {
    const single = openGguf(fixture('models/stories260K.gguf'));
    const shards = writeSplit(single, join(dir, 'stories'), { maxTensors: 16 });
    single.source.close?.();
    assert.equal(shards.length, 3);
    const a = await llamaGreedy(fixture('models/stories260K.gguf'), 'Once upon a time', 24);
    const b = await llamaGreedy(shards[0]!.path, 'Once upon a time', 24);
    assert.equal(a.ids.length, 24);
    assert.deepEqual(b.ids, a.ids);
    // shards of a 64-aligned file, each carrying general.alignment, by size
    const input = toWriteInput(openGguf(fixture('models/stories260K.gguf')));
    input.metadata.push(['general.alignment', { type: 'u32', value: 64 }]);
    writeFileSync(join(dir, 'a64.gguf'), writeGguf(input));
    const a64 = openGguf(join(dir, 'a64.gguf'));
    const shards64 = writeSplit(a64, join(dir, 'a64'), { maxBytes: 500_000 });
    a64.source.close?.();
    assert.ok(shards64.length >= 3);
    assert.deepEqual((await llamaGreedy(shards64[0]!.path, 'Once upon a time', 24)).ids, a.ids);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The library examples (examples/library/*.mjs) run as a user runs them, importing 'gguf-edge' by name; their
// output is checked against llama.cpp's recorded greedy text and against `gguf-edge run` (itself proven equal
// to llama.cpp in test/cli).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadModel } from '../../src/api/index.js';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const STORIES = fixture('models/stories260K.gguf');
const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8')) as { cases: { model: string; prompt: string; default: { generated_ids: number[]; generated_text: string } }[] };
const ref = greedy.cases.find((c) => c.model === 'stories260K.gguf' && c.prompt === 'Once upon a time')!.default;

const example = (name: string, ...args: string[]) => {
  const r = spawnSync(process.execPath, [resolve(repoRoot, 'examples/library', name), ...args], { encoding: 'utf8', cwd: repoRoot });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};
const run = (...args: string[]) => {
  const r = spawnSync(process.execPath, [resolve(repoRoot, 'bin/gguf-edge.js'), 'run', STORIES, '--temp', '0', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
};

test('examples/library/generate.mjs prints llama.cpp\'s greedy text, as `gguf-edge run --temp 0` does', () => {
  const out = example('generate.mjs', STORIES);
  assert.ok(ref.generated_text.startsWith(out.slice(0, -1)) && out.length > 40, out);
  assert.equal('Once upon a time' + out, run('-p', 'Once upon a time', '-n', '16'));
});

test('examples/library/stream.mjs stops before its stop string and reports usage', async () => {
  const [text, json] = example('stream.mjs', STORIES).split('\n');
  assert.equal(text, ref.generated_text.slice(0, ref.generated_text.indexOf('park')));
  const r = JSON.parse(json!) as { finishReason: string; stoppedBy: string; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number }; tokens: number };
  // the token that completed "park" is the last one sampled
  const model = await loadModel(STORIES);
  let n = 0;
  while (!model.detokenize(ref.generated_ids.slice(0, n)).includes('park')) n++;
  await model.close();
  assert.deepEqual(r, { finishReason: 'stop', stoppedBy: 'stop-string', usage: { prompt_tokens: 5, completion_tokens: n, total_tokens: 5 + n }, tokens: n });
});

test('examples/library/chat.mjs: every reply is `gguf-edge run` on the whole rendered conversation', async () => {
  const model = await loadModel(STORIES);
  try {
    const lines = example('chat.mjs', STORIES).trimEnd().split('\n');
    const conv = JSON.parse(lines[lines.length - 1]!) as { role: string; content: string }[];
    assert.deepEqual(conv.map((m) => m.role), ['system', 'user', 'assistant', 'user', 'assistant']);
    for (const k of [2, 4]) {
      const prompt = model.tokenize(model.applyChatTemplate(conv.slice(0, k)), { parseSpecial: true });
      const expected = (JSON.parse(run('--prompt-tokens', prompt.join(','), '-n', '24', '--json')) as { text: string }).text;
      assert.equal(conv[k]!.content, expected, `reply ${k / 2}`);
      assert.equal(lines[k / 2 - 1], expected);
    }
  } finally {
    await model.close();
  }
});

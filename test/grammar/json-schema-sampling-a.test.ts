// JSON Schema corpus, first half: 20 seeded temperature-1 generations per schema validate (see sampling-helper.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { corpus } from './schema-corpus.js';
import { sampleCorpus } from './sampling-helper.js';

test('JSON Schema corpus (even entries): every sampled generation is valid JSON that ajv validates', async () => {
  const cases = corpus.filter((_, i) => i % 2 === 0);
  const r = await sampleCorpus(cases);
  assert.ok(r.masks > 0 && r.checks > r.masks, `the fast path and the full mask both ran (${r.checks} checks, ${r.masks} masks)`);
});

// Shared fixture paths for tokenizer tests. Fixtures are read from ../shared/fixtures (relative to the repo root).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/test/tokenizer/fixtures.js -> repo root is three levels up
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const FIXTURES = process.env.GGUF_EDGE_FIXTURES ?? resolve(REPO_ROOT, '..', 'shared', 'fixtures');
export const VOCAB_DIR = join(FIXTURES, 'vocab');
export const MODELS_DIR = join(FIXTURES, 'models');

/** Read a fixture file, failing loudly when it is missing. */
export function fixturePath(...parts: string[]): string {
  const p = join(FIXTURES, ...parts);
  if (!existsSync(p)) throw new Error(`missing test fixture: ${p}`);
  return p;
}

export const SEPARATOR = '\n__ggml_vocab_test__\n';

/** Inputs of a .inp file (split as llama.cpp's test-tokenizer-0 does) and expected ids from the .out file. */
export function readVectors(base: string): { inputs: string[]; expected: number[][] } {
  const inp = readFileSync(fixturePath('vocab', `${base}.inp`), 'utf8');
  const out = readFileSync(fixturePath('vocab', `${base}.out`), 'utf8');
  const inputs = inp.split(SEPARATOR);
  if (inputs[inputs.length - 1] === '') inputs.pop();
  const lines = out.split('\n');
  const expected = inputs.map((_, i) => {
    const line = (lines[i] ?? '').trim();
    return line === '' ? [] : line.split(/\s+/).map(Number);
  });
  return { inputs, expected };
}

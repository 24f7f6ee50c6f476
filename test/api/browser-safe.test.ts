// The package entries must not pull a Node module statically (a browser bundle of them would fail): walk
// the static import graph of the compiled entries and list every bare specifier it reaches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, resolve } from 'node:path';
import { repoRoot } from '../helpers/fixtures.js';

// static forms only: `import x from '...'`, `import '...'`, `export ... from '...'` (not `import('...')`)
const STATIC = /(?:^|[;\n])\s*(?:import|export)\s+(?:[^'"();]*?\s+from\s+)?['"]([^'"]+)['"]/g;

function staticGraph(entry: string): { files: Set<string>; bare: Set<string> } {
  const files = new Set<string>();
  const bare = new Set<string>();
  const visit = (f: string) => {
    if (files.has(f)) return;
    files.add(f);
    const src = readFileSync(f, 'utf8');
    for (const m of src.matchAll(STATIC)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(resolve(dirname(f), spec));
      else bare.add(spec);
    }
  };
  visit(entry);
  return { files, bare };
}

test('the package entries import no Node module statically', () => {
  const pkg = JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, { import?: string } | string> };
  const node = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
  for (const [sub, e] of Object.entries(pkg.exports)) {
    if (typeof e === 'string') continue;
    const { files, bare } = staticGraph(resolve(repoRoot, e.import!));
    assert.ok(files.size > 20, `${sub}: only ${files.size} files reached (the walker is broken)`);
    const nodeOnly = [...bare].filter((b) => node.has(b) || b.startsWith('node:'));
    assert.deepEqual(nodeOnly, [], `${sub} reaches ${nodeOnly.join(', ')} statically`);
    assert.deepEqual([...bare].filter((b) => !b.startsWith('@huggingface/jinja')), [], `${sub}: only the declared runtime dependency`);
  }
  // the walker does see a static Node import where there is one
  assert.ok(staticGraph(resolve(repoRoot, 'dist/src/gguf/open.js')).bare.has('node:fs'));
});

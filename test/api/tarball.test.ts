// The package as an application gets it: `npm pack`, `npm i gguf-edge-x.y.z.tgz` into a fresh folder (no
// network unless the npm cache lacks the one runtime dependency), then issue #11's example, verbatim,
// beside a link to the fixture. Its greedy text must be llama.cpp's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixture, repoRoot } from '../helpers/fixtures.js';

const EXAMPLE = `import { loadModel } from 'gguf-edge';
const model = await loadModel('stories260K.gguf');
const ctx = await model.createContext({ ctx: 256 });
for await (const { token, text } of ctx.generate('Once upon a time', { maxTokens: 16, temperature: 0 }))
  process.stdout.write(text);
await model.close();
`;

const npm = (cwd: string, ...args: string[]) => {
  const r = spawnSync('npm', args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_update_notifier: 'false' } });
  assert.equal(r.status, 0, `npm ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
};

test('the packed tarball installs into a fresh folder and runs the library example (llama.cpp\'s greedy text)', () => {
  const greedy = JSON.parse(readFileSync(fixture('reference/greedy-llama.cpp.json'), 'utf8')) as { cases: { model: string; prompt: string; default: { generated_text: string } }[] };
  const ref = greedy.cases.find((c) => c.model === 'stories260K.gguf' && c.prompt === 'Once upon a time')!.default.generated_text;
  const dir = mkdtempSync(join(tmpdir(), 'gguf-edge-app-'));
  try {
    // dist/ is built already (npm test builds first): pack without running `prepare` again
    npm(repoRoot, 'pack', '--ignore-scripts', '--pack-destination', dir);
    const tgz = readdirSync(dir).find((f) => /^gguf-edge-\d+\.\d+\.\d+\.tgz$/.test(f));
    assert.ok(tgz, readdirSync(dir).join(', '));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    npm(dir, 'install', `./${tgz}`, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts');
    const installed = JSON.parse(readFileSync(join(dir, 'node_modules/gguf-edge/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.deepEqual(Object.keys(installed.dependencies), ['@huggingface/jinja']);
    symlinkSync(fixture('models/stories260K.gguf'), join(dir, 'stories260K.gguf'));
    writeFileSync(join(dir, 'app.mjs'), EXAMPLE);
    const r = spawnSync(process.execPath, ['app.mjs'], { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.length > 40 && ref.startsWith(r.stdout), `${JSON.stringify(r.stdout)} is not a prefix of llama.cpp's ${JSON.stringify(ref)}`);
    // exactly the CLI's 16 greedy tokens
    const cli = spawnSync(process.execPath, [join(repoRoot, 'bin/gguf-edge.js'), 'run', fixture('models/stories260K.gguf'), '-p', 'Once upon a time', '-n', '16', '--temp', '0'], { encoding: 'utf8' });
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal('Once upon a time' + r.stdout + '\n', cli.stdout);
    // the types resolve for TypeScript users
    assert.ok(readFileSync(join(dir, 'node_modules/gguf-edge/dist/src/api/index.d.ts'), 'utf8').includes('loadModel'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

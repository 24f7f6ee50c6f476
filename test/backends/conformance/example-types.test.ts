// The example plug-in is plain JavaScript typed by JSDoc against the contract (src/backends/backend.ts):
// the compiler checks it in strict mode, so a change to the contract that the example does not follow
// fails here rather than in a user's plug-in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { repoRoot } from '../../helpers/fixtures.js';

test('examples/device-plugin/host-f32.js type-checks against the device contract (tsc --checkJs --strict)', () => {
  const tsc = resolve(repoRoot, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '--ignoreConfig', '--noEmit', '--allowJs', '--checkJs', '--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext',
    '--target', 'ES2022', '--types', 'node', '--skipLibCheck', 'examples/device-plugin/host-f32.js'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

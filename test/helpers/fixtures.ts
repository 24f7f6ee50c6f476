// Paths to the shared fixtures. A missing fixture fails the test loudly (never a skip).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

// dist/test/helpers -> repo root is three levels up; shared/ sits beside the repo.
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const fixturesDir = process.env.GGUF_EDGE_FIXTURES ?? resolve(repoRoot, '../shared/fixtures');

export function fixture(rel: string): string {
  const p = resolve(fixturesDir, rel);
  if (!existsSync(p)) throw new Error(`missing fixture ${p}: the tests need ../shared/fixtures (set GGUF_EDGE_FIXTURES to point elsewhere)`);
  return p;
}
export { repoRoot };

// Tests that compare against the optional peer setup (bench/peers.ts): in CI (CI set, .ci/run installs the
// setup) a missing peer fails the test; elsewhere the test is skipped at run time with a message saying what
// is missing and how to install it (never a silent pass).
import type { TestContext } from 'node:test';
import { PEERS_HINT, peerInstalled } from '../../bench/peers.js';

export const inCi = (): boolean => !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';

/** true when every named peer package is installed; otherwise fails (CI) or skips `t` with the reason. */
export function needPeers(t: TestContext, ...names: string[]): boolean {
  const missing = names.filter((n) => !peerInstalled(n));
  if (missing.length === 0) return true;
  const msg = `${missing.join(', ')} missing: ${PEERS_HINT}`;
  if (inCi()) throw new Error(`CI runs the peer comparisons: ${msg}`);
  t.skip(msg);
  return false;
}

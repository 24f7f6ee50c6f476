// The optional peer setup (peers/package.json): llama.cpp through node-llama-cpp's prebuilt binaries for
// bench:compare, bench:memory and the llama.cpp tests, and the Hugging Face tokenizer packages the tokenizer
// comparisons read. `npm run setup:peers` installs it into peers/node_modules; a plain `npm ci` does not
// (1.3 GB of CUDA/Vulkan/tokenizer files, and a prebuilt binary that exists for some platforms only).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// dist/bench/peers.js -> the repository root is two levels up
export const PEERS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'peers');
export const PEERS_HINT = 'the optional peer setup is not installed: run `npm run setup:peers` (installs peers/package.json into peers/node_modules)';

export class PeerMissingError extends Error {
  readonly code = 'PEER_MISSING';
}

export function peerInstalled(name: string): boolean {
  return existsSync(join(PEERS_DIR, 'node_modules', name, 'package.json'));
}

function check(name: string): void {
  if (!peerInstalled(name)) throw new PeerMissingError(`${name} is missing: ${PEERS_HINT}`);
}

/** A file inside an installed peer package. */
export function peerPath(name: string, ...rel: string[]): string {
  check(name);
  return join(PEERS_DIR, 'node_modules', name, ...rel);
}

/** The ES module of a peer package. */
export async function importPeer<T>(name: string): Promise<T> {
  check(name);
  const { importPeer: load } = (await import(pathToFileURL(join(PEERS_DIR, 'load.mjs')).href)) as { importPeer(n: string): Promise<T> };
  return load(name);
}

/** A CommonJS peer package. */
export function requirePeer<T>(name: string): T {
  check(name);
  return createRequire(join(PEERS_DIR, 'package.json'))(name) as T;
}

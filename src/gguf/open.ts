// Node entry point: open a GGUF file from a path. A split model (gguf-split's PREFIX-00001-of-0000N.gguf)
// is opened by naming its first shard: the other shards are found beside it by name and merged
// (src/gguf/split.ts), so callers see one file whichever way the model is stored.
import { existsSync } from 'node:fs';
import { fileSource } from './file-source.js';
import { GgufError } from './errors.js';
import { parseGgufSource, type GgufFile } from './reader.js';
import { SPLIT_COUNT, checkFirstShard, mergeShards, splitCount, splitPath, splitPrefix } from './split.js';

function openOne(path: string): GgufFile {
  const src = fileSource(path);
  try {
    return parseGgufSource(src);
  } catch (e) {
    src.close?.();
    throw e;
  }
}

/** The paths of every shard of the split model whose first shard is `path` (just [path] for a single file). */
export function shardPaths(path: string, count: number, first?: GgufFile): string[] {
  if (count <= 1) return [path];
  const prefix = splitPrefix(path, 0, count);
  if (prefix === undefined) {
    throw new GgufError('SPLIT_BAD_NAME', `a split model (${SPLIT_COUNT} = ${count}) must be named like ${splitPath('PREFIX', 0, count)} to find its other shards`, path,
      first?.metaEntries.get(SPLIT_COUNT)?.offset, { key: SPLIT_COUNT, expected: splitPath('PREFIX', 0, count), found: path });
  }
  return Array.from({ length: count }, (_, i) => splitPath(prefix, i, count));
}

/**
 * `first` (already parsed from `path`) with the rest of its split model merged in; `first` itself when it is
 * a single file. On failure the shards opened here are closed, `first` is left to the caller.
 */
export function withShards(first: GgufFile, path: string): GgufFile {
  const count = splitCount(first);
  if (count <= 1) return first;
  checkFirstShard(first, count); // before looking for siblings
  const paths = shardPaths(path, count, first);
  const opened: GgufFile[] = [];
  try {
    for (const [i, p] of paths.entries()) {
      if (i === 0) continue;
      if (!existsSync(p)) throw new GgufError('SPLIT_MISSING_SHARD', `shard ${i + 1} of ${count} is missing: ${p}`, path, undefined, { key: 'split.no', expected: p, found: 'no such file' });
      opened.push(openOne(p));
    }
    return mergeShards([first, ...opened]);
  } catch (e) {
    for (const f of opened) f.source.close?.();
    throw e;
  }
}

export function openGguf(path: string): GgufFile {
  const first = openOne(path);
  try {
    return withShards(first, path);
  } catch (e) {
    first.source.close?.();
    throw e;
  }
}

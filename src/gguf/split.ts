// Split GGUF (llama.cpp's gguf-split): a model stored as N shards `PREFIX-00001-of-0000N.gguf`. Every shard
// carries `split.no` (u16, 0-based), `split.count` (u16) and `split.tensors.count` (i32, the tensors of all
// shards together); the first shard also holds the whole KV metadata, the others only those three keys.
// Each shard is a complete GGUF file whose tensor offsets are relative to its own data section.
//
// mergeShards joins parsed shards into one GgufFile over a source that lays the shards end to end, so a
// tensor's fileOffset addresses its own shard and readTensorData still reads straight into the destination
// (no second copy). planSplit decides which tensors go in which shard, as gguf-split does.
import { GgufError } from './errors.js';
import { metaNumber, type GgufFile, type GgufTensorInfo } from './reader.js';
import type { ByteSource } from './source.js';

export const SPLIT_NO = 'split.no';
export const SPLIT_COUNT = 'split.count';
export const SPLIT_TENSORS_COUNT = 'split.tensors.count';
/** gguf-split pads every tensor to this in its size plan (GGUF_DEFAULT_ALIGNMENT) */
const PLAN_ALIGNMENT = 32;

const pad5 = (n: number) => String(n).padStart(5, '0');

/** The file name of shard `splitNo` (0-based) of `count`: llama.cpp's `%s-%05d-of-%05d.gguf` with splitNo + 1. */
export function splitPath(prefix: string, splitNo: number, count: number): string {
  return `${prefix}-${pad5(splitNo + 1)}-of-${pad5(count)}.gguf`;
}

/** The prefix of a shard's path when it ends as shard `splitNo` of `count` should; undefined otherwise. */
export function splitPrefix(path: string, splitNo: number, count: number): string | undefined {
  const tail = `-${pad5(splitNo + 1)}-of-${pad5(count)}.gguf`;
  return path.endsWith(tail) ? path.slice(0, -tail.length) : undefined;
}

/** {prefix, index (1-based), count} of a name like `model-00002-of-00003.gguf`; undefined for a single file. */
export function parseSplitName(path: string): { prefix: string; index: number; count: number } | undefined {
  const m = /^(.+)-(\d{5})-of-(\d{5})\.gguf$/i.exec(path);
  if (!m) return undefined;
  return { prefix: m[1]!, index: Number(m[2]), count: Number(m[3]) };
}

/** split.count of a parsed file (1 when the key is absent: a single file). */
export function splitCount(f: GgufFile): number {
  const n = metaNumber(f, SPLIT_COUNT);
  if (n === undefined) return 1;
  if (!Number.isInteger(n) || n < 0 || n > 0xffff) throw splitError(f, SPLIT_COUNT, 'a u16', String(n));
  return Math.max(1, n);
}

function splitError(f: GgufFile, key: string, expected: string, found: string): GgufError {
  return new GgufError('SPLIT_MISMATCH', `shard metadata ${key} is ${found}, expected ${expected}`, f.name, f.metaEntries.get(key)?.offset, { key, expected, found });
}

/** Throws unless `f` (a shard of a `count`-way split) is the first shard, as llama.cpp requires. */
export function checkFirstShard(f: GgufFile, count: number): void {
  const no = metaNumber(f, SPLIT_NO);
  if (no === undefined) throw new GgufError('SPLIT_MISMATCH', `split model (${SPLIT_COUNT} = ${count}) without ${SPLIT_NO}`, f.name, undefined, { key: SPLIT_NO, expected: '0', found: 'absent' });
  if (no !== 0) throw new GgufError('SPLIT_NOT_FIRST', `this is shard ${no + 1} of ${count} (${SPLIT_NO} = ${no}): load the model by naming its first shard`, f.name, f.metaEntries.get(SPLIT_NO)?.offset, { key: SPLIT_NO, expected: '0', found: String(no) });
}

/** One shard of a merged file: where it sits in the combined address space. */
export interface GgufShard {
  name: string;
  size: number;
  /** offset of this shard's first byte in the merged source */
  base: number;
  dataOffset: number;
  nTensors: number;
}

/** A source reading shard after shard as one address space (a read never spans shards for a tensor). */
function concatSource(parts: ByteSource[], name: string): ByteSource {
  const bases: number[] = [];
  let size = 0;
  for (const p of parts) { bases.push(size); size += p.size; }
  return {
    size,
    name,
    read(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > size) throw new RangeError(`read of ${length} bytes at ${offset} past end ${size}`);
      const out = dest ?? new Uint8Array(length);
      let done = 0;
      let i = bases.length - 1;
      while (i > 0 && bases[i]! > offset) i--;
      while (done < length) {
        const local = offset + done - bases[i]!;
        const n = Math.min(length - done, parts[i]!.size - local);
        parts[i]!.read(local, n, out, destOffset + done);
        done += n;
        i++;
      }
      return out;
    },
    // streaming shards (http(s) URLs) stream each part's tensors in turn
    readAsync: parts.every((p) => p.readAsync) ? async (offset, length, dest, destOffset = 0) => {
      let done = 0;
      let i = bases.length - 1;
      while (i > 0 && bases[i]! > offset) i--;
      while (done < length) {
        const local = offset + done - bases[i]!;
        const n = Math.min(length - done, parts[i]!.size - local);
        await parts[i]!.readAsync!(local, n, dest, destOffset + done);
        done += n;
        i++;
      }
    } : undefined,
    close() { for (const p of parts) p.close?.(); },
  };
}

/**
 * Joins shards (in order, the first one first) into one file: the first shard's metadata and every shard's
 * tensors. Checks what llama.cpp's loader checks: the first is split 0, each shard's split.no is its
 * position, every shard agrees on split.count, no tensor appears twice, and the tensors add up to
 * split.tensors.count.
 */
export function mergeShards(shards: GgufFile[]): GgufFile & { shards: GgufShard[] } {
  const first = shards[0];
  if (!first) throw new Error('mergeShards: no shards');
  const count = splitCount(first);
  if (count > 1) checkFirstShard(first, count);
  if (count !== shards.length) throw splitError(first, SPLIT_COUNT, `${shards.length} (the shards given)`, String(count));
  const tensors: GgufTensorInfo[] = [];
  const tensorsByName = new Map<string, GgufTensorInfo>();
  const info: GgufShard[] = [];
  let base = 0;
  shards.forEach((s, i) => {
    const no = metaNumber(s, SPLIT_NO);
    if (count > 1 || no !== undefined) {
      if (no === undefined) throw new GgufError('SPLIT_MISMATCH', `shard ${i + 1} of ${count} has no ${SPLIT_NO}`, s.name, undefined, { key: SPLIT_NO, expected: String(i), found: 'absent' });
      if (no !== i) throw splitError(s, SPLIT_NO, String(i), String(no));
      if (i > 0 && splitCount(s) !== count) throw splitError(s, SPLIT_COUNT, String(count), String(splitCount(s)));
    }
    for (const t of s.tensors) {
      if (tensorsByName.has(t.name)) throw new GgufError('DUPLICATE_TENSOR', `tensor "${t.name}" is in more than one shard`, s.name, t.fileOffset, { tensor: t.name });
      const merged: GgufTensorInfo = { ...t, fileOffset: t.fileOffset + base, shard: i };
      tensors.push(merged);
      tensorsByName.set(t.name, merged);
    }
    info.push({ name: s.name, size: s.size, base, dataOffset: s.dataOffset, nTensors: s.tensors.length });
    base += s.size;
  });
  if (count > 1) {
    const want = metaNumber(first, SPLIT_TENSORS_COUNT);
    if (want === undefined) throw new GgufError('SPLIT_MISMATCH', `split model without ${SPLIT_TENSORS_COUNT}`, first.name, undefined, { key: SPLIT_TENSORS_COUNT, expected: String(tensors.length), found: 'absent' });
    if (want !== tensors.length) throw splitError(first, SPLIT_TENSORS_COUNT, `${tensors.length} (the tensors of all ${count} shards)`, String(want));
  }
  const source = concatSource(shards.map((s) => s.source), first.name);
  return { ...first, size: base, tensors, tensorsByName, source, shards: info };
}

export interface SplitOptions {
  /** at most this many tensors per shard (gguf-split --split-max-tensors; its default is 128) */
  maxTensors?: number;
  /** at most this many tensor bytes per shard, each tensor padded to 32 (gguf-split --split-max-size) */
  maxBytes?: number;
  /** the first shard holds the metadata only (gguf-split --no-tensor-first-split) */
  noTensorFirstSplit?: boolean;
}

/** Which tensors (indices into file.tensors, in file order) go in each shard; the rule is gguf-split's. */
export function planSplit(tensors: readonly { nBytes: number }[], opts: SplitOptions): number[][] {
  if (opts.maxBytes !== undefined && opts.maxTensors !== undefined) throw new Error('planSplit: give maxTensors or maxBytes, not both');
  const maxTensors = opts.maxTensors ?? 128;
  if (opts.maxBytes === undefined && !(Number.isInteger(maxTensors) && maxTensors >= 1)) throw new Error(`planSplit: maxTensors must be a positive integer, got ${maxTensors}`);
  if (opts.maxBytes !== undefined && !(opts.maxBytes > 0)) throw new Error(`planSplit: maxBytes must be positive, got ${opts.maxBytes}`);
  const shards: number[][] = [[]];
  if (opts.noTensorFirstSplit) shards.push([]);
  let bytes = 0;
  tensors.forEach((t, i) => {
    const n = Math.ceil(t.nBytes / PLAN_ALIGNMENT) * PLAN_ALIGNMENT;
    const split = opts.maxBytes !== undefined ? bytes + n > opts.maxBytes : i > 0 && i % maxTensors === 0;
    const cur = shards[shards.length - 1]!;
    // a shard never ends up empty: a tensor larger than the limit gets a shard of its own
    if (split && cur.length > 0) { shards.push([i]); bytes = n; } else { cur.push(i); bytes += n; }
  });
  return shards;
}

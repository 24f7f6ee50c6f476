// Node-only: write a GGUF file as gguf-split shards (PREFIX-00001-of-0000N.gguf ...). Shard 1 carries
// the whole KV metadata, every shard the split.no / split.count / split.tensors.count keys (gguf-split's
// layout, which llama.cpp loads). Tensor bytes are streamed from the source file shard by shard.
import { closeSync, openSync, writeSync } from 'node:fs';
import { readTensorData, type GgufFile } from './reader.js';
import { metaEntryToWrite } from './rewrite.js';
import { SPLIT_COUNT, SPLIT_NO, SPLIT_TENSORS_COUNT, planSplit, splitPath, type SplitOptions } from './split.js';
import { ggufHeader, type GgufWriteValue } from './writer.js';

export interface SplitShardPlan {
  path: string;
  tensors: string[];
  /** header plus padded tensor data */
  bytes: number;
}

/** The shards `writeSplit` would write (gguf-split --dry-run). */
export function splitPlan(file: GgufFile, outPrefix: string, opts: SplitOptions): { shards: SplitShardPlan[]; headers: ReturnType<typeof ggufHeader>[] } {
  const plan = planSplit(file.tensors, opts);
  const n = plan.length;
  if (n > 0xffff) throw new Error(`split: ${n} shards is more than split.count (u16) can say`);
  const meta = (i: number): [string, GgufWriteValue][] => {
    const split: [string, GgufWriteValue][] = [
      [SPLIT_NO, { type: 'u16', value: i }],
      [SPLIT_COUNT, { type: 'u16', value: n }],
      [SPLIT_TENSORS_COUNT, { type: 'i32', value: file.tensors.length }],
    ];
    if (i === 0) {
      const kv = [...file.metaEntries].filter(([k]) => k !== SPLIT_NO && k !== SPLIT_COUNT && k !== SPLIT_TENSORS_COUNT).map(([k, e]) => [k, metaEntryToWrite(e)] as [string, GgufWriteValue]);
      if (file.alignment !== 32 && !file.metaEntries.has('general.alignment')) kv.push(['general.alignment', { type: 'u32', value: file.alignment }]);
      return [...kv, ...split];
    }
    // the other shards lay their data out with the same alignment as the first
    return file.alignment !== 32 ? [['general.alignment', { type: 'u32', value: file.alignment }], ...split] : split;
  };
  const headers = plan.map((idx, i) => ggufHeader({ version: 3, metadata: meta(i), tensors: idx.map((j) => file.tensors[j]!), alignment: file.alignment }));
  const shards = plan.map((idx, i) => ({ path: splitPath(outPrefix, i, n), tensors: idx.map((j) => file.tensors[j]!.name), bytes: headers[i]!.header.length + headers[i]!.dataBytes }));
  return { shards, headers };
}

/** Writes `file` as shards named from `outPrefix`; returns the plan written. */
export function writeSplit(file: GgufFile, outPrefix: string, opts: SplitOptions = {}, onProgress?: (done: number, total: number) => void): SplitShardPlan[] {
  const { shards, headers } = splitPlan(file, outPrefix, opts);
  const total = file.tensors.reduce((a, t) => a + t.nBytes, 0);
  const buf = new Uint8Array(file.tensors.reduce((a, t) => Math.max(a, t.nBytes), 0) + headers[0]!.alignment);
  let done = 0;
  shards.forEach((s, i) => {
    const h = headers[i]!;
    const fd = openSync(s.path, 'w');
    try {
      writeSync(fd, h.header);
      s.tensors.forEach((name, j) => {
        const t = file.tensorsByName.get(name)!;
        const padded = (j + 1 < s.tensors.length ? h.offsets[j + 1]! : h.dataBytes) - h.offsets[j]!;
        readTensorData(file, t, buf, 0);
        buf.fill(0, t.nBytes, padded);
        writeSync(fd, buf, 0, padded);
        done += t.nBytes;
        onProgress?.(done, total);
      });
    } finally {
      closeSync(fd);
    }
  });
  return shards;
}

// Compiled engines on disk (Node), like OpenVINO's CACHE_DIR or ORT's EPContext blobs: an engine is
// stored under the sha256 of everything that went into it (target, the group's ops and shapes, its
// weight bytes), so a second load of the same model skips the encoder. GGUF_EDGE_NPU_CACHE=DIR turns
// it on for the registry's sim-npu device. Files are written atomically (temp file + rename).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EncodedEngine, EngineCache } from './device.js';

export function diskEngineCache(dir: string): EngineCache & { hits: number; misses: number } {
  mkdirSync(dir, { recursive: true });
  const c = {
    hits: 0, misses: 0,
    key(parts: (string | Uint8Array)[]): string {
      const h = createHash('sha256');
      for (const p of parts) { h.update(typeof p === 'string' ? `s${p.length}:${p}` : `b${p.length}:`); if (typeof p !== 'string') h.update(p); }
      return h.digest('hex');
    },
    get(key: string): EncodedEngine | undefined {
      const blobPath = join(dir, `${key}.engine`), ioPath = join(dir, `${key}.json`);
      if (!existsSync(blobPath) || !existsSync(ioPath)) { c.misses++; return undefined; }
      try {
        const io = JSON.parse(readFileSync(ioPath, 'utf8')) as { inputIds: number[]; outputIds: number[] };
        if (!Array.isArray(io.inputIds) || !Array.isArray(io.outputIds)) { c.misses++; return undefined; }
        c.hits++;
        return { blob: new Uint8Array(readFileSync(blobPath)), inputIds: io.inputIds, outputIds: io.outputIds };
      } catch {
        c.misses++;
        return undefined; // a damaged entry is rebuilt
      }
    },
    put(key: string, e: EncodedEngine): void {
      const tmp = `.${process.pid}.tmp`;
      writeFileSync(join(dir, `${key}.engine${tmp}`), e.blob);
      renameSync(join(dir, `${key}.engine${tmp}`), join(dir, `${key}.engine`));
      writeFileSync(join(dir, `${key}.json${tmp}`), JSON.stringify({ inputIds: e.inputIds, outputIds: e.outputIds }));
      renameSync(join(dir, `${key}.json${tmp}`), join(dir, `${key}.json`));
    },
  };
  return c;
}

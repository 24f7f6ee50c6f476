// `gguf-edge inspect MODEL`: metadata and tensor table of a GGUF file, and a summary of what a run needs.
import { parseArgs } from 'node:util';
import type { Command } from '../main.js';
import { openGguf } from '../../gguf/open.js';
import { ggmlTypeName } from '../../gguf/ggml-types.js';
import { metaNumber, type GgufMetaValue } from '../../gguf/reader.js';
import { estimateMemory, summarize, type MemoryEstimate } from '../../runtime/estimate.js';
import { getDevice } from '../../backends/registry.js';
import { kvType, num, usage } from '../options.js';

const help = `Usage: gguf-edge inspect MODEL [--json] [--all] [-c N] [-b N] [--kv-type f16|f32|q8_0|q4_0] [--swa-full]

Prints a GGUF file's header: version, metadata (key = value) and the tensor table
(name, type, shape in GGUF order ne0 first, byte offset, size), after a summary of the model: parameter
count, the type mix (tensors, parameters and bytes per type) and the memory a run will need before
anything is loaded — weights, the KV cache at the context size (sliding-window layers: their ring of
window + batch rows, see --swa-full), recurrent state (if the architecture keeps any), and the compute arena
(decode plus a full batch, as a run reserves it). A split model is
named by its first shard; its shards are listed.

Options:
  --json             print one JSON object {file, version, size, alignment, data_offset, metadata, tensors,
                     summary: {params, weight_bytes, types: [{type, tensors, params, bytes}],
                     memory: {n_ctx, n_batch, kv_type, weights, kv, kv_bytes_per_token, kv_swa_ring,
                     swa_ring: {window, period, rows} | null, kv_swa_full, state, arena, total}
                     (null with memory_error when the model cannot run)}, shards?: [{name, size, tensors}]}
  --all              print long arrays (e.g. the vocabulary) in full instead of a short preview
  -c, --ctx N        context size of the memory estimate (default as run: min(4096, training context))
  -b, --batch N      batch size of the estimate (default 512, at most the context)
  --kv-type f16|f32|q8_0|q4_0  KV cache element type of the estimate (default f16)
  --swa-full         estimate with full-size caches for the sliding-window layers (as run --swa-full)
  -h, --help         show this help`;

function preview(v: GgufMetaValue, all: boolean): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v !== 'object') return v;
  const arr = Array.from(v as ArrayLike<unknown>, (x) => (typeof x === 'bigint' ? x.toString() : x));
  if (all || arr.length <= 16) return arr;
  return { length: arr.length, head: arr.slice(0, 8) };
}

const mib = (n: number) => (n >= 1 << 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : n >= 1 << 20 ? `${(n / 2 ** 20).toFixed(2)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`);
const count = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} K` : String(n));

export const command: Command = {
  summary: 'print a GGUF file\'s metadata, tensor table and what a run needs',
  help,
  async run(args) {
    const { values, positionals } = parseArgs({
      args, allowPositionals: true,
      options: { json: { type: 'boolean' }, all: { type: 'boolean' }, ctx: { type: 'string', short: 'c' }, batch: { type: 'string', short: 'b' }, 'kv-type': { type: 'string' }, 'swa-full': { type: 'boolean' } },
    });
    const path = positionals[0];
    if (!path) throw usage('missing MODEL argument (see --help)');
    const kv = kvType(values);
    const f = openGguf(path);
    try {
      const all = !!values.all;
      // fromEntries defines own properties: a key named '__proto__' is shown, not taken as the prototype
      const meta: Record<string, unknown> = Object.fromEntries(Array.from(f.metadata, ([k, v]) => [k, preview(v, all)]));
      const tensors = f.tensors.map((t) => ({ name: t.name, type: ggmlTypeName(t.type), shape: t.dims, offset: t.offset, bytes: t.nBytes, ...(t.shard !== undefined ? { shard: t.shard } : {}) }));
      const s = summarize(f);
      const arch = f.metadata.get('general.architecture');
      let nCtxTrain = 4096;
      try { nCtxTrain = (typeof arch === 'string' ? metaNumber(f, `${arch}.context_length`) : undefined) ?? 2048; } catch { /* reported by the estimate */ }
      const nCtx = Math.floor(num(values.ctx, 'ctx', Math.min(4096, nCtxTrain)));
      if (nCtx < 1) throw usage(`--ctx must be at least 1, got ${nCtx}`);
      const nBatch = Math.floor(num(values.batch, 'batch', 512));
      if (nBatch < 1) throw usage(`--batch must be at least 1, got ${nBatch}`);
      let memory: MemoryEstimate | null = null;
      let memoryError: string | undefined;
      try {
        memory = estimateMemory(f, { nCtx, nBatch, kvType: kv, device: await getDevice('reference'), swaFull: !!values['swa-full'] });
      } catch (e) {
        const err = e as { code?: string; message?: string };
        memoryError = `${err.code ? `[${err.code}] ` : ''}${err.message ?? String(e)}`;
      }
      const shards = f.shards?.map((x) => ({ name: x.name, size: x.size, tensors: x.nTensors }));
      if (values.json) {
        const summary = { ...s, memory, ...(memoryError ? { memory_error: memoryError } : {}) };
        process.stdout.write(JSON.stringify({ file: path, version: f.version, size: f.size, alignment: f.alignment, data_offset: f.dataOffset, metadata: meta, tensors, summary, ...(shards ? { shards } : {}) }) + '\n');
        return 0;
      }
      const out: string[] = [];
      out.push(`file: ${path}`, `GGUF version ${f.version}, ${f.size} bytes, alignment ${f.alignment}, data at ${f.dataOffset}`);
      if (shards) out.push(`split model, ${shards.length} shards:`, ...shards.map((x) => `  ${x.name}  ${x.size} bytes, ${x.tensors} tensors`));
      out.push(`summary: ${count(s.params)} parameters (${s.params}), ${mib(s.weight_bytes)} of weights`);
      for (const t of s.types) out.push(`  ${t.type.padEnd(8)} ${String(t.tensors).padStart(5)} tensors ${String(t.params).padStart(14)} params ${mib(t.bytes).padStart(12)} (${((100 * t.bytes) / Math.max(1, s.weight_bytes)).toFixed(1)}%)`);
      if (memory) {
        out.push(`memory for a run at -c ${memory.n_ctx} -b ${memory.n_batch} --kv-type ${memory.kv_type}: ${mib(memory.total)}`,
          `  weights ${mib(memory.weights)}, KV cache ${mib(memory.kv)} (${memory.kv_bytes_per_token} bytes/token), recurrent state ${mib(memory.state)}, compute arena ${mib(memory.arena)}`);
        const r = memory.swa_ring;
        if (r) out.push(`  sliding-window layers: rings of ${r.rows} rows (window ${r.window} + batch, padded to ${r.period}, window mirrored): ${mib(memory.kv_swa_ring)} instead of ${mib(memory.kv_swa_full)} (--swa-full)`);
        else if (memory.kv_swa_full > 0) out.push(`  sliding-window layers: full caches, ${mib(memory.kv_swa_full)} (a ring saves nothing at this context, or --swa-full)`);
      } else {
        out.push(`memory for a run: not estimated (${memoryError})`);
      }
      out.push(`metadata (${f.metadata.size}):`);
      for (const [k, v] of Object.entries(meta)) out.push(`  ${k} = ${JSON.stringify(v)}`);
      out.push(`tensors (${f.tensors.length}, ${s.params} parameters):`);
      for (const t of tensors) out.push(`  ${t.name.padEnd(32)} ${t.type.padEnd(6)} [${t.shape.join(', ')}]`.padEnd(64) + ` @${t.offset} ${t.bytes} B`);
      process.stdout.write(out.join('\n') + '\n');
      return 0;
    } finally {
      f.source.close?.();
    }
  },
};

// `gguf-edge npu …`: our own NPU engine tooling (issue #10): compile a GGUF into engine blobs, inspect
// and execute a blob on the mock runtime, and pack one int8 matrix into the AX8850 nibble-plane layout
// (the RE toolkit's test target). Errors are one line on stderr (`gguf-edge npu: [CODE] message`).

import { parseArgs } from 'node:util';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from '../main.js';
import { packMatrix, paddedCols, planeBytes } from '../../backends/npu/nibble-planes.js';

export class NpuCliError extends Error {
  constructor(readonly code: 'BAD_ARGS' | 'IO' | 'SIZE_MISMATCH' | 'BAD_ENGINE' | 'MODEL', message: string) {
    super(message);
    this.name = 'NpuCliError';
  }
}

const help = `gguf-edge npu <subcommand> [options]: our own NPU engines (AX8850-style int8 nibble planes).

  npu pack-matrix --rows R --cols C --in M.i8 --out W.bin [--json]
      Packs one row-major int8 matrix (R*C signed bytes) into the engine's weight region, exactly as engine
      blobs store weights: each row padded with zeros to a multiple of 36 weights and cut into blocks of
      36 bytes; byte k (0 <= k < 18) of a block holds the low nibbles of weights 2k (bits 0-3) and 2k+1
      (bits 4-7), byte 18+k their high nibbles. Writes R * ceil(C/36)*36 bytes (no scales: see docs/npu.md).
      JSON: {rows, cols, paddedCols, bytes, out}

Errors: one line on stderr, exit code 1; codes BAD_ARGS, IO, SIZE_MISMATCH, BAD_ENGINE, MODEL.`;

type Opts = Record<string, { type: 'string' | 'boolean'; multiple?: boolean }>;
type Values = Record<string, string | boolean | (string | boolean)[] | undefined>;

function parse(sub: string, args: string[], options: Opts): { values: Values; positionals: string[] } {
  try {
    return parseArgs({ args, options: { ...options, json: { type: 'boolean' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${(e as Error).message}`);
  }
}

function req<T>(v: T | undefined, name: string, sub: string): T {
  if (v === undefined || v === '') throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${name} is required`);
  return v;
}

function posInt(v: string | undefined, name: string, sub: string): number {
  const s = req(v, name, sub);
  const n = Number(s);
  if (!/^\d+$/.test(s) || !Number.isSafeInteger(n) || n < 1) throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${name} must be a positive integer, got "${s}"`);
  return n;
}

function readFile(path: string, what: string): Uint8Array {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new NpuCliError('IO', `cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function writeFile(path: string, bytes: Uint8Array | string, what: string): void {
  try {
    writeFileSync(path, bytes);
  } catch (e) {
    throw new NpuCliError('IO', `cannot write ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

const out = (s: string) => process.stdout.write(s + '\n');

/** Largest matrix pack-matrix takes: the output buffer stays bounded on any input. */
const MAX_PACK_WEIGHTS = 2 ** 30;

async function packMatrixCmd(args: string[]): Promise<number> {
  const sub = 'pack-matrix';
  const { values: v, positionals } = parse(sub, args, { rows: { type: 'string' }, cols: { type: 'string' }, in: { type: 'string' }, out: { type: 'string' } });
  if (positionals.length) throw new NpuCliError('BAD_ARGS', `npu ${sub}: unexpected argument ${positionals[0]}`);
  const rows = posInt(v.rows as string | undefined, '--rows', sub), cols = posInt(v.cols as string | undefined, '--cols', sub);
  const inFile = req(v.in as string | undefined, '--in', sub), outFile = req(v.out as string | undefined, '--out', sub);
  if (rows * paddedCols(cols) > MAX_PACK_WEIGHTS) throw new NpuCliError('BAD_ARGS', `npu ${sub}: ${rows} x ${cols} exceeds ${MAX_PACK_WEIGHTS} packed weights`);
  const m = readFile(inFile, 'matrix');
  if (m.length !== rows * cols) throw new NpuCliError('SIZE_MISMATCH', `npu ${sub}: ${inFile} has ${m.length} bytes, a ${rows} x ${cols} int8 matrix has ${rows * cols}`);
  const planes = packMatrix(new Int8Array(m.buffer, m.byteOffset, m.length), rows, cols);
  writeFile(outFile, planes, 'weight region');
  const res = { rows, cols, paddedCols: paddedCols(cols), bytes: planeBytes(rows, cols), out: outFile };
  if (v.json) out(JSON.stringify(res));
  else out(`packed ${rows} x ${cols} int8 (rows padded to ${res.paddedCols}) into ${res.bytes} bytes of nibble planes: ${outFile}`);
  return 0;
}

const subcommands: Record<string, (args: string[]) => Promise<number>> = {
  'pack-matrix': packMatrixCmd,
};

export const command: Command = {
  summary: 'NPU engines: compile, inspect, pack-matrix (AX8850 nibble planes)',
  help,
  async run(args: string[]): Promise<number> {
    const [sub, ...rest] = args;
    const fn = sub ? subcommands[sub] : undefined;
    if (!fn) throw new NpuCliError('BAD_ARGS', sub ? `unknown subcommand '${sub}' (one of ${Object.keys(subcommands).join(', ')})` : `a subcommand is required (one of ${Object.keys(subcommands).join(', ')})`);
    return fn(rest);
  },
};

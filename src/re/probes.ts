// Marker probes: matrices whose values encode their own coordinates. Compiling them and reading where each
// nibble sequence lands recovers the vendor layout without knowing the format.
//
// Every storage scheme we target moves weight *nibbles* (a byte is two nibbles; nibble planes split a byte
// into two slots), so each probe carries one hex digit per weight and every nibble slot of the compiled
// output spells out, across the probes, the index of the weight it came from. The probe sequence is:
//   zero   all 0: the stored nibble is 0 (two's complement) or 8 (offset binary): the encoding of each slot
//   unit   all 0x21 (8-bit) / 1 (4-bit): low nibble 1, high nibble 2: which half of the value a slot holds
//   digit  one per hex digit of the weight index (row-major): the coordinates themselves
//   check  a weighted checksum of the digits: rejects stray bytes (and swapped compiled files) that match by chance
//   repeat all 0 again: slots that differ from `zero` are nondeterministic (build ids, timestamps)
// 8-bit probes put the same digit in both nibbles (value 0xdd) so split nibble planes are identified too.
// For 4096 weights that is 3 digits + 4 = 7 probes, at 8 or 4 bits.

import { fnv1a } from './bytes.js';
import { ReError } from './errors.js';

export type ProbeRole = 'zero' | 'unit' | 'digit' | 'check' | 'repeat';

export interface ProbeEntry {
  index: number;
  file: string;
  role: ProbeRole;
  /** for role 'digit': which hex digit of the weight index (0 = least significant) */
  digit?: number;
  /** FNV-1a fingerprint of the probe file, to check the right file went to the compiler */
  fnv1a: string;
}

export interface ProbeManifest {
  format: 'gguf-edge-probes';
  version: 1;
  rows: number;
  cols: number;
  bits: 4 | 8;
  digits: number;
  probes: ProbeEntry[];
  coding: string;
}

export interface ProbeSpec { rows: number; cols: number; bits: 4 | 8 }

export const MAX_PROBE_WEIGHTS = 16 ** 6;

export function probeFileName(k: number): string {
  return `probe-${String(k).padStart(2, '0')}.i8`;
}

export function compiledFileName(k: number): string {
  return `compiled-${String(k).padStart(2, '0')}.bin`;
}

export function digitCount(n: number): number {
  let d = 1;
  while (16 ** d < n) d++;
  return d;
}

/** Odd weights make the checksum change with any single wrong digit (odd numbers are units mod 16). */
export function checkDigit(index: number, digits: number): number {
  let s = 5;
  for (let j = 0; j < digits; j++) s += (2 * j + 1) * ((index >>> (4 * j)) & 15);
  return s & 15;
}

export function probeRoles(digits: number): { role: ProbeRole; digit?: number }[] {
  const roles: { role: ProbeRole; digit?: number }[] = [{ role: 'zero' }, { role: 'unit' }];
  for (let j = 0; j < digits; j++) roles.push({ role: 'digit', digit: j });
  roles.push({ role: 'check' }, { role: 'repeat' });
  return roles;
}

function nibbleToValue(d: number, bits: 4 | 8): number {
  if (bits === 4) return d >= 8 ? d - 16 : d;
  const b = (d << 4) | d;
  return b >= 128 ? b - 256 : b;
}

export function validateSpec(spec: ProbeSpec): void {
  const { rows, cols, bits } = spec;
  if (!Number.isSafeInteger(rows) || rows < 1) throw new ReError('BAD_ARGS', `--rows must be a positive integer (got ${rows})`);
  if (!Number.isSafeInteger(cols) || cols < 1) throw new ReError('BAD_ARGS', `--cols must be a positive integer (got ${cols})`);
  if (bits !== 4 && bits !== 8) throw new ReError('BAD_ARGS', `--bits must be 8 or 4 (got ${bits})`);
  if (rows * cols > MAX_PROBE_WEIGHTS) throw new ReError('BAD_ARGS', `${rows}x${cols} = ${rows * cols} weights exceeds the probe limit ${MAX_PROBE_WEIGHTS}`);
}

/** The probe matrix for one role, row-major signed values. */
export function probeMatrix(spec: ProbeSpec, role: { role: ProbeRole; digit?: number }, digits: number): Int8Array {
  const n = spec.rows * spec.cols;
  const m = new Int8Array(n);
  switch (role.role) {
    case 'zero': case 'repeat': break;
    case 'unit': m.fill(spec.bits === 8 ? 0x21 : 1); break;
    case 'digit': for (let i = 0; i < n; i++) m[i] = nibbleToValue((i >>> (4 * role.digit!)) & 15, spec.bits); break;
    case 'check': for (let i = 0; i < n; i++) m[i] = nibbleToValue(checkDigit(i, digits), spec.bits); break;
  }
  return m;
}

export function generateProbes(spec: ProbeSpec): { manifest: ProbeManifest; matrices: Int8Array[] } {
  validateSpec(spec);
  const digits = digitCount(spec.rows * spec.cols);
  const roles = probeRoles(digits);
  const matrices = roles.map((r) => probeMatrix(spec, r, digits));
  const probes: ProbeEntry[] = roles.map((r, k) => ({
    index: k, file: probeFileName(k), role: r.role, ...(r.digit !== undefined ? { digit: r.digit } : {}),
    fnv1a: fnv1a(new Uint8Array(matrices[k]!.buffer)),
  }));
  const manifest: ProbeManifest = {
    format: 'gguf-edge-probes', version: 1, rows: spec.rows, cols: spec.cols, bits: spec.bits, digits, probes,
    coding: 'weight index i = row*cols + col; probe digit j holds hex digit j of i in every nibble of the value; ' +
      'zero/unit/check/repeat calibrate encoding, nibble role, integrity and nondeterminism',
  };
  return { manifest, matrices };
}

export function parseManifest(text: string, where: string): ProbeManifest {
  let m: ProbeManifest;
  try { m = JSON.parse(text) as ProbeManifest; } catch (e) { throw new ReError('PROBE_MANIFEST', `${where}: not JSON (${(e as Error).message})`); }
  if (!m || m.format !== 'gguf-edge-probes' || m.version !== 1) throw new ReError('PROBE_MANIFEST', `${where}: not a gguf-edge probe manifest (format/version)`);
  try { validateSpec(m); } catch (e) { throw new ReError('PROBE_MANIFEST', `${where}: ${(e as Error).message}`); }
  const digits = digitCount(m.rows * m.cols);
  const count = probeRoles(digits).length;
  if (m.digits !== digits || !Array.isArray(m.probes) || m.probes.length !== count) {
    throw new ReError('PROBE_MANIFEST', `${where}: expected ${count} probes for ${m.rows}x${m.cols}, the manifest lists ${Array.isArray(m.probes) ? m.probes.length : 'none'}`);
  }
  return m;
}

// Reads the tensor dump written by lldump.c: records of {i32 step, i32 type, char name[64],
// i64 ne[4], char op[16], f32 data[]} (data in ggml's logical order, f16/i32 converted to f32).
import { readFileSync } from 'node:fs';
export function readDump(path) {
  const b = readFileSync(path); const out = [];
  let o = 0;
  while (o < b.length) {
    const step = b.readInt32LE(o), type = b.readInt32LE(o + 4);
    const name = b.toString('latin1', o + 8, o + 72).replace(/\0.*$/s, '');
    const ne = [0, 1, 2, 3].map(i => Number(b.readBigInt64LE(o + 72 + 8 * i)));
    const op = b.toString('latin1', o + 104, o + 120).replace(/\0.*$/s, '');
    const n = ne[0] * ne[1] * ne[2] * ne[3];
    const data = new Float32Array(b.buffer.slice(b.byteOffset + o + 120, b.byteOffset + o + 120 + 4 * n));
    out.push({ step, type, name, ne, op, data });
    o += 120 + 4 * n;
  }
  return out;
}

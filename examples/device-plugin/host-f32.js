// @ts-check
// A minimal gguf-edge device plug-in: plain JavaScript, f32 arithmetic on host memory, claiming a
// subset of the op set (elementwise ops, rms_norm, view_cols, and mul_mat on F32/F16 weights).
// Every other op (get_rows, rope, attention, quantized matmuls, ...) falls back to the next device.
//
//   gguf-edge devices --device-plugin examples/device-plugin/host-f32.js
//   gguf-edge run MODEL --device-plugin examples/device-plugin/host-f32.js --device host-f32
//
// The module needs nothing from gguf-edge at run time; the JSDoc types below come from the contract
// (src/backends/backend.ts; outside this repo, import them from 'gguf-edge/dist/src/backends/backend.js').
// docs/devices.md documents the contract and this module format.
import { freemem, totalmem } from 'node:os';

/** @typedef {import('../../src/backends/backend.js').Device} Device */
/** @typedef {import('../../src/backends/backend.js').DeviceBuffer} DeviceBuffer */
/** @typedef {import('../../src/backends/backend.js').BufferType} BufferType */
/** @typedef {import('../../src/backends/backend.js').BufferUsage} BufferUsage */
/** @typedef {import('../../src/backends/backend.js').Backend} Backend */
/** @typedef {import('../../src/backends/backend.js').ComputeContext} ComputeContext */
/** @typedef {import('../../src/backends/backend.js').Placement} Placement */
/** @typedef {import('../../src/graph/graph.js').TensorDesc} TensorDesc */
/** @typedef {import('../../src/graph/graph.js').Graph} Graph */

/** The plug-in API version this module is written against. */
export const apiVersion = 1;

const F32 = 0, F16 = 1; // ggml type ids of the weight types mul_mat claims

// ---- buffers: plain ArrayBuffers, so the loader can read weights straight in (hostView)

/** @type {BufferType} */
const bufferType = {
  name: 'host-f32',
  alignment: 16,
  allocate(size, usage) { return hostBuffer(new Uint8Array(Math.ceil(Math.max(size, 1) / 8) * 8), usage); },
};

/** @param {Uint8Array} bytes @param {BufferUsage} usage @returns {DeviceBuffer} */
function hostBuffer(bytes, usage) {
  return {
    size: bytes.length,
    usage,
    type: bufferType,
    set(offset, src) { bytes.set(src, offset); },
    get(offset, length, dest) {
      const v = bytes.subarray(offset, offset + length);
      if (!dest) return v.slice();
      dest.set(v);
      return dest;
    },
    clear(value = 0) { bytes.fill(value); },
    // the destination may live on another device: its set() does the copy in
    copyTo(dst, srcOffset, dstOffset, length) { dst.set(dstOffset, bytes.subarray(srcOffset, srcOffset + length)); },
    hostView(offset, length) { return bytes.subarray(offset, offset + length); },
    free() { /* garbage collected */ },
  };
}

// ---- what the device claims: one table, built once (supportsOp is asked for every node of every plan)

/** @param {TensorDesc} t */
const isF32 = (t) => t.dtype === 'f32';
/** @type {Map<string, (node: TensorDesc, src: TensorDesc[]) => boolean>} */
const CLAIMS = new Map([
  ['add', (n, s) => s.every(isF32)],
  ['mul', (n, s) => s.every(isF32)],
  ['scale', (n, s) => isF32(s[0])],
  ['rms_norm', (n, s) => isF32(s[0])],
  ['view_cols', (n, s) => isF32(s[0])],
  ['mul_mat', (n, s) => (s[0].dtype === F32 || s[0].dtype === F16) && isF32(s[1])],
]);

// ---- kernels (f32 results; the sums of squares and dot products accumulate in double)

/** @param {Placement} p */
const f32 = (p) => { const v = /** @type {Uint8Array} */ (p.buffer.hostView?.(p.offset, p.nBytes)); return new Float32Array(v.buffer, v.byteOffset, p.nBytes >> 2); };
/** @param {TensorDesc} t */
const count = (t) => t.shape.reduce((a, b) => a * b, 1);

const f16Scratch = new Float32Array(1);
const f16Bits = new Uint32Array(f16Scratch.buffer);
/** IEEE half -> float @param {number} h */
function halfToFloat(h) {
  const sign = (h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp === 0) return (sign ? -1 : 1) * man * 2 ** -24; // zero and subnormals
  if (exp === 31) { f16Bits[0] = sign | 0x7f800000 | (man << 13); return f16Scratch[0]; }
  f16Bits[0] = sign | ((exp + 112) << 23) | (man << 13);
  return f16Scratch[0];
}

/** @param {Graph} g @param {TensorDesc} t @param {(id: number) => Placement} at */
function computeNode(g, t, at) {
  const src = t.src.map((id) => g.tensors[id]);
  const y = f32(at(t.id));
  const n = count(t);
  switch (t.op) {
    case 'add': case 'mul': {
      const a = f32(at(src[0].id)), b = f32(at(src[1].id)), nb = count(src[1]); // b repeats over a
      if (t.op === 'add') for (let i = 0; i < n; i++) y[i] = a[i] + b[i % nb];
      else for (let i = 0; i < n; i++) y[i] = a[i] * b[i % nb];
      return;
    }
    case 'scale': {
      const a = f32(at(src[0].id)), s = Math.fround(/** @type {number} */ (t.params.scale));
      for (let i = 0; i < n; i++) y[i] = a[i] * s;
      return;
    }
    case 'rms_norm': {
      const x = f32(at(src[0].id)), len = /** @type {number} */ (t.params.rowLen), eps = /** @type {number} */ (t.params.eps);
      for (let r = 0; r < n; r += len) {
        let sum = 0;
        for (let i = 0; i < len; i++) { const v = x[r + i]; sum += Math.fround(v * v); }
        const s = Math.fround(1 / Math.fround(Math.sqrt(Math.fround(Math.fround(sum / len) + eps))));
        for (let i = 0; i < len; i++) y[r + i] = x[r + i] * s;
      }
      return;
    }
    case 'view_cols': {
      const a = f32(at(src[0].id)), w = t.shape[0], srcW = src[0].shape[0], off = /** @type {number} */ (t.params.offset);
      for (let r = 0; r < n / w; r++) for (let i = 0; i < w; i++) y[r * w + i] = a[r * srcW + off + i];
      return;
    }
    case 'mul_mat': {
      // w: [k, rows] of F32 or F16; x: [k, m] f32; y[j * rows + i] = w row i . x row j
      const w = src[0], k = w.shape[0], rows = w.shape[1] ?? 1, m = src[1].shape[1] ?? 1;
      const x = f32(at(src[1].id));
      const wp = at(w.id);
      const wv = /** @type {Uint8Array} */ (wp.buffer.hostView?.(wp.offset, wp.nBytes));
      const row = new Float32Array(k);
      const half = w.dtype === F16 ? new Uint16Array(wv.buffer, wv.byteOffset, k * rows) : null;
      const full = w.dtype === F32 ? new Float32Array(wv.buffer, wv.byteOffset, k * rows) : null;
      for (let i = 0; i < rows; i++) {
        if (full) row.set(full.subarray(i * k, (i + 1) * k));
        else if (half) for (let c = 0; c < k; c++) row[c] = halfToFloat(half[i * k + c]);
        for (let j = 0; j < m; j++) {
          let acc = 0;
          for (let c = 0; c < k; c++) acc += row[c] * x[j * k + c];
          y[j * rows + i] = acc;
        }
      }
      return;
    }
    default:
      throw new Error(`host-f32 does not compute ${t.op}`); // the scheduler never sends an unclaimed op
  }
}

/** @returns {Device} */
function createHostF32Device() {
  /** @type {Device} */
  const device = {
    name: 'host-f32',
    kind: 'cpu',
    description: 'example plug-in: plain-JS f32 elementwise ops, rms_norm and F32/F16 matmul on host memory',
    memory: () => ({ free: freemem(), total: totalmem() }),
    bufferType: () => bufferType,
    supportsOp(node, graph) {
      const claim = CLAIMS.get(node.op);
      return claim !== undefined && claim(node, node.src.map((id) => graph.tensors[id]));
    },
    // no batch threshold: take every claimed op
    prefersOp: () => true,
    createBackend() {
      return {
        device,
        compute(ctx, nodes) {
          for (const id of nodes) computeNode(ctx.graph, ctx.graph.tensors[id], ctx.placement);
        },
      };
    },
  };
  return device;
}

/** The devices this module adds: a name and a factory (options: {threads, numerics, ...}; unused here). */
export const devices = [{ name: 'host-f32', create: () => createHostF32Device() }];

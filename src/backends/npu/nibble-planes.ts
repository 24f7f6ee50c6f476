// The AX8850 engine's int8 weight layout (issue #10): each row is padded with zeros to a multiple of 36
// weights and cut into blocks of 36 bytes; in a block, byte k (0 <= k < 18) is the FINE byte holding
// the low nibbles of weights 2k (bits 0-3) and 2k+1 (bits 4-7), and byte 18+k is the COARSE byte
// holding their high nibbles the same way (two's complement bits 4-7 of the int8), so each coarse
// byte sits 18 positions after its fine byte. Rows follow each other with no gap: row r starts at
// byte r * paddedCols(cols).
//
// Scales live beside the planes, not inside them: one f16 (little-endian) per group of 32 weights of
// a row, row-major, group g of row r at byte 2 * (r * scaleGroups(cols) + g) of the scale region (the
// last group of a row covers the remainder when cols % 32 != 0). Weight (r, c) = q(r, c) * scale(r, c/32).

export const PLANE_BLOCK = 36;
export const PLANE_HALF = 18;
export const SCALE_GROUP = 32;

export class NibblePlaneError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NibblePlaneError';
  }
}

/** Weights per row after padding to a whole number of 36-weight blocks. */
export function paddedCols(cols: number): number {
  return Math.ceil(cols / PLANE_BLOCK) * PLANE_BLOCK;
}

/** Bytes of the nibble planes of a rows x cols int8 matrix. */
export function planeBytes(rows: number, cols: number): number {
  return rows * paddedCols(cols);
}

/** Scale groups (of 32 weights) per row. */
export function scaleGroups(cols: number): number {
  return Math.ceil(cols / SCALE_GROUP);
}

/** Bytes of the f16 scale region of a rows x cols matrix. */
export function scaleBytes(rows: number, cols: number): number {
  return 2 * rows * scaleGroups(cols);
}

function checkDims(rows: number, cols: number): void {
  if (!Number.isSafeInteger(rows) || rows < 1 || !Number.isSafeInteger(cols) || cols < 1) {
    throw new NibblePlaneError(`matrix dims must be positive integers (got ${rows} x ${cols})`);
  }
}

/**
 * Packs one row of `cols` int8 values (src[srcOff ..]) into dst[dstOff .. + paddedCols(cols)); the
 * padding weights are zeros.
 */
export function packRow(src: Int8Array, srcOff: number, cols: number, dst: Uint8Array, dstOff: number): void {
  const padded = paddedCols(cols);
  for (let b = 0; b < padded; b += PLANE_BLOCK) {
    const o = dstOff + b;
    for (let k = 0; k < PLANE_HALF; k++) {
      const c = b + 2 * k;
      const w0 = c < cols ? src[srcOff + c]! : 0;
      const w1 = c + 1 < cols ? src[srcOff + c + 1]! : 0;
      dst[o + k] = (w0 & 15) | ((w1 & 15) << 4);
      dst[o + PLANE_HALF + k] = ((w0 >> 4) & 15) | (((w1 >> 4) & 15) << 4);
    }
  }
}

/** Unpacks one row: the inverse of packRow for the first `cols` weights. */
export function unpackRow(src: Uint8Array, srcOff: number, cols: number, dst: Int8Array, dstOff: number): void {
  for (let c = 0; c < cols; c++) {
    const b = srcOff + c - (c % PLANE_BLOCK), k = (c % PLANE_BLOCK) >> 1, sh = (c & 1) << 2;
    const lo = (src[b + k]! >> sh) & 15, hi = (src[b + PLANE_HALF + k]! >> sh) & 15;
    dst[dstOff + c] = ((hi << 4) | lo) << 24 >> 24;
  }
}

/** Packs a row-major rows x cols int8 matrix into its nibble planes (the `npu pack-matrix` region). */
export function packMatrix(values: Int8Array, rows: number, cols: number): Uint8Array {
  checkDims(rows, cols);
  if (values.length !== rows * cols) throw new NibblePlaneError(`matrix has ${values.length} values, ${rows} x ${cols} needs ${rows * cols}`);
  const p = paddedCols(cols);
  const out = new Uint8Array(rows * p);
  for (let r = 0; r < rows; r++) packRow(values, r * cols, cols, out, r * p);
  return out;
}

/** Unpacks nibble planes back to the row-major int8 matrix; throws unless the padding weights are zero. */
export function unpackMatrix(planes: Uint8Array, rows: number, cols: number): Int8Array {
  checkDims(rows, cols);
  const p = paddedCols(cols);
  if (planes.length !== rows * p) throw new NibblePlaneError(`nibble planes of ${rows} x ${cols} take ${rows * p} bytes, got ${planes.length}`);
  const out = new Int8Array(rows * cols);
  const pad = new Int8Array(p);
  for (let r = 0; r < rows; r++) {
    unpackRow(planes, r * p, cols, out, r * cols);
    if (p !== cols) {
      unpackRow(planes, r * p, p, pad, 0);
      for (let c = cols; c < p; c++) if (pad[c] !== 0) throw new NibblePlaneError(`row ${r}: padding weight ${c} is ${pad[c]}, not 0`);
    }
  }
  return out;
}

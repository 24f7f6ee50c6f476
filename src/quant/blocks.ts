// Block layouts of the ggml quantized types (after ggml-common.h), as byte offsets inside one
// block. All multi-byte fields are little-endian; `d`/`m`/`dmin`/`s` are f16 unless noted.
// Sizes must agree with src/gguf/ggml-types.ts (the tests check that).
//
//   Q4_0   { d; qs[16] }                                  18 B / 32 values
//   Q4_1   { d; m; qs[16] }                               20 B / 32
//   Q5_0   { d; qh[4]; qs[16] }                           22 B / 32
//   Q5_1   { d; m; qh[4]; qs[16] }                        24 B / 32
//   Q8_0   { d; int8 qs[32] }                             34 B / 32
//   Q8_1   { d; s = d*sum(qs); int8 qs[32] }              36 B / 32
//   IQ4_NL { d; qs[16] }  (nibbles index KVALUES_IQ4NL)   18 B / 32
//   Q2_K   { scales[16]; qs[64]; d; dmin }                84 B / 256
//   Q3_K   { hmask[32]; qs[64]; scales[12]; d }          110 B / 256
//   Q4_K   { d; dmin; scales[12]; qs[128] }              144 B / 256
//   Q5_K   { d; dmin; scales[12]; qh[32]; qs[128] }      176 B / 256
//   Q6_K   { ql[128]; qh[64]; int8 scales[16]; d }       210 B / 256
//   Q8_K   { f32 d; int8 qs[256]; int16 bsums[16] }      292 B / 256
//   IQ4_XS { d; u16 scales_h; scales_l[4]; qs[128] }     136 B / 256

export const QK = 32; // legacy block
export const QK_K = 256; // K-quant super-block

export const Q4_0_BYTES = 18;
export const Q4_1_BYTES = 20;
export const Q5_0_BYTES = 22;
export const Q5_1_BYTES = 24;
export const Q8_0_BYTES = 34;
export const Q8_1_BYTES = 36;
export const IQ4_NL_BYTES = 18;
export const Q2_K_BYTES = 84;
export const Q3_K_BYTES = 110;
export const Q4_K_BYTES = 144;
export const Q5_K_BYTES = 176;
export const Q6_K_BYTES = 210;
export const Q8_K_BYTES = 292;
export const IQ4_XS_BYTES = 136;

// Field offsets of the K-quant blocks.
export const Q2K_SCALES = 0, Q2K_QS = 16, Q2K_D = 80, Q2K_DMIN = 82;
export const Q3K_HMASK = 0, Q3K_QS = 32, Q3K_SCALES = 96, Q3K_D = 108;
export const Q4K_D = 0, Q4K_DMIN = 2, Q4K_SCALES = 4, Q4K_QS = 16;
export const Q5K_D = 0, Q5K_DMIN = 2, Q5K_SCALES = 4, Q5K_QH = 16, Q5K_QS = 48;
export const Q6K_QL = 0, Q6K_QH = 128, Q6K_SCALES = 192, Q6K_D = 208;
export const Q8K_D = 0, Q8K_QS = 4, Q8K_BSUMS = 260;
export const IQ4XS_D = 0, IQ4XS_SCALES_H = 2, IQ4XS_SCALES_L = 4, IQ4XS_QS = 8;

/** The 16 non-linear levels of IQ4_NL / IQ4_XS (kvalues_iq4nl), sorted ascending. */
export const KVALUES_IQ4NL: Int8Array = Int8Array.of(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);

/**
 * Q4_K/Q5_K pack 8 (scale, min) pairs of 6 bits into 12 bytes: pairs 0-3 use the low 6 bits of
 * bytes 0-3 (scale) and 4-7 (min); pairs 4-7 keep their low nibbles in bytes 8-11 and their top
 * 2 bits in the spare high bits of bytes 0-7. Returns scale | (min << 8).
 */
export function scaleMinK4(j: number, b: Uint8Array, o: number): number {
  if (j < 4) return (b[o + j]! & 63) | ((b[o + j + 4]! & 63) << 8);
  const sc = (b[o + j + 4]! & 0xf) | ((b[o + j - 4]! >> 6) << 4);
  const m = (b[o + j + 4]! >> 4) | ((b[o + j]! >> 6) << 4);
  return sc | (m << 8);
}

/**
 * Q3_K's 16 signed 6-bit scales from 12 bytes: low nibbles of scales j (j<8 from byte j's low
 * nibble, j>=8 from byte j-8's high nibble), top 2 bits from byte 8 + j%4 at bit 2*(j/4).
 * Returns the scale minus its bias 32, in [-32, 31].
 */
export function scaleQ3K(j: number, b: Uint8Array, o: number): number {
  const lo = j < 8 ? b[o + j]! & 0xf : b[o + j - 8]! >> 4;
  const hi = (b[o + 8 + (j & 3)]! >> (2 * (j >> 2))) & 3;
  return (lo | (hi << 4)) - 32;
}

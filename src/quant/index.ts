// Public surface of the quant module: ggml block codecs and the CPU matmul's activation side.
export { F16_TO_F32, bf16ToF32, f16ToF32, f32ToBf16, f32ToF16, roundToF16 } from './float16.js';
export { dequantizeRow, dequantizer, isSupportedType, type DequantizeFn } from './dequantize.js';
export { isQuantizableType, quantizeRow, quantizer, type QuantizeFn } from './quantize.js';
export { quantizeActivations, vecDot, vecDotFn, vecDotType, type ActivationFlavor, type VecDotFn } from './vec-dot.js';
export { KVALUES_IQ4NL } from './blocks.js';

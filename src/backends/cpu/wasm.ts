// Loads the kernel module from bytes: by default one of the two builds embedded as base64 (so Node and
// browsers load them without file access), or bytes the caller read itself.
//   simd128: WebAssembly SIMD128 only (every engine with SIMD).
//   relaxed: the same kernels with the integer dot products on i32x4.relaxed_dot_i8x16_i7x16_add_s (the
//            7-bit operand is always a 4- or 6-bit weight value, so the result is exact and the same on
//            every engine) and fmaf on f32x4.relaxed_madd; used when the engine validates it and the
//            start-up self-tests pass (runtime.ts: the integers, and relaxed_madd fused).
import { KERNELS_RELAXED_WASM_BASE64, KERNELS_WASM_BASE64 } from './kernels-wasm.gen.js';

export type KernelVariant = 'simd128' | 'relaxed';

function fromBase64(b64: string): Uint8Array {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** The embedded kernel wasm bytes. */
export function kernelWasmBytes(variant: KernelVariant = 'simd128'): Uint8Array {
  return fromBase64(variant === 'relaxed' ? KERNELS_RELAXED_WASM_BASE64 : KERNELS_WASM_BASE64);
}

// (module (func (param v128 v128 v128) (result v128) local.get 0 local.get 1 local.get 2 i32x4.relaxed_dot_i8x16_i7x16_add_s))
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 8, 1, 96, 3, 123, 123, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0, 32, 0, 32, 1, 32, 2, 253, 147, 2, 11]);

/** Does this engine accept relaxed SIMD (Node 20 needs --experimental-wasm-relaxed-simd)? */
export function relaxedSimdAvailable(): boolean {
  try {
    return WebAssembly.validate(RELAXED_PROBE);
  } catch {
    return false;
  }
}

const cached: Partial<Record<KernelVariant, Promise<WebAssembly.Module>>> = {};

/** Compiles the kernels (the embedded build of `variant` unless bytes are given); each default build is compiled once. */
export function compileKernels(bytes?: BufferSource, variant: KernelVariant = 'simd128'): Promise<WebAssembly.Module> {
  if (bytes) return WebAssembly.compile(bytes);
  return (cached[variant] ??= WebAssembly.compile(kernelWasmBytes(variant) as Uint8Array<ArrayBuffer>));
}

// Loads the kernel module from bytes: by default the build embedded as base64 (so Node and browsers
// load it without file access), or bytes the caller read itself.
import { KERNELS_WASM_BASE64 } from './kernels-wasm.gen.js';

/** The embedded kernel wasm bytes. */
export function kernelWasmBytes(): Uint8Array {
  const s = atob(KERNELS_WASM_BASE64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

let cached: Promise<WebAssembly.Module> | null = null;

/** Compiles the kernels (the embedded build unless bytes are given); the default module is compiled once. */
export function compileKernels(bytes?: BufferSource): Promise<WebAssembly.Module> {
  if (bytes) return WebAssembly.compile(bytes);
  cached ??= WebAssembly.compile(kernelWasmBytes() as Uint8Array<ArrayBuffer>);
  return cached;
}

// fmaX: a fused multiply-add for the WGSL kernels wherever llama.cpp's CPU code uses fmaf (the matmul scale
// chains, ggml_v_expf, RoPE as GCC contracts it, the norms' and divisions' residual steps, GELU). WGSL's `fma`
// need not be fused: on llvmpipe (lavapipe and GLES) fma(1+2^-12, 1+2^-12, -(1+2^-11)) returns 0, not 2^-24.
// The device probes that at creation (option fma: auto | native | emulated); emulated, the product is made
// exact with Veltkamp's split and Dekker's TwoProduct and added to c by TwoSum (correctly rounded except in
// double-rounding corner cases). Mesa treats float math as reassociable (TwoSum's error term becomes 0), so
// every step is hidden behind the uniform P.never (always 0; every fmaX kernel's parameter block has it).
export type FmaMode = 'auto' | 'native' | 'emulated';

/** WGSL of fmaX (f32) and fmaX4 (vec4<f32>), appended to a module using them (WGSL declarations are order-free) */
export function fmaWgsl(fused: boolean): string {
  if (fused) {
    return `
fn fmaX(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }
fn fmaX4(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>) -> vec4<f32> { return fma(a, b, c); }
`;
  }
  const body = (o: string) => `
  let pr = ${o}(a * b);
  let ca = ${o}(4097.0 * a); let ah = ${o}(ca - ${o}(ca - a)); let al = ${o}(a - ah);
  let cb = ${o}(4097.0 * b); let bh = ${o}(cb - ${o}(cb - b)); let bl = ${o}(b - bh);
  let e = ${o}(${o}(${o}(${o}(ah * bh) - pr) + ${o}(ah * bl)) + ${o}(al * bh)) + ${o}(al * bl);
  let s = ${o}(pr + c); let bb = ${o}(s - pr);
  let t = ${o}(${o}(pr - ${o}(s - bb)) + ${o}(c - bb));
  return s + ${o}(t + e);`;
  return `
fn opx(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ p.never); }
fn opx4(v: vec4<f32>) -> vec4<f32> { return bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) ^ vec4<u32>(p.never)); }
fn fmaX(a: f32, b: f32, c: f32) -> f32 {${body('opx')}
}
fn fmaX4(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>) -> vec4<f32> {${body('opx4')}
}
`;
}

/** a kernel's source with its `fma(` calls made fmaX (what ggml fuses) and fmaX defined */
export const withFmaX = (code: string, fused: boolean): string =>
  /\bfmaX?4?\(/.test(code) ? code.replace(/\bfma\(/g, 'fmaX(') + fmaWgsl(fused) : code;

/** Does this device's WGSL fma round once? (one dispatch at device creation) */
export async function probeFusedFma(dev: GPUDevice): Promise<boolean> {
  const STORAGE = 0x80, COPY_SRC = 0x04, COPY_DST = 0x08, MAP_READ = 0x01;
  const code = `@group(0) @binding(0) var<storage, read_write> B: array<f32>;
@compute @workgroup_size(1) fn main() { B[2] = fma(B[0], B[0], B[1]); }`;
  const pipe = dev.createComputePipeline({ layout: 'auto', compute: { module: dev.createShaderModule({ code }), entryPoint: 'main' } });
  const buf = dev.createBuffer({ size: 16, usage: STORAGE | COPY_SRC | COPY_DST });
  const out = dev.createBuffer({ size: 16, usage: MAP_READ | COPY_DST });
  dev.queue.writeBuffer(buf, 0, new Float32Array([1 + 2 ** -12, -(1 + 2 ** -11), 0, 0]));
  const enc = dev.createCommandEncoder();
  const pass = enc.beginComputePass();
  pass.setPipeline(pipe);
  pass.setBindGroup(0, dev.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  enc.copyBufferToBuffer(buf, 0, out, 0, 16);
  dev.queue.submit([enc.finish()]);
  await out.mapAsync(MAP_READ);
  const r = new Float32Array(out.getMappedRange().slice(0))[2]!;
  out.unmap(); out.destroy(); buf.destroy();
  return r === 2 ** -24;
}

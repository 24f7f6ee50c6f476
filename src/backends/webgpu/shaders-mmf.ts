// F32 and F16 matmuls in llama.cpp's x86 float order (src/backends/ggml-routing.ts usesTinyBlas picks the
// kernel; src/backends/reference/matmul.ts and f16-dot.ts spell out the orders):
// - tinyBLAS (a batch): 16 lanes, lane L accumulating elements L, L+16, ... by FMA, then _mm512_reduce_add_ps;
// - ggml_vec_dot_f32/_f16 (one token, or shapes tinyBLAS declines): 64 lanes over 64-element steps, folded
//   (L + L+32) + (L+16 + L+48) to 16, reduce_add, the tail added in f32 (F32) or in double (F16).
// F16 weights see the activations rounded to f16 (device.ts rounds them first): every product is exact, so
// a plain add is the FMA; F32 products are not, so those lanes use fmaX (fma.ts).
// A workgroup: MMF_ROWS weight rows x 4 tokens (vec4 lanes), 8 threads per row, thread l owning lanes l + 8k.
// Every partial sum is behind opq (Mesa reassociates float adds otherwise).

const WG = 64;
export const MMF_ROWS = 8;
export const MMF_TM = 4;

const tree16 = (L: (i: number) => string) => {
  const t3 = (i: number) => `opq4(${L(i)} + ${L(i + 8)})`;
  return `opq4(opq4(opq4(${t3(0)} + ${t3(4)}) + opq4(${t3(2)} + ${t3(6)})) + opq4(opq4(${t3(1)} + ${t3(5)}) + opq4(${t3(3)} + ${t3(7)})))`;
};

export function mulMatFShader(f16: boolean, tiny: boolean): string {
  const w = (c: string) => (f16 ? `rdh(base + 2u * (${c}))` : `bitcast<f32>(W[(base >> 2u) + ${c}])`);
  const xs = (c: string) => `vec4<f32>(X[tk.x * p.K + ${c}], X[tk.y * p.K + ${c}], X[tk.z * p.K + ${c}], X[tk.w * p.K + ${c}])`;
  const step = (a: string, c: string) => f16 ? `${a} = opq4(${a} + ${w(c)} * ${xs(c)});` : `${a} = fmaX4(vec4<f32>(${w(c)}), ${xs(c)}, ${a});`;
  const lanesDecl = tiny ? 'var a0 = vec4<f32>(0.0); var a1 = vec4<f32>(0.0);' : '';
  const body = tiny ? `
  for (var c0 = 0u; c0 < p.K; c0 += 16u) {
    ${step('a0', 'c0 + l')}
    ${step('a1', 'c0 + l + 8u')}
  }
  red[lid] = a0; red2[lid] = a1;
  workgroupBarrier();
  if (!live || l != 0u) { return; }
  var y = ${tree16((i) => (i < 8 ? `red[lid + ${i}u]` : `red2[lid + ${i - 8}u]`))};` : `
  let np = p.K & ~63u;
  // the thread's 8 lanes accumulate in its own slots of red (a loop, not 8 unrolled copies: compile time)
  let rb = (lid / 8u) * 64u;
  for (var k = 0u; k < 8u; k++) { red[rb + l + 8u * k] = vec4<f32>(0.0); }
  for (var c0 = 0u; c0 < np; c0 += 64u) {
    for (var k = 0u; k < 8u; k++) { var a = red[rb + l + 8u * k]; ${step('a', 'c0 + l + 8u * k')} red[rb + l + 8u * k] = a; }
  }
  workgroupBarrier();
  if (!live || l != 0u) { return; }
  var y = vec4<f32>(0.0);
  if (np > 0u) { y = ${tree16((i) => `opq4(opq4(red[rb + ${i}u] + red[rb + ${i + 32}u]) + opq4(red[rb + ${i + 16}u] + red[rb + ${i + 48}u]))`)}; }
  ${f16 ? `// the tail in double (float-float; the products are exact)
  var lo = vec4<f32>(0.0);
  for (var c = np; c < p.K; c++) {
    let v = ${w('c')} * ${xs('c')};
    let s = opq4(y + v); let bb = opq4(s - y); lo += opq4(y - opq4(s - bb)) + opq4(v - bb); y = s;
  }
  y = y + lo;` : `for (var c = np; c < p.K; c++) { y = opq4(y + opq4(${w('c')} * ${xs('c')})); }`}`;
  return `
struct P { K: u32, N: u32, M: u32, rowBytes: u32, r0: u32, nOut: u32, nRowGroups: u32, nTiles: u32, never: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> W: array<u32>;
@group(0) @binding(2) var<storage, read_write> X: array<f32>;
@group(0) @binding(3) var<storage, read_write> Y: array<f32>;
fn opq4(v: vec4<f32>) -> vec4<f32> { return bitcast<vec4<f32>>(bitcast<vec4<u32>>(v) ^ vec4<u32>(p.never)); }
fn rdh(a: u32) -> f32 { return unpack2x16float((W[a >> 2u] >> ((a & 2u) * 8u)) & 0xffffu).x; }
var<private> tk: vec4<u32>;
var<workgroup> red: array<vec4<f32>, ${tiny ? WG : MMF_ROWS * 64}>;
${tiny ? `var<workgroup> red2: array<vec4<f32>, ${WG}>;` : ''}
@compute @workgroup_size(${WG})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
  let grp = wid.y * nw.x + wid.x;
  if (grp >= p.nRowGroups * p.nTiles) { return; }
  let rg = grp % p.nRowGroups; let tile = grp / p.nRowGroups;
  let r = rg * ${MMF_ROWS}u + lid / 8u; let l = lid % 8u;
  let t0 = tile * ${MMF_TM}u;
  tk = min(vec4<u32>(t0, t0 + 1u, t0 + 2u, t0 + 3u), vec4<u32>(p.M - 1u));
  let live = r < p.N;
  let base = min(r, p.N - 1u) * p.rowBytes;
  ${lanesDecl}
  ${body}
  for (var i = 0u; i < ${MMF_TM}u; i++) {
    let t = t0 + i;
    if (t < p.M) { Y[t * p.nOut + p.r0 + r] = y[i]; }
  }
}`;
}

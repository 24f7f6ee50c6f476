// node exact.mjs [fixture...]: for every parity fixture and prompt, runs llama.cpp (lldump, no tensor
// dump: ONLY=none) and our reference backend on the same tokens and counts the logit vectors that
// are bit-identical: the all-outputs prompt batch (prompt_top) and the prompt + 32 one-token
// decodes of the reference continuation (steps). Prints one line per fixture.
import { readFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
const R = new URL('../../dist/', import.meta.url).href;
const { referenceDevice } = await import(R + 'src/backends/reference/device.js');
const { openGguf } = await import(R + 'src/gguf/open.js');
const { loadModel } = await import(R + 'src/runtime/model.js');
const { Context } = await import(R + 'src/runtime/context.js');
const { PARITY_ARCHS, PARITY_TYPES } = await import(R + 'test/helpers/parity.js');
const FX = process.env.GGUF_EDGE_FIXTURES ? process.env.GGUF_EDGE_FIXTURES + '/parity/' : new URL('../../../shared/fixtures/parity/', import.meta.url).pathname;
const OUT = process.env.OUT ?? '/tmp/ggml-oracle';
const names = process.argv.slice(2).length ? process.argv.slice(2) : PARITY_ARCHS.flatMap((a) => PARITY_TYPES.map((t) => `${a}-${t}`));
const device = referenceDevice();
function llama(name, si, mode, seq) {
  const base = `${OUT}/${name}.${si}.${mode}`;
  if (!existsSync(base + '.logits')) {
    const args = [FX + name + '.gguf', '/dev/null', mode, ...seq.prompt.map(String)];
    if (mode === 'gen') args.push('--', ...seq.continuation.map(String));
    const r = spawnSync(process.env.LLDUMP ?? OUT + '/lldump', args, { env: { ...process.env, ONLY: '\u0001none', LOGITS: base + '.logits' }, encoding: 'utf8' });
    if (r.status) throw new Error(r.stderr.slice(-1000));
  }
  return new Float32Array(readFileSync(base + '.logits').buffer.slice(0));
}
const same = (a, b) => a.length === b.length && a.every((v, i) => v === b[i]);
let allExact = 0;
for (const name of names) {
  const ref = JSON.parse(readFileSync(FX + name + '.ref.json', 'utf8'));
  const V = ref.model.n_vocab;
  const file = openGguf(FX + name + '.gguf');
  const model = loadModel(file, { device });
  let pOk = 0, pN = 0, sOk = 0, sN = 0, firstBad = '';
  for (const [si, seq] of ref.sequences.entries()) {
    const la = llama(name, si, 'all', seq), lg = llama(name, si, 'gen', seq);
    let ctx = new Context(model, { nCtx: 256, kvType: 'f16' });
    const oa = await ctx.decode(seq.prompt, true);
    ctx.close();
    for (let p = 0; p < seq.prompt.length; p++, pN++) {
      if (same(oa.subarray(p * V, (p + 1) * V), la.subarray(p * V, (p + 1) * V))) pOk++;
      else if (!firstBad) firstBad = `seq ${si} prompt pos ${p}`;
    }
    ctx = new Context(model, { nCtx: 256, kvType: 'f16' });
    let logits = await ctx.decode(seq.prompt);
    for (let k = 0; k <= seq.continuation.length; k++, sN++) {
      if (same(logits, lg.subarray(k * V, (k + 1) * V))) sOk++;
      else if (!firstBad) firstBad = `seq ${si} step ${k}`;
      if (k < seq.continuation.length) logits = await ctx.decode([seq.continuation[k]]);
    }
    ctx.close();
  }
  file.source.close?.();
  if (pOk === pN && sOk === sN) allExact++;
  console.log(`${name.padEnd(14)} prompt ${pOk}/${pN} steps ${sOk}/${sN} bit-identical${firstBad ? '  first difference: ' + firstBad : ''}`);
}
console.log(`${allExact}/${names.length} fixtures bit-identical everywhere`);

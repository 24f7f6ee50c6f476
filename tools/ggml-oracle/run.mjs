// node run.mjs <fixture> <seq> all|gen [nsteps]: runs lldump on a parity fixture's prompt (all: one
// batch, every position output; gen: prompt batch then one-token decodes of the reference
// continuation), writes <OUT>/<fixture>.<seq>.<mode>.bin and checks the logits against the .ref.json.
import { readFileSync, mkdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
const HERE = fileURLToPath(new URL('.', import.meta.url));
const FX = process.env.GGUF_EDGE_FIXTURES ? process.env.GGUF_EDGE_FIXTURES + '/parity/' : HERE + '../../../shared/fixtures/parity/';
const OUT = process.env.OUT ?? '/tmp/ggml-oracle';
mkdirSync(OUT, { recursive: true });
const [name, si, mode, nsteps = '32'] = process.argv.slice(2);
const ref = JSON.parse(readFileSync(FX + name + '.ref.json', 'utf8'));
const seq = ref.sequences[+si];
const base = `${OUT}/${name}.${si}.${mode}`;
const args = [FX + name + '.gguf', base + '.bin', mode, ...seq.prompt.map(String)];
if (mode === 'gen') args.push('--', ...seq.continuation.slice(0, +nsteps).map(String));
const r = spawnSync(process.env.LLDUMP ?? OUT + '/lldump', args, { env: { ...process.env, LOGITS: base + '.logits' }, encoding: 'utf8' });
if (r.status) { console.error(r.stderr.slice(-2000)); process.exit(1); }
const lg = new Float32Array(readFileSync(base + '.logits').buffer.slice(0));
const V = ref.model.n_vocab;
const tops = mode === 'all' ? seq.prompt_top : seq.steps.slice(0, +nsteps + 1).map(s => s.top);
let maxe = 0;
tops.forEach((top, p) => {
  const l = lg.subarray(p * V, (p + 1) * V);
  let m = -Infinity; for (const v of l) m = Math.max(m, v);
  let s = 0; for (const v of l) s += Math.exp(v - m);
  for (const [id, q] of top) maxe = Math.max(maxe, Math.abs(Math.exp(l[id] - m) / s - q));
});
console.error(name, si, mode, 'llama.cpp logits vs .ref.json: max prob diff', maxe.toExponential(2));

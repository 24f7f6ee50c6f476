// `gguf-edge npu compile` and `npu inspect` end to end on a parity fixture: the manifest against the
// files written, inspect against the manifest, and --execute-pattern's output checksums against the
// reference backend computing the same group on the same documented pattern.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Placement } from '../../../src/backends/backend.js';
import { hostBufferType } from '../../../src/backends/host-buffer.js';
import { computeNode } from '../../../src/backends/reference/device.js';
import { nElements } from '../../../src/graph/graph.js';
import { openGguf } from '../../../src/gguf/open.js';
import { graphGroups, modelGraphs } from '../../../src/backends/npu/compile-model.js';
import { encodeGroupEngine } from '../../../src/backends/npu/encoder.js';
import { f32ToF16 } from '../../../src/quant/index.js';
import { fixture } from '../../helpers/fixtures.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'gguf-edge.js');
const dir = mkdtempSync(join(tmpdir(), 'npu-cli-'));
const run = (...args: string[]) => spawnSync(process.execPath, [BIN, 'npu', ...args], { cwd: dir, encoding: 'utf8' });
function json(...args: string[]) {
  const r = run(...args, '--json');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stderr, '');
  return JSON.parse(r.stdout);
}
const fnv1a = (b: Uint8Array) => { let h = 0x811c9dc5; for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 0x01000193); return (h >>> 0).toString(16).padStart(8, '0'); };

test('npu compile writes one engine per (group, static shape) and a manifest that matches the files; npu inspect agrees', () => {
  const model = fixture('parity/qwen3-q8_0.gguf');
  const res = json('compile', model, '--out', 'eng', '--ctx', '64', '--shapes', '8,1');
  const nLayer = modelGraphs(openGguf(model), 64).hp.nLayer;
  assert.equal(res.engines, 2 * (nLayer + 1));
  const m = JSON.parse(readFileSync(join(dir, 'eng', 'manifest.json'), 'utf8'));
  assert.equal(m.format, 'gguf-edge-npu-manifest');
  assert.deepEqual([m.target, m.ctx, m.shapes], ['ax8850', 64, [8, 1]]);
  const groups = [...Array(nLayer).keys()].map((i) => `blk.${i}`).concat('output');
  assert.deepEqual(m.engines.map((e: { group: string; staticShape: number }) => `${e.group}@${e.staticShape}`), [...groups.map((g) => `${g}@8`), ...groups.map((g) => `${g}@1`)]);
  let total = 0;
  for (const e of m.engines) {
    const blob = readFileSync(join(dir, 'eng', e.file));
    assert.equal(e.bytes, blob.length);
    assert.equal(e.sha256, createHash('sha256').update(blob).digest('hex'));
    assert.equal(e.phase, e.staticShape === 1 ? 'decode' : 'prefill');
    total += blob.length;
    if (e.group.startsWith('blk.')) {
      // the KV cache is in/out, the hidden state in and out
      const l = e.group.slice(4);
      // the last layer of a prefill keeps only the output row (inp_out_ids), as llama.cpp does
      const last = Number(l) === nLayer - 1 && e.staticShape > 1 ? ['inp_out_ids'] : [];
      assert.deepEqual(e.inputs.map((x: { name: string }) => x.name), [l === '0' ? 'inp_embd' : `l_out_${Number(l) - 1}`, 'inp_pos', `cache_k_l${l}`, `cache_v_l${l}`, ...last]);
      assert.deepEqual(e.outputs.map((x: { name: string }) => x.name), [`l_out_${l}`, `cache_k_l${l}`, `cache_v_l${l}`]);
      assert.deepEqual(e.inputs[2].shape, e.outputs[1].shape);
      assert.equal(e.inputs[2].dtype, 'f16');
    }
  }
  assert.equal(m.totalBytes, total);
  assert.ok(m.tensors.length >= 7 * nLayer + 1);
  for (const t of m.tensors) assert.deepEqual([t.sourceType, t.exact, t.maxAbsErr, t.relErr], ['Q8_0', true, 0, 0], t.name);

  const ins = json('inspect', join('eng', 'blk.1.8.engine'));
  const e = m.engines.find((x: { file: string }) => x.file === 'blk.1.8.engine');
  assert.deepEqual(ins.header, { magic: 'GENG', version: 1, target: 'ax8850', name: 'blk.1', staticTokens: 8, dataOffset: ins.header.dataOffset, dataBytes: e.bytes - ins.header.dataOffset });
  assert.deepEqual([ins.inputs, ins.outputs, ins.bytes], [e.inputs, e.outputs, e.bytes]);
  assert.equal(ins.weights.length, 7);
  assert.ok(ins.ops.some((o: { op: string; count: number }) => o.op === 'attention' && o.count === 1));
  assert.equal(ins.execution, undefined);
  const human = run('inspect', join('eng', 'blk.1.8.engine'));
  assert.equal(human.status, 0);
  assert.match(human.stdout, /engine v1 for ax8850: group blk\.1, static shape 8 tokens/);

  const htp = json('compile', model, '--out', 'eng-htp', '--ctx', '64', '--shapes', '1', '--npu-target', 'htp');
  assert.equal(htp.engines, nLayer + 1);
  assert.equal(json('inspect', join('eng-htp', 'output.1.engine')).header.target, 'htp');
});

test('npu inspect --execute-pattern: output checksums equal the reference backend on the documented pattern', () => {
  const model = fixture('parity/qwen3-q8_0.gguf');
  if (!existsSync(join(dir, 'eng', 'blk.1.8.engine'))) json('compile', model, '--out', 'eng', '--ctx', '64', '--shapes', '8,1');
  const mg = modelGraphs(openGguf(model), 64);
  for (const [file, nTok, groupName] of [['blk.1.8.engine', 8, 'blk.1'], ['output.1.engine', 1, 'output']] as const) {
    const ex = json('inspect', join('eng', file), '--execute-pattern');
    const again = json('inspect', join('eng', file), '--execute-pattern');
    assert.deepEqual(again.execution.outputs, ex.execution.outputs, 'deterministic');
    assert.equal(ex.execution.counters.engineCalls, 1);
    // the reference: the same group of the same graph, inputs filled as the help text says
    const g = mg.graph(nTok, 1);
    const group = graphGroups(g).find((x) => x.name === groupName)!;
    const enc = encodeGroupEngine({ graph: g, group, nTokens: nTok, weightBytes: (id) => mg.weightBytes(g, id) }, 'ax8850');
    const host = hostBufferType('t');
    const place = new Map<number, Placement>();
    const at = (id: number): Placement => {
      let p = place.get(id);
      if (!p) {
        const t = g.tensors[id]!;
        const bytes = t.role === 'weight' ? mg.weightBytes(g, id) : new Uint8Array((t.dtype === 'f16' ? 2 : 4) * nElements(t));
        const buf = host.allocate(bytes.length, 'compute');
        buf.set(0, bytes);
        p = { buffer: buf, offset: 0, nBytes: bytes.length };
        place.set(id, p);
      }
      return p;
    };
    enc.inputIds.forEach((id, k) => {
      const t = g.tensors[id]!, v = at(id).buffer.hostView!(0, at(id).nBytes), n = nElements(t);
      if (t.dtype === 'f32') { const f = new Float32Array(v.buffer, v.byteOffset, n); for (let i = 0; i < n; i++) f[i] = 0.5 * Math.sin(0.1 * i + 1.3 * k); }
      else if (t.dtype === 'f16') { const h = new Uint16Array(v.buffer, v.byteOffset, n); for (let i = 0; i < n; i++) h[i] = f32ToF16(0.5 * Math.sin(0.1 * i + 1.3 * k)); }
      else { const a = new Int32Array(v.buffer, v.byteOffset, n); for (let i = 0; i < n; i++) a[i] = i; }
    });
    for (const id of group.nodes) computeNode(g, g.tensors[id]!, at);
    const want = enc.outputIds.map((id) => fnv1a(at(id).buffer.get(0, at(id).nBytes)));
    assert.deepEqual(ex.execution.outputs.map((o: { fnv1a: string }) => o.fnv1a), want, file);
    for (const o of ex.execution.outputs) assert.equal(o.nonFinite, 0);
  }
});

test('npu compile/inspect: bad input is one clear line and exit 1', () => {
  writeFileSync(join(dir, 'junk.engine'), new Uint8Array(100).fill(7));
  for (const [args, re] of [
    [['inspect', 'junk.engine'], /\[BAD_ENGINE\] junk\.engine: engine blob: offset 0: magic/],
    [['inspect', 'missing.engine'], /\[IO\] cannot read engine blob missing\.engine: ENOENT/],
    [['compile', 'nope.gguf', '--out', 'x'], /\[MODEL\] nope\.gguf: /],
    [['compile', fixture('parity/qwen3-q8_0.gguf'), '--out', 'x', '--npu-target', 'tpu'], /\[BAD_ARGS\] .*--npu-target must be one of ax8850, htp/],
    [['compile', fixture('parity/qwen3-q8_0.gguf')], /\[BAD_ARGS\] .*--out is required/],
    [['frobnicate'], /\[BAD_ARGS\] unknown subcommand 'frobnicate'/],
  ] as const) {
    const r = run(...args);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^gguf-edge npu: /);
    assert.match(r.stderr, re);
  }
  // a damaged program is refused with the field named
  const blob = readFileSync(join(dir, 'eng', 'output.1.engine'));
  const bad = new Uint8Array(blob); bad[8] = 0; bad[9] = 0; bad[10] = 0; bad[11] = 0;
  writeFileSync(join(dir, 'bad.engine'), bad);
  assert.match(run('inspect', 'bad.engine').stderr, /\[BAD_ENGINE\] .*offset 8: static token count is 0/);
});

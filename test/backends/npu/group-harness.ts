// Test harness: a fixture's graph computed by the reference device group by group, with each engine's
// input values captured before its group runs and its output values after, so an engine run through
// the mock can be compared with the reference's nodes.
import type { Placement } from '../../../src/backends/backend.js';
import { hostBufferType } from '../../../src/backends/host-buffer.js';
import { computeNode } from '../../../src/backends/reference/device.js';
import type { Graph } from '../../../src/graph/graph.js';
import { nElements } from '../../../src/graph/graph.js';
import { openGguf } from '../../../src/gguf/open.js';
import { graphGroups, modelGraphs, type ModelGraphs } from '../../../src/backends/npu/compile-model.js';
import { encodeGroupEngine, type EncodedEngine, type NpuTarget } from '../../../src/backends/npu/encoder.js';
import { fixture } from '../../helpers/fixtures.js';

export interface GroupRun {
  group: string;
  engine: EncodedEngine;
  /** engine input values (graph tensor bytes) before the group ran on the reference */
  inputs: Uint8Array[];
  /** engine output values after */
  outputs: Uint8Array[];
}

const host = hostBufferType('npu-test-host');

function leafBytes(g: Graph, id: number): number {
  const t = g.tensors[id]!;
  const n = nElements(t);
  return t.dtype === 'f16' ? 2 * n : 4 * n;
}

/**
 * Builds `name`'s graph at nTokens (nOutputs rows), encodes every group, and runs the reference over
 * the whole graph with tokens/positions from `tokens` (positions 0..n-1 after `past` earlier positions
 * whose cache rows hold deterministic values).
 */
export function referenceGroupRuns(name: string, nTokens: number, nOutputs: number, target: NpuTarget = 'ax8850', nCtx = 64): { mg: ModelGraphs; graph: Graph; runs: GroupRun[] } {
  const file = openGguf(fixture(`parity/${name}.gguf`));
  const mg = modelGraphs(file, nCtx);
  const g = mg.graph(nTokens, nOutputs);
  const place = new Map<number, Placement>();
  for (const t of g.tensors) {
    if (t.role === 'weight') {
      const bytes = mg.weightBytes(g, t.id);
      const buf = host.allocate(bytes.length, 'weights');
      buf.set(0, bytes);
      place.set(t.id, { buffer: buf, offset: 0, nBytes: bytes.length });
    } else {
      const nb = leafBytes(g, t.id);
      place.set(t.id, { buffer: host.allocate(nb, 'compute'), offset: 0, nBytes: nb });
    }
  }
  const at = (id: number) => place.get(id)!;
  const i32 = (id: number) => { const v = at(id).buffer.hostView!(0, at(id).nBytes); return new Int32Array(v.buffer, v.byteOffset, v.byteLength / 4); };
  const past = 3;
  i32(g.inputs.tokens).forEach((_, i, a) => { a[i] = (7 * i + 3) % mg.hp.nVocab; });
  i32(g.inputs.positions).forEach((_, i, a) => { a[i] = past + i; });
  i32(g.inputs.outputRows).forEach((_, i, a) => { a[i] = nTokens - nOutputs + i; });
  // earlier positions of every cache: small deterministic values
  for (const t of g.tensors) {
    if (t.role !== 'state') continue;
    const v = at(t.id).buffer.hostView!(0, at(t.id).nBytes);
    const row = t.shape[0]!;
    if (t.dtype === 'f16') {
      const h = new Uint16Array(v.buffer, v.byteOffset, v.byteLength / 2);
      for (let i = 0; i < past * row; i++) h[i] = 0x2c00 + ((i * 37) % 512) - ((i % 3) << 15 >>> 0 & 0x8000);
    } else {
      const f = new Float32Array(v.buffer, v.byteOffset, v.byteLength / 4);
      for (let i = 0; i < past * row; i++) f[i] = Math.sin(i) * 0.1;
    }
  }
  const snap = (id: number) => at(id).buffer.get(0, at(id).nBytes);
  const runs: GroupRun[] = [];
  for (const group of graphGroups(g)) {
    const engine = encodeGroupEngine({ graph: g, group, nTokens, weightBytes: (id) => mg.weightBytes(g, id) }, target);
    const inputs = engine.inputIds.map(snap);
    for (const id of group.nodes) computeNode(g, g.tensors[id]!, at);
    runs.push({ group: group.name, engine, inputs, outputs: engine.outputIds.map(snap) });
  }
  return { mg, graph: g, runs };
}

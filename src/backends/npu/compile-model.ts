// A GGUF model -> engine blobs: builds the graph at each static token count, cuts it into the node
// groups the transformer builder names ('blk.N', 'output'), and encodes each group (encoder.ts).
// Weights are read from the file on demand, one tensor at a time. `gguf-edge npu compile` drives it.
import type { NodeGroup } from '../backend.js';
import type { Graph } from '../../graph/graph.js';
import { GgufError } from '../../gguf/errors.js';
import { readTensorData, type GgufFile } from '../../gguf/reader.js';
import { readHParams, type HParams } from '../../models/hparams.js';
import { archSpec, supportedArchitectures } from '../../models/index.js';
import { buildTransformer, type ArchSpec, type WeightInfo } from '../../models/transformer.js';
import { encodeGroupEngine, type EncodedEngine, type NpuTarget } from './encoder.js';

/** The node groups of a graph, in execution order (nodes without a group are left out). */
export function graphGroups(g: Graph): NodeGroup[] {
  const byName = new Map<string, NodeGroup>();
  for (const id of g.nodes) {
    const name = g.tensors[id]!.group;
    if (name === undefined) continue;
    let grp = byName.get(name);
    if (!grp) { grp = { name, nodes: [] }; byName.set(name, grp); }
    grp.nodes.push(id);
  }
  return [...byName.values()];
}

export interface ModelGraphs {
  hp: HParams;
  spec: ArchSpec;
  weights: Map<string, WeightInfo>;
  /** the graph a batch of nTokens builds (nOutputs rows of logits) */
  graph(nTokens: number, nOutputs: number): Graph;
  /** GGUF bytes of the weight leaf `id` of `g` */
  weightBytes(g: Graph, id: number): Uint8Array;
}

export function modelGraphs(file: GgufFile, nCtx: number, kvType: 'f16' | 'f32' = 'f16'): ModelGraphs {
  const hp = readHParams(file);
  const spec = archSpec(hp.arch);
  if (!spec) throw new GgufError('MISSING_KEY', `architecture "${hp.arch}" is not supported (supported: ${supportedArchitectures.join(', ')})`, file.name);
  const weights = new Map<string, WeightInfo>();
  for (const t of file.tensors) weights.set(t.name, { dtype: t.type, dims: t.dims });
  return {
    hp, spec, weights,
    graph: (nTokens, nOutputs) => buildTransformer(spec, hp, weights, { nTokens, nOutputs, nCtx, kvType }),
    weightBytes: (g, id) => readTensorData(file, g.tensors[id]!.name),
  };
}

/** Groups `npu compile` turns into engines: the transformer layers and the output head (the embedding lookup stays on the host). */
export const isEngineGroup = (name: string) => name === 'output' || /^blk\.\d+$/.test(name);

export interface CompiledGroup { group: string; nTokens: number; engine: EncodedEngine }

/**
 * Encodes every engine group at every static token count (prefill shapes evaluate nTokens tokens and
 * output the last one's logits, as a prompt does; decode is nTokens = 1), handing each engine to
 * `emit` as soon as it is encoded so only one blob is in memory at a time.
 */
export function compileModel(file: GgufFile, opts: { target: NpuTarget; shapes: readonly number[]; nCtx: number; kvType?: 'f16' | 'f32' }, emit: (c: CompiledGroup) => void): void {
  const mg = modelGraphs(file, opts.nCtx, opts.kvType ?? 'f16');
  for (const nTokens of opts.shapes) {
    const g = mg.graph(nTokens, 1);
    for (const group of graphGroups(g)) {
      if (!isEngineGroup(group.name)) continue;
      const engine = encodeGroupEngine({ graph: g, group, nTokens, weightBytes: (id) => mg.weightBytes(g, id) }, opts.target);
      emit({ group: group.name, nTokens, engine });
    }
  }
}

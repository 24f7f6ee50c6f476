// What the sim-NPU cost model predicts for a synthetic model shape, from the shape alone: the GGUF
// header of the synthetic model is built in memory (no tensor data), parsed like a real file, and the
// transformer graph of each phase is priced by src/backends/sim-npu/cost-model.ts.

import { predictGraph, type NpuTarget, type PhasePrediction } from '../backends/sim-npu/cost-model.js';
import type { Graph } from '../graph/graph.js';
import { parseGgufSource } from '../gguf/reader.js';
import type { ByteSource } from '../gguf/source.js';
import { ggufHeader } from '../gguf/writer.js';
import { readHParams } from '../models/hparams.js';
import { archSpec } from '../models/index.js';
import { buildTransformer, type WeightInfo } from '../models/transformer.js';
import { parseSyntheticSpec } from './shapes.js';
import { syntheticMetadata, syntheticTensors } from './synthetic.js';

/** A file of `size` bytes of which only the header is held: the data section reads as zeros (never read here). */
function headerSource(header: Uint8Array, size: number, name: string): ByteSource {
  return {
    size, name,
    read(offset, length, dest, destOffset = 0) {
      if (offset < 0 || offset + length > size) throw new RangeError(`${name}: read of ${length} bytes at ${offset} past end ${size}`);
      const out = dest ?? new Uint8Array(length);
      const o = dest ? destOffset : 0;
      out.fill(0, o, o + length);
      if (offset < header.length) out.set(header.subarray(offset, Math.min(header.length, offset + length)), o);
      return out;
    },
  };
}

/** The graph a synthetic model `shape:type` builds at nTokens/nOutputs/nCtx, without writing the model. */
export function syntheticGraph(spec: string, o: { nTokens: number; nOutputs?: number; nCtx: number }): Graph {
  const { shape, type } = parseSyntheticSpec(spec);
  const h = ggufHeader({ metadata: syntheticMetadata(shape, type, 1), tensors: syntheticTensors(shape, type) });
  const file = parseGgufSource(headerSource(h.header, h.header.length + h.dataBytes, `synthetic ${spec}`));
  const hp = readHParams(file);
  const arch = archSpec(hp.arch)!;
  const weights = new Map<string, WeightInfo>(file.tensors.map((t) => [t.name, { dtype: t.type, dims: t.dims }]));
  return buildTransformer(arch, hp, weights, { nTokens: o.nTokens, nOutputs: o.nOutputs ?? 1, nCtx: o.nCtx, kvType: 'f16' });
}

export interface NpuPhasePredictions {
  /** one decode step (1 token) */
  decode: PhasePrediction;
  /** one prefill chunk of `chunk` tokens */
  prefill: PhasePrediction;
}

/** Decode and prefill-chunk predictions for a synthetic shape on `target` with a KV cache of nCtx slots. */
export function predictSynthetic(spec: string, target: NpuTarget, o: { nCtx: number; chunk?: number }): NpuPhasePredictions {
  const chunk = o.chunk ?? 128;
  return {
    decode: predictGraph(target, syntheticGraph(spec, { nTokens: 1, nCtx: o.nCtx })),
    prefill: predictGraph(target, syntheticGraph(spec, { nTokens: chunk, nCtx: o.nCtx })),
  };
}

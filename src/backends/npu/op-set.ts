// The engine op set: which graph nodes an engine program can hold. The sim-npu device builds its
// supportsOp table from this, so claims and the encoder agree.
import type { Graph, Op, TensorDesc } from '../../graph/graph.js';

export const ENGINE_OPS: readonly Op[] = ['mul_mat', 'get_rows', 'add', 'mul', 'scale', 'rms_norm', 'rope', 'swiglu', 'geglu', 'softcap', 'view_cols', 'kv_store', 'attention'];
const opSet = new Set<Op>(ENGINE_OPS);

/** True when an engine can compute `node` (every op of ENGINE_OPS; matmul weights need rows of a multiple of 32 columns). */
export function npuSupportsNode(node: TensorDesc, graph: Graph): boolean {
  if (!opSet.has(node.op)) return false;
  if (node.op === 'mul_mat') {
    const w = graph.tensors[node.src[0]!]!;
    return w.role === 'weight' && w.shape[0]! % 32 === 0;
  }
  return true;
}

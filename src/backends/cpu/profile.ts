// GGUF_EDGE_PROFILE=1 (Node): time every node of the cpu device by op (mul_mat by weight type and shape)
// and print the table to stderr at exit. Off by default: the wrappers cost a clock read per node;
// browsers have no process and never profile.
import type { Graph, TensorDesc } from '../../graph/graph.js';
import { ggmlTypeName } from '../../gguf/ggml-types.js';
import { CpuLayout } from './runtime/layouts.js';
import { typeId } from './policy.js';

type Proc = { env: Record<string, string | undefined>; on(e: string, f: () => void): void; stderr: { write(s: string): void } };
const proc = () => (globalThis as { process?: Proc }).process;

export const profileEnabled = (): boolean => !!proc()?.env.GGUF_EDGE_PROFILE;

const table = new Map<string, { ms: number; calls: number }>();
let hooked = false;
function hookReport(): void {
  const p = proc();
  if (hooked || !p) return;
  hooked = true;
  p.on('exit', () => {
    const rows = [...table.entries()].sort((a, b) => b[1].ms - a[1].ms);
    const total = rows.reduce((s, [, e]) => s + e.ms, 0);
    p.stderr.write(`cpu profile: ${total.toFixed(1)} ms in nodes\n`);
    for (const [k, e] of rows) p.stderr.write(`${e.ms.toFixed(1).padStart(10)} ms ${(100 * e.ms / total).toFixed(1).padStart(5)}% ${String(e.calls).padStart(7)}x  ${k}\n`);
  });
}

export function profileKey(g: Graph, t: TensorDesc): string {
  if (t.op !== 'mul_mat' && t.op !== 'mul_mat_id') return t.op;
  const w = g.tensors[t.src[0]!]!;
  if (t.op === 'mul_mat_id') return `mul_mat_id ${ggmlTypeName(typeId(w))} ${w.shape[1]}x${w.shape[0]}x${w.shape[2]} n=${t.shape[2] ?? 1}`;
  const layout = Object.entries(CpuLayout).find(([, id]) => id === typeId(w))?.[0];
  return `mul_mat ${layout ?? ggmlTypeName(typeId(w))} ${w.shape[1]}x${w.shape[0]} n=${g.tensors[t.src[1]!]!.shape[1] ?? 1}`;
}

/** `fn` timed under `key` */
export function profiled(key: string, fn: () => void): () => void {
  hookReport();
  return () => {
    const t0 = performance.now();
    fn();
    const e = table.get(key) ?? { ms: 0, calls: 0 };
    e.ms += performance.now() - t0; e.calls++;
    table.set(key, e);
  };
}

// Static memory planning: given each tensor's size and the interval of graph steps during which
// it is live, assign offsets in one arena so that tensors whose lifetimes overlap never share
// bytes. Done once per graph shape; computing the graph then allocates nothing.

export interface ArenaRequest {
  id: number;
  size: number;
  /** step at which the tensor is written */
  first: number;
  /** last step that reads it (Infinity: kept until the end, e.g. the logits) */
  last: number;
}

export interface ArenaPlan {
  offsets: Map<number, number>;
  size: number;
}

export function planArena(reqs: ArenaRequest[], alignment: number): ArenaPlan {
  const align = (n: number) => Math.ceil(n / alignment) * alignment;
  const live: { off: number; end: number; last: number }[] = [];
  const offsets = new Map<number, number>();
  let size = 0;
  const sorted = [...reqs].sort((a, b) => a.first - b.first || b.size - a.size);
  for (const r of sorted) {
    // release blocks whose last reader ran before this tensor is written
    for (let i = live.length - 1; i >= 0; i--) if (live[i]!.last < r.first) live.splice(i, 1);
    live.sort((a, b) => a.off - b.off);
    const need = align(Math.max(r.size, 1));
    let off = 0;
    for (const b of live) {
      if (b.off - off >= need) break;
      off = Math.max(off, b.end);
    }
    live.push({ off, end: off + need, last: r.last });
    offsets.set(r.id, off);
    size = Math.max(size, off + need);
  }
  return { offsets, size };
}

// The vocabulary as a byte trie, built once per tokenizer: a grammar mask walks the trie in preorder
// with one automaton state per depth, so a rejected prefix skips every token under it (a 150k-token
// vocabulary is a few hundred thousand byte steps, most of them cached table reads).
//
// Token bytes are the pieces without special-token text (tokenToPiece special=false): a control token
// has no text, so a grammar never produces one; end-of-generation tokens are kept aside and allowed only
// where the grammar can end (llama.cpp's rule).

export interface VocabSource {
  readonly nVocab: number;
  tokenToPiece(id: number, opts?: { special?: boolean }): Uint8Array;
  isEog(id: number): boolean;
}

export interface TokenIndex {
  nVocab: number;
  /** bytes of token t: bytes[off[t] .. off[t+1]) (empty: never allowed by a grammar) */
  off: Int32Array;
  bytes: Uint8Array;
  isEog: Uint8Array;
  eog: Int32Array;
  /** trie nodes in preorder, node 0 the root: edge byte, depth, index past the subtree */
  nodeByte: Uint8Array;
  nodeDepth: Uint16Array;
  nodeEnd: Int32Array;
  /** tokens whose bytes end at node n: tokList[tokStart[n] .. tokStart[n+1]) */
  tokStart: Int32Array;
  tokList: Int32Array;
  maxDepth: number;
  /** every printable ASCII character, tab and newline is a token of its own, so a completion made of
   * them can be spelt one byte per token (what the budget rule counts on) */
  asciiSingles: boolean;
}

const cache = new WeakMap<object, TokenIndex>();

export function tokenIndex(vocab: VocabSource): TokenIndex {
  const hit = cache.get(vocab);
  if (hit) return hit;
  const idx = buildTokenIndex(vocab);
  cache.set(vocab, idx);
  return idx;
}

export function buildTokenIndex(vocab: VocabSource): TokenIndex {
  const n = vocab.nVocab;
  const pieces: Uint8Array[] = new Array(n);
  const isEog = new Uint8Array(n);
  const eog: number[] = [];
  let total = 0;
  for (let t = 0; t < n; t++) {
    if (vocab.isEog(t)) { isEog[t] = 1; eog.push(t); pieces[t] = new Uint8Array(0); continue; }
    pieces[t] = vocab.tokenToPiece(t, { special: false });
    total += pieces[t]!.length;
  }
  const off = new Int32Array(n + 1);
  const bytes = new Uint8Array(total);
  for (let t = 0, o = 0; t < n; t++) { off[t] = o; bytes.set(pieces[t]!, o); o += pieces[t]!.length; off[t + 1] = o; }

  const order: number[] = [];
  for (let t = 0; t < n; t++) if (pieces[t]!.length > 0) order.push(t);
  const cmp = (a: Uint8Array, b: Uint8Array): number => {
    const m = Math.min(a.length, b.length);
    for (let i = 0; i < m; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return a.length - b.length;
  };
  order.sort((x, y) => cmp(pieces[x]!, pieces[y]!) || x - y);

  // preorder trie from the sorted pieces: each token opens nodes past its common prefix with the last
  const nodeByte: number[] = [0], nodeDepth: number[] = [0], nodeEnd: number[] = [0], nodeTok: number[] = [];
  const tokNode: number[] = [];
  const path: number[] = [0]; // node at each depth of the current token
  let prev: Uint8Array = new Uint8Array(0);
  const singles = new Uint8Array(256);
  let maxDepth = 0;
  for (const t of order) {
    const p = pieces[t]!;
    if (p.length === 1) singles[p[0]!] = 1;
    let l = 0;
    const m = Math.min(p.length, prev.length);
    while (l < m && p[l] === prev[l]) l++;
    for (let d = prev.length; d > l; d--) nodeEnd[path[d]!] = nodeByte.length;
    path.length = l + 1;
    for (let d = l + 1; d <= p.length; d++) {
      path[d] = nodeByte.length;
      nodeByte.push(p[d - 1]!); nodeDepth.push(d); nodeEnd.push(0);
    }
    tokNode.push(path[p.length]!);
    nodeTok.push(t);
    if (p.length > maxDepth) maxDepth = p.length;
    prev = p;
  }
  for (let d = prev.length; d >= 0; d--) nodeEnd[path[d]!] = nodeByte.length;
  nodeEnd[0] = nodeByte.length;
  const nNodes = nodeByte.length;
  const tokStart = new Int32Array(nNodes + 1);
  for (const nd of tokNode) tokStart[nd + 1]!++;
  for (let i = 0; i < nNodes; i++) tokStart[i + 1]! += tokStart[i]!;
  // tokens were appended in node order, so tokList is nodeTok as is
  return {
    nVocab: n, off, bytes, isEog, eog: Int32Array.from(eog),
    nodeByte: Uint8Array.from(nodeByte), nodeDepth: Uint16Array.from(nodeDepth), nodeEnd: Int32Array.from(nodeEnd),
    tokStart, tokList: Int32Array.from(nodeTok), maxDepth,
    asciiSingles: singles.slice(0x20, 0x7f).every((x) => x === 1) && singles[9] === 1 && singles[10] === 1,
  };
}

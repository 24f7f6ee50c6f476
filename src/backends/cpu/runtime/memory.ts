// The cpu runtime's memory: one shared WebAssembly.Memory, a first-fit allocator over it with a free list
// that coalesces neighbours (wasm memory cannot shrink, but a freed range is reused, so allocate/free
// cycles of any size mix never grow it), cached whole-memory typed arrays, and scratch regions that grow
// by doubling. Nothing here runs per token: allocation happens at load and plan time.
import { CpuRuntimeError } from './errors.js';

export const PAGE = 65536;
export const WASM32_MAX_PAGES = 65536;
/** the first 64 KiB stay unused: pointer 0 means "none" to kernels */
export const HEAP_BASE = PAGE;

export function alignUp(x: number, a: number): number {
  return Math.ceil(x / a) * a;
}

/**
 * A fixed region of the wasm memory planned at context creation (the activation arena): bump-allocate
 * tensors in it, `reset()` between graph evaluations; nothing is allocated per token.
 */
export interface CpuArena {
  readonly base: number;
  readonly size: number;
  /** bytes in use */
  readonly used: number;
  alloc(bytes: number, align?: number): number;
  reset(): void;
}

export class WasmHeap {
  /** end of the highest live allocation (everything above is free) */
  private top = HEAP_BASE;
  /** live allocations: start -> [start of the range taken (before alignment), end] */
  private readonly live = new Map<number, { from: number; end: number }>();
  /** free ranges below top, sorted by start, never adjacent (coalesced) */
  private readonly holes: { start: number; end: number }[] = [];
  private buf: ArrayBuffer | SharedArrayBuffer;
  private heap8: Uint8Array | null = null;
  private heap32: Float32Array | null = null;
  private heapi32: Int32Array | null = null;

  constructor(readonly memory: WebAssembly.Memory, private readonly maxPages: number) {
    this.buf = memory.buffer;
  }

  get maxBytes(): number { return this.maxPages * PAGE; }
  /** end of the highest live allocation: the memory the heap needs */
  used(): number { return this.top; }
  /** bytes in live allocations (alignment padding included) */
  liveBytes(): number {
    let n = 0;
    for (const r of this.live.values()) n += r.end - r.from;
    return n;
  }

  /** `bytes` aligned to `align` (default 64): the first free range that fits, else the top (growing the memory) */
  alloc(bytes: number, align = 64): number {
    if (!(bytes >= 0) || !Number.isFinite(bytes)) throw new CpuRuntimeError('BAD_SHAPE', `cannot allocate ${bytes} bytes`);
    if (!(align >= 1) || (align & (align - 1))) throw new CpuRuntimeError('BAD_SHAPE', `bad alignment ${align}`);
    const size = Math.max(bytes, 1); // distinct pointers for empty allocations
    const holes = this.holes;
    for (let i = 0; i < holes.length; i++) {
      const h = holes[i]!;
      if (h.start < this.floor) continue;
      const p = alignUp(h.start, align);
      if (p + size > h.end) continue;
      // the alignment gap [from, p) travels with the allocation and comes back with it
      const from = h.start;
      if (p + size === h.end) holes.splice(i, 1);
      else h.start = p + size;
      this.live.set(p, { from, end: p + size });
      return p;
    }
    const from = this.top;
    const p = alignUp(from, align);
    const end = p + size;
    this.ensure(end, bytes);
    this.top = end;
    this.live.set(p, { from, end });
    return p;
  }

  /** returns an allocation to the free list (merged with free neighbours; the top comes down when it can) */
  free(ptr: number): void {
    const r = this.live.get(ptr);
    if (!r) throw new CpuRuntimeError('BAD_SHAPE', `free of ${ptr}, which is not a live allocation`);
    this.live.delete(ptr);
    this.addHole(r.from, r.end);
  }
  private addHole(start: number, end: number): void {
    const holes = this.holes;
    // insertion point: first hole starting after `start`
    let i = 0;
    while (i < holes.length && holes[i]!.start < start) i++;
    const prev = i > 0 ? holes[i - 1]! : null, next = i < holes.length ? holes[i]! : null;
    if (prev && prev.end === start) {
      prev.end = end;
      if (next && next.start === end) { prev.end = next.end; holes.splice(i, 1); }
    } else if (next && next.start === end) {
      next.start = start;
    } else {
      holes.splice(i, 0, { start, end });
    }
    // a hole reaching the top is not a hole: lower the top
    const last = holes[holes.length - 1];
    if (last && last.end === this.top) {
      this.top = last.start;
      holes.pop();
    }
  }

  /**
   * Scoped scratch: the current top; until `release(mark)`, allocations are placed above it (not in
   * holes below), so the release frees exactly what was allocated since.
   */
  mark(): number {
    this.marks.push(this.top);
    this.floor = this.top;
    return this.top;
  }
  /** frees every live allocation at or above `mark` */
  release(mark: number): void {
    if (mark < HEAP_BASE || mark > this.top) throw new CpuRuntimeError('BAD_SHAPE', `bad mark ${mark}`);
    const above: number[] = [];
    for (const p of this.live.keys()) if (p >= mark) above.push(p);
    for (const p of above) this.free(p);
    while (this.marks.length && this.marks[this.marks.length - 1]! >= mark) this.marks.pop();
    this.floor = this.marks.length ? this.marks[this.marks.length - 1]! : 0;
  }
  private readonly marks: number[] = [];
  /** holes below this are not used while a mark is outstanding */
  private floor = 0;

  createArena(bytes: number): CpuArena {
    const base = this.alloc(bytes, 64);
    let top = base;
    return {
      base,
      size: bytes,
      get used() { return top - base; },
      alloc(n: number, align = 64): number {
        const p = alignUp(top, align);
        if (p + n > base + bytes) {
          throw new CpuRuntimeError('OUT_OF_MEMORY', `cpu arena: allocating ${n} bytes needs ${p + n - base} of the arena's ${bytes} bytes`);
        }
        top = p + n;
        return p;
      },
      reset(): void { top = base; },
    };
  }

  /** grows the memory to hold `end` bytes */
  private ensure(end: number, bytes: number): void {
    const have = this.memory.buffer.byteLength;
    if (end <= have) return;
    const limit = this.maxPages * PAGE;
    if (end > limit) {
      throw new CpuRuntimeError('OUT_OF_MEMORY',
        `cpu memory: allocating ${bytes} bytes would need ${end} bytes of WebAssembly memory (${this.top} in use), ` +
        `more than the limit of ${limit} bytes (wasm32 addresses at most 4 GiB)`);
    }
    const pages = Math.ceil((end - have) / PAGE);
    try {
      this.memory.grow(pages);
    } catch (e) {
      throw new CpuRuntimeError('OUT_OF_MEMORY', `cpu memory: cannot grow WebAssembly memory from ${have} to ${have + pages * PAGE} bytes for an allocation of ${bytes} bytes: ${(e as Error).message}`);
    }
  }

  buffer(): ArrayBuffer | SharedArrayBuffer {
    if (this.buf.byteLength !== this.memory.buffer.byteLength) { this.buf = this.memory.buffer; this.heap32 = null; this.heapi32 = null; this.heap8 = null; }
    return this.buf;
  }
  /** typed arrays over the whole memory, rebuilt only when the memory grew */
  u8All(): Uint8Array { const b = this.buffer(); return (this.heap8 ??= new Uint8Array(b)); }
  f32All(): Float32Array { const b = this.buffer(); return (this.heap32 ??= new Float32Array(b)); }
  i32All(): Int32Array { const b = this.buffer(); return (this.heapi32 ??= new Int32Array(b)); }
}

/** A runtime-internal scratch buffer that grows (by doubling, the old range freed) to the largest shape seen. */
export class ScratchRegion {
  ptr = 0;
  bytes = 0;
  constructor(private readonly heap: WasmHeap) {}
  /** the region, grown to at least `bytes` */
  grow(bytes: number): number {
    if (bytes > this.bytes) {
      const size = Math.max(bytes, this.bytes * 2);
      if (this.ptr) this.heap.free(this.ptr);
      this.ptr = 0; this.bytes = 0;
      this.ptr = this.heap.alloc(size, 64);
      this.bytes = size;
    }
    return this.ptr;
  }
  /** forgets the region when a release(mark) freed it; true when it did */
  dropAbove(mark: number): boolean {
    if (this.ptr === 0 || this.ptr < mark) return false;
    this.ptr = 0;
    this.bytes = 0;
    return true;
  }
  /** frees the region */
  dispose(): void {
    if (this.ptr) this.heap.free(this.ptr);
    this.ptr = 0;
    this.bytes = 0;
  }
}

// The first cache row a query token at row p0 sees: its sequence's region start when several sequences share the
// cache (seqStride rows each), or its sliding window's start (window > 0), whichever is later.
@inline export function window_start(p0: i32, stride: i32, window: i32): i32 {
  const lo0 = stride > 0 ? p0 - p0 % stride : 0;
  return window > 0 ? max(lo0, p0 - window + 1) : lo0;
}

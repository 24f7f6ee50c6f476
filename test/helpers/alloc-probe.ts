// Allocation probe for the zero-allocation proofs: runs `step` until V8's JIT has settled, then 1,000
// more times, and reports how much the young generation grew and how many young-generation
// collections (scavenges) started during those 1,000 steps.
import v8 from 'node:v8';
import { PerformanceObserver, constants } from 'node:perf_hooks';

export const newSpaceUsed = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;

export async function probeAllocation(step: () => void, warmupWindows: number): Promise<{ grown: number; scavenges: number }> {
  // warm-up until the JIT has settled (tiering up and on-stack replacement allocate while they happen):
  // windows of 200 steps until one leaves the new space as it found it
  for (let w = 0; w < warmupWindows; w++) {
    const b = newSpaceUsed();
    for (let i = 0; i < 200; i++) step();
    const d = newSpaceUsed() - b;
    if (d >= 0 && d < 4096) break;
  }
  const minor: number[] = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minor.push(e.startTime);
  });
  obs.observe({ entryTypes: ['gc'] });
  const before = newSpaceUsed(), t0 = performance.now();
  for (let i = 0; i < 1000; i++) step();
  const t1 = performance.now(), grown = newSpaceUsed() - before;
  await new Promise((r) => setTimeout(r, 200)); // GC entries are delivered asynchronously, after a timer tick
  obs.disconnect();
  return { grown, scavenges: minor.filter((t) => t >= t0 && t <= t1).length };
}

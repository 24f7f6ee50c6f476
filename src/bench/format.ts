// Bench result output: a llama-bench style markdown table, CSV, or one JSON array.
import type { BenchResult } from './runner.js';

export type BenchFormat = 'md' | 'json' | 'csv';

export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  return `${(n / (1 << 20)).toFixed(2)} MiB`;
}

export function formatParams(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} B`;
  return `${(n / 1e6).toFixed(2)} M`;
}

export function formatTps(mean: number, sd: number): string {
  return `${mean.toFixed(2)} ± ${sd.toFixed(2)}`;
}

/** A markdown table with right-aligned numbers, like llama-bench's. */
export function markdownTable(header: string[], rows: string[][], rightAlign: boolean[]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => '| ' + cells.map((c, i) => (rightAlign[i] ? c.padStart(w[i]!) : c.padEnd(w[i]!))).join(' | ') + ' |';
  const sep = '| ' + w.map((n, i) => (rightAlign[i] ? '-'.repeat(n - 1) + ':' : '-'.repeat(n))).join(' | ') + ' |';
  return [line(header), sep, ...rows.map(line)].join('\n') + '\n';
}

export function toMarkdown(results: BenchResult[]): string {
  const header = ['model', 'type', 'size', 'params', 'engine', 'device', 'threads', 'test', 't/s'];
  const rows = results.map((r) => [r.model, r.model_type, formatBytes(r.model_bytes), formatParams(r.model_params), r.engine, r.device, String(r.threads), r.test, formatTps(r.tps_mean, r.tps_sd)]);
  const align = [false, false, true, true, false, false, true, true, true];
  // runs on a simulated device: their simulated tokens/s beside the wall-clock ones
  if (results.some((r) => r.sim_tps !== undefined)) {
    header.push('sim t/s');
    results.forEach((r, i) => rows[i]!.push(r.sim_tps !== undefined ? r.sim_tps.toFixed(2) : '-'));
    align.push(true);
  }
  return markdownTable(header, rows, align);
}

const CSV_FIELDS: (keyof BenchResult)[] = ['model', 'model_type', 'model_bytes', 'model_params', 'engine', 'device', 'threads', 'test', 'n_prompt', 'n_gen', 'reps', 'avg_ms', 'tps_mean', 'tps_sd', 'n_depth'];

function csvCell(v: unknown): string {
  const s = typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(6)) : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(results: BenchResult[]): string {
  return [CSV_FIELDS.join(','), ...results.map((r) => CSV_FIELDS.map((f) => csvCell(r[f])).join(','))].join('\n') + '\n';
}

export function toJson(results: BenchResult[]): string {
  return JSON.stringify(results, null, 2) + '\n';
}

export function formatResults(results: BenchResult[], format: BenchFormat): string {
  return format === 'json' ? toJson(results) : format === 'csv' ? toCsv(results) : toMarkdown(results);
}

// Peak memory of a process, for hostile-input tests that put the measured peak in their assertion:
// VmHWM (the high-water mark of resident memory) from /proc, which the kernel resets for a process
// when "5" is written to its clear_refs (Linux ≥ 4.0).
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

function statusField(pid: number | 'self', field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(m[1]) / 1024;
}

/** Resident memory now, in MiB. */
export const rssMb = (pid: number | 'self' = 'self'): number => statusField(pid, 'VmRSS');

/** The peak resident memory since start (or the last resetPeak), in MiB. */
export const peakRssMb = (pid: number | 'self' = 'self'): number => statusField(pid, 'VmHWM');

/** Lowers the peak to the current resident memory (the process must be ours). */
export function resetPeak(pid: number | 'self' = 'self'): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

export interface Measured<T> {
  /** What fn returned, or the error it threw. */
  outcome: { value: T } | { error: unknown };
  ms: number;
  /** Peak resident memory while fn ran, in MiB. */
  peakMb: number;
  /** How far the peak rose above the resident memory at the start, in MiB. */
  growthMb: number;
}

/**
 * Runs fn with the peak of `pid` (this process by default) reset first, and reports its time and
 * peak. A collection first (when exposed) keeps earlier tests' garbage out of the figure.
 */
export async function measurePeak<T>(fn: () => Promise<T>, pid: number | 'self' = 'self'): Promise<Measured<T>> {
  (globalThis as { gc?: () => void }).gc?.();
  resetPeak(pid);
  const before = rssMb(pid);
  const started = performance.now();
  let outcome: Measured<T>['outcome'];
  try {
    outcome = { value: await fn() };
  } catch (error) {
    outcome = { error };
  }
  const ms = performance.now() - started;
  const peakMb = peakRssMb(pid);
  return { outcome, ms, peakMb, growthMb: peakMb - before };
}

/**
 * Appends a figure to the file named by HOSTILE_REPORT, when set (the before/after table of the
 * hostile tests is made from these lines); otherwise does nothing.
 */
export function recordFigure(
  name: string,
  m: Pick<Measured<unknown>, 'ms' | 'peakMb' | 'growthMb'>,
  outcome: string,
): void {
  const file = process.env.HOSTILE_REPORT;
  if (file)
    fs.appendFileSync(
      file,
      `${JSON.stringify({ name, ms: Math.round(m.ms), peakMb: Math.round(m.peakMb), growthMb: Math.round(m.growthMb), outcome })}\n`,
    );
}

// Bounds on the programs reelay runs on what origins send (ffmpeg, ffprobe, yt-dlp): memory and CPU
// time. Two layers, because neither alone both holds and says why:
// - rlimits set by /bin/sh before it execs the program (RLIMIT_DATA, RLIMIT_CPU): the kernel holds
//   them whatever this process is doing. RLIMIT_DATA, not RLIMIT_AS: ffmpeg's threads and glibc's
//   arenas reserve address space they never touch (a 1080p libx264 convert peaks at 1.1 GB of VmPeak
//   for 0.5 GB resident and 0.75 GB of data), so an address-space bound kills honest jobs.
// - a watchdog reading /proc/<pid> every 50 ms, which kills the process group at the bound
//   and so knows which bound it was; the CPU rlimit sits a little above it as the backstop.
// A program that hits the data rlimit first only sees allocations fail; that shows in its stderr
// (ENOMEM, MemoryError) or in the watchdog's last sample, and is told apart in limitExceeded().
import fs from 'node:fs';

export interface ChildLimits {
  /** Data (heap and private writable mappings) bound in MiB: JOB_MAX_MEMORY_MB. */
  memoryMb: number;
  /** CPU time of all its threads together: JOB_MAX_CPU_SECONDS. */
  cpuSeconds: number;
}

export type LimitKind = 'memory' | 'cpu';

/** Extra CPU seconds before the kernel's SIGKILL, so the watchdog, which names the bound, acts first. */
const CPU_BACKSTOP_SECONDS = 2;
const SAMPLE_MS = 50;
// Linux reports utime/stime in clock ticks; USER_HZ is 100 on every architecture Node runs on.
const TICKS_PER_SECOND = 100;
// Sets the hard limits then execs the program with its own arguments ("$@"): nothing is interpolated.
const SCRIPT = 'ulimit -d "$1" && ulimit -t "$2" && shift 2 && exec "$@"';

/** The command that runs `binary args` under the limits: file and argument array for execa. */
export function limitedCommand(
  binary: string,
  args: readonly string[],
  limits: ChildLimits,
): { file: string; args: string[] } {
  const dataKb = String(limits.memoryMb * 1024);
  const cpu = String(limits.cpuSeconds + CPU_BACKSTOP_SECONDS);
  return { file: '/bin/sh', args: ['-c', SCRIPT, 'sh', dataKb, cpu, binary, ...args] };
}

/** What the watchdog saw of one process. */
export interface ChildPeak {
  /** Highest resident set (VmHWM), KiB. */
  rssKb: number;
  /** Highest data size (VmData), KiB. */
  dataKb: number;
  cpuSeconds: number;
}

/** Samples one process and kills its process group (it runs detached) once past a bound. */
export class ChildWatch {
  readonly peak: ChildPeak = { rssKb: 0, dataKb: 0, cpuSeconds: 0 };
  /** The bound the watchdog killed the process for. */
  exceeded: LimitKind | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pid: number | undefined,
    readonly limits: ChildLimits,
  ) {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    this.sample(); // a last look: a short run may not have been sampled at all
    clearInterval(this.timer);
  }

  /** Which bound a failed run went past, if any; `stderr` is the program's last words. */
  limitExceeded(stderr: string): LimitKind | undefined {
    if (this.exceeded) return this.exceeded;
    if (this.peak.cpuSeconds >= this.limits.cpuSeconds) return 'cpu';
    // A failed run whose data or resident peak (VmHWM stays at its peak, so a late sample still
    // sees it) came within a tenth of the bound ran into it; so did one that says it ran out.
    const nearBound = Math.max(this.peak.dataKb, this.peak.rssKb) >= this.limits.memoryMb * 1024 * 0.9;
    if (
      nearBound ||
      /Cannot allocate memory|Memory allocation error|MemoryError|out of memory|std::bad_alloc/i.test(stderr)
    )
      return 'memory';
    return undefined;
  }

  /** A sentence for messages: "ffmpeg went past its memory bound of 1024 MB". */
  describe(program: string, kind: LimitKind): string {
    return kind === 'memory'
      ? `${program} went past its memory bound of ${this.limits.memoryMb} MB`
      : `${program} went past its CPU-time bound of ${this.limits.cpuSeconds} s`;
  }

  private sample(): void {
    if (this.pid === undefined || this.exceeded) return;
    const sample = readProc(this.pid);
    if (!sample) return;
    this.peak.rssKb = Math.max(this.peak.rssKb, sample.rssKb);
    this.peak.dataKb = Math.max(this.peak.dataKb, sample.dataKb);
    this.peak.cpuSeconds = Math.max(this.peak.cpuSeconds, sample.cpuSeconds);
    if (sample.rssKb >= this.limits.memoryMb * 1024) this.kill('memory');
    else if (sample.cpuSeconds >= this.limits.cpuSeconds) this.kill('cpu');
  }

  private kill(kind: LimitKind): void {
    this.exceeded = kind;
    try {
      process.kill(-this.pid!, 'SIGKILL');
    } catch {
      // the group is gone already: the run has ended on its own
    }
  }
}

/** VmHWM, VmData and CPU time of a live process; undefined once it is gone (or not Linux). */
export function readProc(pid: number): ChildPeak | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    // Fields after the command name (which may hold spaces and parentheses): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssKb: kb('VmHWM'), dataKb: kb('VmData'), cpuSeconds: ticks / TICKS_PER_SECOND };
  } catch {
    return undefined;
  }
}

/**
 * The errno of a program the shell could not exec (it exits 127 when not found, 126 when not
 * executable), so callers report a missing binary as they did before the shell stood in between.
 */
export function execFailure(exitCode: number | undefined, stderr: string): 'ENOENT' | 'EACCES' | undefined {
  if (exitCode === 127 && /^sh: \d+: (?:exec: )?.*not found/m.test(stderr)) return 'ENOENT';
  if (exitCode === 126 && /^sh: \d+: (?:exec: )?.*(?:Permission denied|cannot execute)/m.test(stderr)) return 'EACCES';
  return undefined;
}

// A log directory's free space against its floor (log.dir.min.free.bytes) and alert threshold
// (log.dir.free.bytes.alert.threshold), after Redpanda's storage_min_free_bytes: below the floor
// the broker refuses clients' produce to the directory's partitions, so the operator (or
// retention) can free space before a real ENOSPC takes the directory offline; everything that
// frees space or reads keeps working.
//
// The volume is sampled with statfs through the FileSystem port at a bounded interval (the
// owner's timer calls maybeSample). Between two samples each admitted produce's bytes are
// subtracted from the last sample, and a sample is taken at once when that estimate crosses the
// floor, so a fast producer cannot run far past it in the interval (one request at most: a sample
// sees the volume before that request's write). Writes the broker makes itself (coordinators, the
// metadata log) are not refused and show in the next sample: the floor is their headroom; the
// broker stops its followers of clients' topics while the directory is under the floor.
import type { FileSystem } from './fs.js';

/** ok; low: under the alert threshold; full: under the floor, clients' produce refused; offline: an I/O error took the directory offline. */
export type LogDirSpaceState = 'ok' | 'low' | 'full' | 'offline';

export interface FreeSpaceThresholds {
  /** Below this many usable bytes clients' produce is refused (0: never). */
  minFreeBytes: number;
  /** Below this many the directory is reported low (an alert; at or under the floor: none beyond it). */
  alertFreeBytes: number;
}

/** What /metrics, /v1/node, DescribeLogDirs and the console show of a directory. */
export interface LogDirSpaceView {
  path: string;
  state: LogDirSpaceState;
  /** The volume's size and usable bytes at the last sample (-1: unknown or unbounded). */
  totalBytes: number;
  usableBytes: number;
  minFreeBytes: number;
  alertFreeBytes: number;
  /** Clients' produces (partitions) refused since start for being under the floor. */
  producesRefused: number;
}

export interface LogDirFreeSpaceOptions {
  dir: string;
  fs: FileSystem;
  /** Read at each sample, so a dynamic change applies within one interval. */
  thresholds: () => FreeSpaceThresholds;
  /** How often maybeSample looks at the volume. */
  intervalMs: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export class LogDirFreeSpace {
  private state: Exclude<LogDirSpaceState, 'offline'> = 'ok';
  private totalBytes = -1;
  private usableBytes = -1;
  private thresholds: FreeSpaceThresholds = { minFreeBytes: 0, alertFreeBytes: 0 };
  /** Bytes admitted since the last sample (not yet seen by statfs, as far as we know). */
  private admittedSinceSample = 0;
  private lastSampleMs = -Infinity;
  private statfsFailed = false;
  producesRefused = 0;

  constructor(private readonly o: LogDirFreeSpaceOptions) {}

  /** Samples when the interval has passed since the last sample. */
  maybeSample(nowMs: number): void {
    if (nowMs - this.lastSampleMs >= this.o.intervalMs) this.sample(nowMs);
  }

  /** statfs now, and the state that follows from it. */
  sample(nowMs: number): void {
    this.lastSampleMs = nowMs;
    this.admittedSinceSample = 0;
    this.thresholds = this.o.thresholds();
    try {
      const v = this.o.fs.statfs(this.o.dir);
      this.totalBytes = v.totalBytes;
      this.usableBytes = v.usableBytes;
      this.statfsFailed = false;
    } catch (e) {
      // Unknown space refuses nothing (as before this check existed); said once per failure spell.
      if (!this.statfsFailed) this.o.log?.('warn', `statfs ${this.o.dir} failed, free space unknown: ${(e as Error).message}`);
      this.statfsFailed = true;
      this.totalBytes = -1;
      this.usableBytes = -1;
    }
    const next = stateOf(this.usableBytes, this.thresholds);
    if (next !== this.state) this.announce(this.state, next);
    this.state = next;
  }

  private announce(from: LogDirSpaceState, to: LogDirSpaceState): void {
    const { minFreeBytes, alertFreeBytes } = this.thresholds;
    const free = `${this.usableBytes} bytes usable of ${this.totalBytes}`;
    if (to === 'full') {
      this.o.log?.('error', `log directory ${this.o.dir} is below log.dir.min.free.bytes (${free}, floor ${minFreeBytes}): clients' produce to its partitions is refused (NOT_ENOUGH_REPLICAS, retriable) until space is freed`);
    } else if (to === 'low') {
      this.o.log?.(from === 'full' ? 'info' : 'warn', `log directory ${this.o.dir} is below log.dir.free.bytes.alert.threshold (${free}, threshold ${alertFreeBytes}, floor ${minFreeBytes})${from === 'full' ? ': above the floor again, produce accepted' : ''}`);
    } else {
      this.o.log?.('info', `log directory ${this.o.dir} has room again (${free})${from === 'full' ? ': produce accepted' : ''}`);
    }
  }

  /**
   * Before a client's append of `bytes` to a partition of this directory: null to go ahead, else
   * why it is refused (the directory is under the floor).
   */
  admit(bytes: number, nowMs: number): string | null {
    this.count(bytes, nowMs);
    if (this.state !== 'full') return null;
    this.producesRefused++;
    return `log directory ${this.o.dir} has ${this.usableBytes} usable bytes, below log.dir.min.free.bytes ${this.thresholds.minFreeBytes}: produce is refused until space is freed (retention, DeleteRecords, a topic deletion)`;
  }

  /**
   * Before a follower fetches for a partition of this directory: whether it may (not under the
   * floor). `maxBytes` is what that fetch may bring at most; counted as a client's append is, so a
   * follower close to the floor samples at once instead of overshooting it until the next tick.
   */
  mayReplicate(maxBytes: number, nowMs: number): boolean {
    this.count(maxBytes, nowMs);
    return this.state !== 'full';
  }

  /** Bytes about to be written since the last sample; statfs again when they would cross the floor. */
  private count(bytes: number, nowMs: number): void {
    if (this.state !== 'full' && this.usableBytes >= 0 && this.thresholds.minFreeBytes > 0) {
      this.admittedSinceSample += bytes;
      if (this.usableBytes - this.admittedSinceSample < this.thresholds.minFreeBytes) this.sample(nowMs);
    }
  }

  /** Under the floor at the last sample (clients' produce refused, followers paused). */
  get belowFloor(): boolean { return this.state === 'full'; }

  view(offline: boolean): LogDirSpaceView {
    return {
      path: this.o.dir, state: offline ? 'offline' : this.state, totalBytes: this.totalBytes, usableBytes: this.usableBytes,
      minFreeBytes: this.thresholds.minFreeBytes, alertFreeBytes: this.thresholds.alertFreeBytes, producesRefused: this.producesRefused,
    };
  }
}

/** The state of `usableBytes` (-1: unknown, never refused) against the thresholds. */
export function stateOf(usableBytes: number, t: FreeSpaceThresholds): Exclude<LogDirSpaceState, 'offline'> {
  if (usableBytes < 0) return 'ok';
  if (usableBytes < t.minFreeBytes) return 'full';
  if (usableBytes < t.alertFreeBytes) return 'low';
  return 'ok';
}

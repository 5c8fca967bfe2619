// What the mirror's tasks share: their clients, a stop signal, a sleep that wakes on stop, and
// the loop that starts a task (retrying) and runs its steps until the engine stops.
import type { ClusterClientOptions } from '../client/index.js';
import type { Logger } from '../util/index.js';
import type { MirrorMetrics } from './metrics.js';

export interface TaskContext {
  logger: Logger;
  metrics: MirrorMetrics;
  /** Client options per cluster alias (bootstrap, TLS, SASL). */
  clients: ReadonlyMap<string, ClusterClientOptions>;
  /** How often delayed offset syncs go out and source offsets are flushed (Connect's offset.flush.interval.ms). */
  offsetFlushIntervalMs: number;
  /** Longest a task waits for one of its internal topics to be read to its end. */
  loadTimeoutMs: number;
  stopping(): boolean;
}

/** Sleeps `ms`, waking early (within 50 ms) once the task is stopping. */
export async function pause(ctx: TaskContext, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!ctx.stopping() && Date.now() < until) await new Promise((r) => setTimeout(r, Math.min(50, until - Date.now())));
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** One task's life: `start` retried until it succeeds, then `step` until the engine stops. */
export interface TaskLoop {
  /** Internal topics, stored positions, producers; retried every `startRetryMs` after a failure. */
  start(): Promise<void>;
  /** One unit of work; a failure is reported and `recover` runs before the next. */
  step(): Promise<void>;
  recover(): Promise<void>;
  /** Reports a failure of 'start' or 'step' (log and the status' last error). */
  fail(phase: 'start' | 'step', err: unknown): void;
  /** Pause after a step that failed, and after every step (ms). */
  pauseAfterFailureMs: number;
  pauseAfterStepMs: number;
  startRetryMs: number;
}

/** Runs a task's loop to the engine's stop; the caller closes its clients after. */
export async function runTaskLoop(ctx: TaskContext, t: TaskLoop): Promise<void> {
  while (!ctx.stopping()) {
    try {
      await t.start();
      break;
    } catch (err) {
      t.fail('start', err);
      await pause(ctx, t.startRetryMs);
    }
  }
  while (!ctx.stopping()) {
    try {
      await t.step();
    } catch (err) {
      t.fail('step', err);
      await t.recover();
      await pause(ctx, t.pauseAfterFailureMs);
    }
    if (t.pauseAfterStepMs > 0) await pause(ctx, t.pauseAfterStepMs);
  }
}

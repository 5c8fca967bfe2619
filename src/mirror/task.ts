// What the mirror's tasks share: their clients, a stop signal, and a sleep that wakes on stop.
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

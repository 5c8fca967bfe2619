// Trace minimisation for a failing seed: delta debugging (Zeller's ddmin) over the run's chaos
// schedule. The seed keeps driving everything else (cluster shape, timeouts, network noise), so a
// candidate schedule is just "the same run with some faults left out"; it counts as reproducing
// when the run fails with the same kind of violation. Inside-the-driver crashes (before an fsync,
// after a quorum-state write) are not events of the schedule; they are switched off as a whole when
// the failure does not need them.
import { runSeed, type ChaosEvent, type SimOptions, type SimResult } from './sim.js';

export interface MinimizeOptions {
  /** Stop after this many simulation runs (each is one whole seed). */
  readonly runsMax?: number;
  /** Stop after this much wall time. */
  readonly timeMs?: number;
  /** Trace lines kept from the final, minimal run. */
  readonly traceLength?: number;
}

export interface MinimizeResult {
  readonly seed: number;
  readonly violation: string;
  readonly originalEvents: number;
  readonly schedule: readonly ChaosEvent[];
  readonly driverCrashes: boolean;
  /** The minimal run itself (its violation and trace). */
  readonly result: SimResult;
  readonly runs: number;
  /** False when the budget ran out before ddmin finished (the schedule is shorter, not minimal). */
  readonly complete: boolean;
}

/** A violation with the numbers taken out: "n# applied ..." and "n# truncated ..." are kinds. */
export function violationKind(violation: string): string {
  return violation.replace(/\d+/g, '#').split(/\s+/).slice(0, 2).join(' ');
}

export function minimizeSeed(options: SimOptions, budget: MinimizeOptions = {}): MinimizeResult | undefined {
  const base: SimOptions = { ...options, traceLength: 0, maxSteps: undefined };
  const first = runSeed({ ...base, schedule: options.schedule });
  if (first.ok) return undefined;
  const kind = violationKind(first.violation!);
  const runsMax = budget.runsMax ?? 3000;
  const deadline = Date.now() + (budget.timeMs ?? 60_000);
  let runs = 1;
  let exhausted = false;
  const fails = (schedule: readonly ChaosEvent[], driverCrashes: boolean): boolean => {
    if (runs >= runsMax || Date.now() > deadline) { exhausted = true; return false; }
    runs++;
    const r = runSeed({ ...base, schedule, driverCrashes });
    return !r.ok && violationKind(r.violation!) === kind;
  };

  let schedule: readonly ChaosEvent[] = first.schedule;
  let driverCrashes = options.driverCrashes ?? true;
  // The recorded schedule replays the same run; if it somehow does not, there is nothing to cut.
  if (fails(schedule, driverCrashes)) {
    if (driverCrashes && fails(schedule, false)) driverCrashes = false;
    schedule = ddmin(schedule, (s) => fails(s, driverCrashes));
  }
  const result = runSeed({ ...options, maxSteps: undefined, schedule, driverCrashes, traceLength: budget.traceLength ?? 150 });
  return {
    seed: options.seed, violation: first.violation!, originalEvents: first.schedule.length, schedule, driverCrashes, result, runs,
    complete: !exhausted,
  };
}

/** The smallest subsequence (1-minimal) of `items` for which `fails` holds, given that it holds for all. */
export function ddmin<T>(items: readonly T[], fails: (subset: readonly T[]) => boolean): readonly T[] {
  let current = items;
  let n = 2;
  while (current.length >= 2) {
    const chunks = split(current, n);
    let reduced = false;
    for (const chunk of chunks) {
      if (fails(chunk)) { current = chunk; n = 2; reduced = true; break; }
    }
    // With two chunks each complement is the other chunk, already tried.
    if (!reduced && n > 2) {
      for (let i = 0; i < chunks.length; i++) {
        const complement = chunks.filter((_, j) => j !== i).flat();
        if (fails(complement)) { current = complement; n = Math.max(n - 1, 2); reduced = true; break; }
      }
    }
    if (!reduced) {
      if (n >= current.length) break;
      n = Math.min(current.length, n * 2);
    }
  }
  if (current.length === 1 && fails([])) return [];
  return current;
}

function split<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  const size = items.length / n;
  for (let i = 0; i < n; i++) {
    const chunk = items.slice(Math.round(i * size), Math.round((i + 1) * size));
    if (chunk.length > 0) out.push(chunk);
  }
  return out;
}

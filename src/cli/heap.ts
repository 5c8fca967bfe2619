// The V8 heap settings of Logline's long-running processes (`logline server`, `logline bench`).
import { setFlagsFromString } from 'node:v8';

/**
 * V8 gives a small heap (a broker's, a benchmark client's) an old generation with little room:
 * after a full GC it has less free room than the new space's 16 MiB, and V8 then starts the next
 * incremental marking at once. A broker with ~15 MiB live ran 4-6 Mark-Compacts a second under
 * replication load (none are needed: what it allocates dies young), and their concurrent marking
 * took a third of its CPU. Letting the old generation grow to 4x what is live before the next one
 * ends that loop; V8's own limit (--max-old-space-size) still bounds it. An operator's own choice
 * (node's flags or NODE_OPTIONS) wins.
 */
export function tuneHeap(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? '', set: (flags: string) => void = setFlagsFromString): string | null {
  if ([...execArgv, nodeOptions].some((a) => /heap[-_]growing[-_]percent/.test(a))) return null;
  const flag = '--heap-growing-percent=300';
  set(flag);
  return flag;
}

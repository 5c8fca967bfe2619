// "Did you mean" for unknown keys: the closest known key by edit distance, when it is close; and
// the reason for a Kafka key Logline refuses.
import { keyNamesOf, refusedReason, type ConfigKind } from './table.js';

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}

export function closestKey(name: string, known: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(name.length / 4)) + 1;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestDistance) { best = k; bestDistance = d; }
  }
  return best;
}

/**
 * The error for a key that is not accepted: the reason when Kafka knows the key and Logline refuses
 * it, else "Unknown ... configuration" with the closest known key.
 */
export function unknownKeyMessage(name: string, kind: ConfigKind): string {
  const reason = refusedReason(kind, name);
  if (reason !== undefined) return `Configuration ${JSON.stringify(name)} is not accepted: ${reason}`;
  const hint = closestKey(name, keyNamesOf(kind));
  return `Unknown ${kind} configuration ${JSON.stringify(name)}${hint === undefined ? '' : ` (did you mean ${JSON.stringify(hint)}?)`}`;
}

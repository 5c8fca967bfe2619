// Compatibility levels as Confluent's registry checks them. BACKWARD: the new schema reads what
// the previous one wrote; FORWARD: the previous schema reads what the new one writes; FULL: both.
// The plain levels compare against the latest live version only, the _TRANSITIVE ones against
// every live version, newest first, stopping at the first that fails (its version is named in the
// messages, as Confluent's verbose answer does). NONE checks nothing.
import type { ParsedSchema } from './formats/index.js';

export type CompatibilityLevel = 'NONE' | 'BACKWARD' | 'BACKWARD_TRANSITIVE' | 'FORWARD' | 'FORWARD_TRANSITIVE' | 'FULL' | 'FULL_TRANSITIVE';
export const COMPATIBILITY_LEVELS: readonly CompatibilityLevel[] = ['NONE', 'BACKWARD', 'BACKWARD_TRANSITIVE', 'FORWARD', 'FORWARD_TRANSITIVE', 'FULL', 'FULL_TRANSITIVE'];
/** Confluent's default (`schema.compatibility.level`). */
export const DEFAULT_COMPATIBILITY: CompatibilityLevel = 'BACKWARD';

export function isCompatibilityLevel(value: unknown): value is CompatibilityLevel {
  return typeof value === 'string' && (COMPATIBILITY_LEVELS as readonly string[]).includes(value);
}

/** A live version to check against. */
export interface PreviousVersion { version: number; schema: ParsedSchema }

/**
 * Why `proposed` may not follow `previous` (oldest first) under `level`; empty when it may.
 */
export function compatibilityMessages(level: CompatibilityLevel, proposed: ParsedSchema, previous: readonly PreviousVersion[]): string[] {
  if (level === 'NONE' || previous.length === 0) return [];
  const transitive = level.endsWith('_TRANSITIVE');
  const base = level.replace('_TRANSITIVE', '');
  const against = transitive ? [...previous].reverse() : [previous[previous.length - 1]!];
  for (const p of against) {
    const messages: string[] = [];
    if (base === 'BACKWARD' || base === 'FULL') messages.push(...proposed.backwardIncompatibilities(p.schema));
    if (base === 'FORWARD' || base === 'FULL') messages.push(...p.schema.backwardIncompatibilities(proposed).map(asForward));
    if (messages.length > 0) {
      return [...messages, `{oldSchemaVersion: ${p.version}}`, `{oldSchema: '${p.schema.canonical}'}`, `{compatibility: '${level}'}`];
    }
  }
  return [];
}

/** A forward check runs the backward check the other way round: "new" and "old" swap in its wording. */
function asForward(message: string): string {
  return message.replace(/\bnew schema\b|\bold schema\b/g, (m) => (m === 'new schema' ? 'old schema' : 'new schema'));
}

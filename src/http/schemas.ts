// The schema registry as the console shows it: its subjects and each subject's versions, read from
// this node's replayed copy of `_schemas` (the registry's own REST API lives on its own listener,
// schema.registry.listener; the console reaches only its own origin). Like the rest of /v1 these
// are an administrator's reads: the registry's ACLs are not consulted here.
import type { CompatibilityLevel, Mode, RegistryState, SchemaReference, SchemaType } from '../registry/index.js';
import type { NodeHandle } from './node-handle.js';

export class NoRegistry extends Error {}

export interface SubjectSummary {
  subject: string;
  schemaType: SchemaType;
  /** The newest live version and its id (a soft-deleted subject: its newest version). */
  latestVersion: number;
  latestId: number;
  versions: number;
  deleted: boolean;
  /** The subject's own level and mode; null when the global one applies. */
  compatibility: CompatibilityLevel | null;
  mode: Mode | null;
}

export interface SubjectView {
  subject: string;
  /** The level and mode that apply, and whether they are the subject's own. */
  compatibility: CompatibilityLevel;
  compatibilitySource: 'subject' | 'global';
  mode: Mode;
  modeSource: 'subject' | 'global';
  versions: { version: number; id: number; schemaType: SchemaType; references: SchemaReference[]; schema: string; deleted: boolean }[];
}

function stateOf(node: NodeHandle): RegistryState {
  const r = node.schemaRegistry;
  if (r === null) throw new NoRegistry('this node serves no schema registry (schema.registry.listener)');
  if (!r.hasLocalCopy()) throw new NoRegistry('this node holds no replica of _schemas: open the console of a node that does');
  return r.state;
}

/** Every subject, soft-deleted ones included (flagged), with the global level and mode. */
export function schemaSubjects(node: NodeHandle): { compatibility: CompatibilityLevel; mode: Mode; subjects: SubjectSummary[] } {
  const state = stateOf(node);
  const live = new Set(state.listSubjects('', false));
  const subjects = state.listSubjects('', true).map((subject) => {
    const all = state.versionsOf(subject, true);
    const shown = live.has(subject) ? all.filter((v) => !v.deleted) : all;
    const latest = shown[shown.length - 1]!;
    return {
      subject, schemaType: latest.schemaType, latestVersion: latest.version, latestId: latest.id, versions: shown.length, deleted: !live.has(subject),
      compatibility: state.config(subject) ?? null, mode: state.mode(subject) ?? null,
    };
  });
  return { compatibility: state.effectiveConfig(null), mode: state.effectiveMode(null), subjects };
}

/** One subject: every version (soft-deleted ones flagged) with its text, the level and mode that apply. */
export function schemaSubject(node: NodeHandle, subject: string): SubjectView {
  const state = stateOf(node);
  const versions = state.versionsOf(subject, true).map((v) => ({ version: v.version, id: v.id, schemaType: v.schemaType, references: v.references, schema: v.schema, deleted: v.deleted }));
  const ownLevel = state.config(subject);
  const ownMode = state.mode(subject);
  return {
    subject,
    compatibility: ownLevel ?? state.effectiveConfig(null), compatibilitySource: ownLevel === undefined ? 'global' : 'subject',
    mode: ownMode ?? state.effectiveMode(null), modeSource: ownMode === undefined ? 'global' : 'subject',
    versions,
  };
}

/**
 * The page with each key and value that starts with Confluent's magic byte and a schema id this
 * node's registry knows decoded with that schema (`decodedKey`, `decodedValue`); as it is on a
 * node without a registry or a copy of `_schemas`.
 */
export function withDecoded<P extends { messages: { key: string | null; value: string | null }[] }>(node: NodeHandle, page: P): P {
  const r = node.schemaRegistry;
  if (r === null || !r.hasLocalCopy()) return page;
  const decode = (b64: string | null) => (b64 === null ? null : r.state.decodeFramed(Buffer.from(b64, 'base64')));
  return {
    ...page,
    messages: page.messages.map((m) => {
      const key = decode(m.key);
      const value = decode(m.value);
      return { ...m, ...(key ? { decodedKey: key } : {}), ...(value ? { decodedValue: value } : {}) };
    }),
  };
}

/** The schema with a global id, and the subjects and versions that hold it (soft-deleted ones flagged). */
export function schemaById(node: NodeHandle, id: number): { id: number; schemaType: SchemaType; references: SchemaReference[]; schema: string; usages: { subject: string; version: number; deleted: boolean }[] } {
  const state = stateOf(node);
  const content = state.schemaById(id);
  const live = new Set(state.usagesOfId(id, false).map((u) => `${u.subject}\u0000${u.version}`));
  const usages = state.usagesOfId(id, true).map((u) => ({ ...u, deleted: !live.has(`${u.subject}\u0000${u.version}`) }));
  return { id, schemaType: content.schemaType, references: content.references, schema: content.schema, usages };
}

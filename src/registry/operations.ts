// The registry's writes as pure operations on its state: each checks its input (throwing
// Confluent's error), and returns the `_schemas` records to append with the response to send once
// they are committed and replayed. An operation that changes nothing returns no records (the
// register of a schema the subject already has answers with its id at once).
import { limits } from '../util/index.js';
import { isCompatibilityLevel, type CompatibilityLevel } from './compatibility.js';
import { registryErrors as E } from './errors.js';
import type { RegistryRecord, SchemaValue } from './records.js';
import { MODES, type Mode, type OperationResult, type RegistryState, type SchemaRequest } from './state.js';

/** Refuses writes to a subject whose mode forbids them (READONLY, or IMPORT for a plain register). */
function checkWritable(state: RegistryState, subject: string | null): Mode {
  const mode = state.effectiveMode(subject);
  if (mode === 'READONLY' || mode === 'READONLY_OVERRIDE') throw E.operationNotPermitted(`Subject ${subject ?? ''} is in read-only mode`);
  return mode;
}

/** A register's checks up to whether the subject has the schema already (`unchanged`: its answer then). */
function registerPrefix(state: RegistryState, subject: string, request: SchemaRequest, normalize: boolean) {
  const mode = checkWritable(state, subject);
  const importing = mode === 'IMPORT';
  if (request.id !== undefined && request.id >= 0 && !importing) throw E.operationNotPermitted(`Subject ${subject} is not in import mode`);
  if (importing && (request.id === undefined || request.id < 0)) throw E.operationNotPermitted(`Subject ${subject} is in import mode: a schema id is required`);
  const parsed = state.parse(request);
  const content = { schemaType: request.schemaType, schema: state.storedText(parsed, normalize), references: request.references };
  const existing = state.findVersion(subject, content, false);
  const unchanged = existing && (!importing || existing.id === request.id) ? { id: existing.id } : null;
  return { importing, content, unchanged };
}

/**
 * The answer of a register that would change nothing (the subject has the schema), without the
 * compatibility checks of a new one; null when it would change something or be refused.
 */
export function unchangedRegister(state: RegistryState, subject: string, request: SchemaRequest, normalize: boolean): { id: number } | null {
  try {
    return registerPrefix(state, subject, request, normalize).unchanged;
  } catch {
    return null;
  }
}

export function register(state: RegistryState, subject: string, request: SchemaRequest, normalize: boolean): OperationResult<{ id: number }> {
  const { importing, content, unchanged } = registerPrefix(state, subject, request, normalize);
  if (unchanged !== null) return { records: [], response: unchanged };
  let id = state.idOfContent(content);
  let version = state.highestVersion(subject) + 1;
  if (importing) {
    // The caller's id: it must be new, or already this very schema.
    const taken = (() => { try { return state.schemaById(request.id!); } catch { return undefined; } })();
    if (taken && JSON.stringify(taken) !== JSON.stringify(content)) throw E.operationNotPermitted(`Overwrite new schema with id ${request.id} is not permitted.`);
    id = request.id!;
    if (request.version !== undefined && request.version > 0) version = request.version;
  } else {
    const messages = state.compatibility(subject, { ...request, schema: content.schema }, null);
    if (messages.length > 0) throw E.incompatible(subject, messages);
  }
  if (state.versionCount(subject) >= limits.registryVersionsPerSubjectMax) throw E.operationNotPermitted(`Subject ${subject} has ${limits.registryVersionsPerSubjectMax} versions, the most a subject may hold`);
  id ??= state.highestId + 1;
  const value: SchemaValue = { subject, version, id, ...content, deleted: false };
  return { records: [{ keytype: 'SCHEMA', subject, version, value }], response: { id } };
}

/** `version`: a number, or -1 for the latest (live for a soft delete, any for a permanent one). */
export function deleteVersion(state: RegistryState, subject: string, version: number, permanent: boolean): OperationResult<number> {
  checkWritable(state, subject);
  // A numbered version is found even when soft-deleted (to answer 40406); "latest" is the latest live one for a soft delete.
  const v = state.version(subject, version, version !== -1 || permanent);
  if (!permanent && v.deleted) throw E.versionSoftDeleted(subject, v.version);
  if (permanent && !v.deleted) throw E.versionNotSoftDeleted(subject, v.version);
  const users = state.referencedBy(subject, v.version);
  if (users.length > 0) throw E.referenceExists(`One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=${subject},version=${v.version}}.`);
  if (!permanent) return { records: [{ keytype: 'SCHEMA', subject, version: v.version, value: { ...v, deleted: true } }], response: v.version };
  return { records: [{ keytype: 'SCHEMA', subject, version: v.version, value: null }, { keytype: 'NOOP', value: { maxId: state.highestId } }], response: v.version };
}

export function deleteSubject(state: RegistryState, subject: string, permanent: boolean): OperationResult<number[]> {
  checkWritable(state, subject);
  const all = state.versionsOf(subject, true);
  const live = all.filter((v) => !v.deleted);
  if (!permanent && live.length === 0) throw E.subjectSoftDeleted(subject);
  if (permanent && live.length > 0) throw E.subjectNotSoftDeleted(subject);
  for (const v of permanent ? all : live) {
    if (state.referencedBy(subject, v.version).length > 0) throw E.referenceExists(`One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=${subject},version=${v.version}}.`);
  }
  if (!permanent) {
    const latest = live[live.length - 1]!.version;
    return { records: [{ keytype: 'DELETE_SUBJECT', subject, value: { subject, version: latest } }], response: live.map((v) => v.version) };
  }
  const records: RegistryRecord[] = all.map((v) => ({ keytype: 'SCHEMA', subject, version: v.version, value: null }));
  records.push({ keytype: 'DELETE_SUBJECT', subject, value: null }, { keytype: 'NOOP', value: { maxId: state.highestId } });
  if (state.config(subject) !== undefined) records.push({ keytype: 'CONFIG', subject, value: null });
  if (state.mode(subject) !== undefined) records.push({ keytype: 'MODE', subject, value: null });
  return { records, response: all.map((v) => v.version) };
}

/** PUT /config and /config/{subject}: the level, as Confluent accepts it (any case). */
export function setConfig(state: RegistryState, subject: string | null, level: unknown): OperationResult<{ compatibility: CompatibilityLevel }> {
  const upper = typeof level === 'string' ? level.toUpperCase() : level;
  if (!isCompatibilityLevel(upper)) throw E.invalidCompatibilityLevel();
  checkWritable(state, subject);
  return { records: [{ keytype: 'CONFIG', subject, value: { compatibilityLevel: upper } }], response: { compatibility: upper } };
}

export function deleteConfig(state: RegistryState, subject: string | null): OperationResult<{ compatibilityLevel: CompatibilityLevel }> {
  const current = state.config(subject);
  if (subject !== null && current === undefined) throw E.subjectConfigNotFound(subject);
  checkWritable(state, subject);
  return { records: current === undefined ? [] : [{ keytype: 'CONFIG', subject, value: null }], response: { compatibilityLevel: current ?? state.effectiveConfig(null) } };
}

/** PUT /mode and /mode/{subject}: IMPORT only where nothing is registered yet, unless `force`. */
export function setMode(state: RegistryState, subject: string | null, mode: unknown, force: boolean): OperationResult<{ mode: Mode }> {
  const upper = typeof mode === 'string' ? mode.toUpperCase() : mode;
  if (!(MODES as readonly unknown[]).includes(upper)) throw E.invalidMode();
  const m = upper as Mode;
  if (m === 'IMPORT' && !force && state.effectiveMode(subject) !== 'IMPORT') {
    const occupied = subject === null ? state.hasSubjects() : state.versionCount(subject) > 0;
    if (occupied) throw E.operationNotPermitted('Cannot import since found existing subjects');
  }
  return { records: [{ keytype: 'MODE', subject, value: { mode: m } }], response: { mode: m } };
}

export function deleteMode(state: RegistryState, subject: string): OperationResult<{ mode: Mode }> {
  const current = state.mode(subject);
  if (current === undefined) throw E.subjectModeNotFound(subject);
  return { records: [{ keytype: 'MODE', subject, value: null }], response: { mode: current } };
}

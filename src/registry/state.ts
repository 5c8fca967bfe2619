// The registry's state machine over `_schemas`: `replay(record)` is the only code that changes it
// (loading and live writes take the same path), queries read it, and each operation checks its
// input against it and returns the records to append with the response to send once they are
// committed and replayed (`{ records, response }`, the coordinator runtime's shape). No clock, no
// randomness, no I/O: the same log gives the same state on every node.
//
// Ids are global: a schema's id comes from its content (type, canonical text, references), so the
// same schema under two subjects has one id; a new content gets the highest id ever seen plus one,
// so ids are never reused. IMPORT mode lets the caller choose ids and versions.
import { limits } from '../util/index.js';
import { compatibilityMessages, DEFAULT_COMPATIBILITY, isCompatibilityLevel, type CompatibilityLevel, type PreviousVersion } from './compatibility.js';
import { registryErrors as E } from './errors.js';
import { parseSchema, SchemaParseError, type ParsedSchema, type ResolvedReference, type SchemaReference, type SchemaType } from './formats/index.js';
import type { RegistryRecord, SchemaValue } from './records.js';

export type Mode = 'READWRITE' | 'READONLY' | 'READONLY_OVERRIDE' | 'IMPORT';
/** Confluent's subject name strategies, as broker-side schema validation names them. */
export type SubjectNameStrategy = 'TopicNameStrategy' | 'RecordNameStrategy' | 'TopicRecordNameStrategy';
export const MODES: readonly Mode[] = ['READWRITE', 'READONLY', 'READONLY_OVERRIDE', 'IMPORT'];

/** What a client sends to register, look up or check a schema. */
export interface SchemaRequest { schema: string; schemaType: SchemaType; references: SchemaReference[]; id?: number; version?: number }

/** A subject's version as the REST door shows it. */
export interface VersionView { subject: string; version: number; id: number; schemaType: SchemaType; references: SchemaReference[]; schema: string; deleted: boolean }

export interface OperationResult<T> { records: RegistryRecord[]; response: T }

interface Content { schemaType: SchemaType; schema: string; references: SchemaReference[] }
const contentKey = (c: Content) => JSON.stringify([c.schemaType, c.schema, c.references.map((r) => [r.name, r.subject, r.version])]);

export class RegistryState {
  /** subject → version → the stored value (soft-deleted ones included). */
  private readonly subjects = new Map<string, Map<number, SchemaValue>>();
  /** id → content, while some version has it. */
  private readonly contents = new Map<number, Content>();
  private readonly idsByContent = new Map<string, number>();
  private maxId = 0;
  private readonly configs = new Map<string | null, CompatibilityLevel>();
  private readonly modes = new Map<string | null, Mode>();
  /** Parsed schemas by id: parsing is deterministic, so this cache changes no answer. */
  private readonly parsed = new Map<number, ParsedSchema>();
  /** Parsed request schemas without references, by type and text, least recently used first (see parse). */
  private readonly parsedRequests = new Map<string, ParsedSchema>();

  // ---- replay ----------------------------------------------------------------------------------

  /** Forgets everything replayed: the service replays `_schemas` again from its start. */
  clear(): void {
    for (const m of [this.subjects, this.contents, this.idsByContent, this.configs, this.modes, this.parsed]) m.clear();
    this.maxId = 0;
  }

  replay(r: RegistryRecord): void {
    switch (r.keytype) {
      case 'SCHEMA': return this.replaySchema(r.subject, r.version, r.value);
      case 'CONFIG':
        if (r.value && isCompatibilityLevel(r.value.compatibilityLevel)) this.configs.set(r.subject, r.value.compatibilityLevel);
        else this.configs.delete(r.subject);
        return;
      case 'MODE':
        if (r.value && (MODES as readonly string[]).includes(r.value.mode)) this.modes.set(r.subject, r.value.mode as Mode);
        else this.modes.delete(r.subject);
        return;
      case 'DELETE_SUBJECT':
        // Every version up to the one named is soft-deleted (later registrations stay live).
        if (r.value) for (const v of this.subjects.get(r.subject)?.values() ?? []) if (v.version <= r.value.version) v.deleted = true;
        return;
      case 'CLEAR_SUBJECT':
        return;
      case 'NOOP':
        if (r.value) this.maxId = Math.max(this.maxId, r.value.maxId);
        return;
    }
  }

  private replaySchema(subject: string, version: number, value: SchemaValue | null): void {
    let versions = this.subjects.get(subject);
    const previous = versions?.get(version);
    if (value === null) {
      if (!versions || !previous) return;
      versions.delete(version);
      if (versions.size === 0) this.subjects.delete(subject);
      this.forgetContentIfUnused(previous.id);
      return;
    }
    if (!versions) this.subjects.set(subject, versions = new Map());
    versions.set(version, { ...value });
    if (previous && previous.id !== value.id) this.forgetContentIfUnused(previous.id);
    this.maxId = Math.max(this.maxId, value.id);
    const content = { schemaType: value.schemaType, schema: value.schema, references: value.references };
    if (!this.contents.has(value.id)) {
      this.contents.set(value.id, content);
      this.idsByContent.set(contentKey(content), value.id);
    }
  }

  private forgetContentIfUnused(id: number): void {
    for (const versions of this.subjects.values()) for (const v of versions.values()) if (v.id === id) return;
    const content = this.contents.get(id);
    if (content) this.idsByContent.delete(contentKey(content));
    this.contents.delete(id);
    this.parsed.delete(id);
  }

  // ---- queries ---------------------------------------------------------------------------------

  get highestId(): number { return this.maxId; }

  schemaById(id: number): Content {
    const c = this.contents.get(id);
    if (!c) throw E.schemaNotFound(`Schema ${id} not found`);
    return c;
  }

  /** Subject/version pairs that hold schema `id`. */
  usagesOfId(id: number, deleted: boolean): { subject: string; version: number }[] {
    this.schemaById(id);
    const out: { subject: string; version: number }[] = [];
    for (const [subject, versions] of [...this.subjects].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const v of [...versions.values()].sort((a, b) => a.version - b.version)) if (v.id === id && (deleted || !v.deleted)) out.push({ subject, version: v.version });
    }
    return out;
  }

  listSubjects(prefix: string, deleted: boolean): string[] {
    return [...this.subjects].filter(([s, vs]) => s.startsWith(prefix) && [...vs.values()].some((v) => deleted || !v.deleted)).map(([s]) => s).sort();
  }

  /** A subject's versions, oldest first; 40401 when it has none (live ones, unless `deleted`). */
  versionsOf(subject: string, deleted: boolean): VersionView[] {
    const out = [...(this.subjects.get(subject)?.values() ?? [])].filter((v) => deleted || !v.deleted).sort((a, b) => a.version - b.version);
    if (out.length === 0) throw E.subjectNotFound(subject);
    return out.map((v) => ({ ...v }));
  }

  /** `version` of `subject`: a number or -1 for the latest. */
  version(subject: string, version: number, deleted: boolean): VersionView {
    const versions = this.versionsOf(subject, deleted);
    const found = version === -1 ? versions[versions.length - 1] : versions.find((v) => v.version === version);
    if (!found) throw E.versionNotFound(version);
    return found;
  }

  /** Ids of the live versions whose references name `subject` `version`. */
  referencedBy(subject: string, version: number): number[] {
    const ids = new Set<number>();
    for (const versions of this.subjects.values()) {
      for (const v of versions.values()) if (!v.deleted && v.references.some((r) => r.subject === subject && r.version === version)) ids.add(v.id);
    }
    return [...ids].sort((a, b) => a - b);
  }

  config(subject: string | null): CompatibilityLevel | undefined { return this.configs.get(subject); }
  /** The level a subject is checked at: its own, else the global one, else Confluent's default. */
  effectiveConfig(subject: string | null): CompatibilityLevel {
    return (subject !== null ? this.configs.get(subject) : undefined) ?? this.configs.get(null) ?? DEFAULT_COMPATIBILITY;
  }
  mode(subject: string | null): Mode | undefined { return this.modes.get(subject); }
  effectiveMode(subject: string | null): Mode {
    return (subject !== null ? this.modes.get(subject) : undefined) ?? this.modes.get(null) ?? 'READWRITE';
  }

  /** A reference list with each referenced schema's text, depth first (42201 when one is missing). */
  resolveReferences(refs: readonly SchemaReference[], depth = 0): ResolvedReference[] {
    if (depth > limits.registryReferencesDepthMax) throw E.invalidSchema('references nest too deep');
    return refs.map((r) => {
      let v: VersionView;
      try {
        v = this.version(r.subject, r.version, false);
      } catch {
        throw E.invalidSchema(`reference ${r.name} (subject ${r.subject} version ${r.version}) not found`);
      }
      return { name: r.name, schemaType: v.schemaType, schema: v.schema, references: this.resolveReferences(v.references, depth + 1) };
    });
  }

  /**
   * Parses a request's schema with its references (42201 when it is not a valid schema). One
   * without references is a pure function of its type and text, so its parse is kept (a few, see
   * limits.registryParsedSchemasCachedMax); a referenced schema's text may change under a
   * permanent delete, so those are parsed each time.
   */
  parse(request: SchemaRequest): ParsedSchema {
    const cacheable = request.references.length === 0 && request.schema.length <= limits.registryParsedSchemaCachedBytesMax;
    const key = cacheable ? `${request.schemaType}\u0000${request.schema}` : '';
    if (cacheable) {
      const hit = this.parsedRequests.get(key);
      if (hit !== undefined) {
        this.parsedRequests.delete(key);
        this.parsedRequests.set(key, hit);
        return hit;
      }
    }
    const parsed = this.parseUncached(request);
    if (cacheable) {
      if (this.parsedRequests.size >= limits.registryParsedSchemasCachedMax) this.parsedRequests.delete(this.parsedRequests.keys().next().value!);
      this.parsedRequests.set(key, parsed);
    }
    return parsed;
  }

  private parseUncached(request: SchemaRequest): ParsedSchema {
    const references = this.resolveReferences(request.references);
    try {
      return parseSchema(request.schemaType, request.schema, references);
    } catch (e) {
      if (e instanceof SchemaParseError) throw E.invalidSchema(e.message);
      throw e;
    }
  }

  private parsedVersion(v: VersionView): ParsedSchema {
    let p = this.parsed.get(v.id);
    if (!p) this.parsed.set(v.id, p = this.parse({ schema: v.schema, schemaType: v.schemaType, references: v.references }));
    return p;
  }

  /**
   * The live versions of `subject` a new schema is checked against at `level`, oldest first: all
   * of them for a _TRANSITIVE level, the latest for the others, none for NONE (only those are
   * parsed: a subject's history may be long).
   */
  previousVersions(subject: string, level: CompatibilityLevel): PreviousVersion[] {
    if (level === 'NONE') return [];
    const live = [...(this.subjects.get(subject)?.values() ?? [])].filter((v) => !v.deleted).sort((a, b) => a.version - b.version);
    const checked = level.endsWith('_TRANSITIVE') ? live : live.slice(-1);
    return checked.map((v) => ({ version: v.version, schema: this.parsedVersion(v) }));
  }

  /** Incompatibility messages of `request` against `subject` at its level: against `version` only, or per the level's own rule. */
  compatibility(subject: string, request: SchemaRequest, version: number | null): string[] {
    const proposed = this.parse(request);
    const level = this.effectiveConfig(subject);
    if (version === null) return compatibilityMessages(level, proposed, this.previousVersions(subject, level));
    const v = this.version(subject, version, false);
    return compatibilityMessages(level.replace('_TRANSITIVE', '') as CompatibilityLevel, proposed, [{ version: v.version, schema: this.parsedVersion(v) }]);
  }

  /** The stored text of a request's schema: canonical, or normalized when asked. */
  storedText(parsed: ParsedSchema, normalize: boolean): string {
    return normalize ? parsed.normalized() : parsed.canonical;
  }

  /** The version of `subject` holding this content, if any. */
  findVersion(subject: string, content: Content, deleted: boolean): VersionView | undefined {
    const key = contentKey(content);
    const versions = [...(this.subjects.get(subject)?.values() ?? [])].filter((v) => deleted || !v.deleted).sort((a, b) => a.version - b.version);
    const found = versions.find((v) => contentKey(v) === key);
    return found ? { ...found } : undefined;
  }

  idOfContent(content: Content): number | undefined { return this.idsByContent.get(contentKey(content)); }

  /** The highest version `subject` ever had (soft-deleted ones count: numbers are not reused until a permanent delete). */
  highestVersion(subject: string): number {
    let max = 0;
    for (const v of this.subjects.get(subject)?.keys() ?? []) max = Math.max(max, v);
    return max;
  }

  /**
   * Broker-side schema validation: why schema `id` may not frame a record of `topic`'s key or
   * value under `strategy` (Confluent's subject name strategies); null when a live version of the
   * subject the strategy names has it.
   */
  validationRefusal(topic: string, isKey: boolean, strategy: SubjectNameStrategy, id: number): string | null {
    if (!this.contents.has(id)) return 'no schema has this id';
    let subject = `${topic}-${isKey ? 'key' : 'value'}`;
    if (strategy !== 'TopicNameStrategy') {
      let name: string | null;
      try {
        name = this.parsedById(id).recordName();
      } catch {
        return 'its schema no longer parses (a reference was deleted)';
      }
      if (name === null) return `its schema has no record name for ${strategy}`;
      subject = strategy === 'RecordNameStrategy' ? name : `${topic}-${name}`;
    }
    for (const v of this.subjects.get(subject)?.values() ?? []) if (v.id === id && !v.deleted) return null;
    return `it is not registered under subject ${subject}`;
  }

  /**
   * A record's key or value as Confluent's serializers frame it (magic byte 0, a 4-byte schema id,
   * the encoded data), decoded with that schema; null when it is not framed so or the id is not
   * registered. `error` says why framed bytes did not decode.
   */
  decodeFramed(bytes: Buffer): { schemaId: number; schemaType: SchemaType; value: unknown } | { schemaId: number; schemaType: SchemaType; error: string } | null {
    if (bytes.length < 5 || bytes[0] !== 0) return null;
    const schemaId = bytes.readInt32BE(1);
    const content = this.contents.get(schemaId);
    if (content === undefined) return null;
    try {
      return { schemaId, schemaType: content.schemaType, value: this.parsedById(schemaId).decode(bytes.subarray(5)) };
    } catch (e) {
      return { schemaId, schemaType: content.schemaType, error: e instanceof Error ? e.message : String(e) };
    }
  }

  private parsedById(id: number): ParsedSchema {
    let p = this.parsed.get(id);
    if (!p) this.parsed.set(id, p = this.parse({ ...this.schemaById(id) }));
    return p;
  }

  hasSubjects(): boolean { return this.subjects.size > 0; }
  versionCount(subject: string): number { return this.subjects.get(subject)?.size ?? 0; }
}

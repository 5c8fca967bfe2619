// What every schema format gives the registry: a parsed schema with the string the registry stores
// and compares (its canonical form), the normalized form `normalize=true` asks for, and the
// compatibility check Confluent's registry runs (`isBackwardCompatible`: can this schema read what
// the older one wrote?). All pure: no I/O, no clock.

export type SchemaType = 'AVRO' | 'JSON' | 'PROTOBUF';
export const SCHEMA_TYPES: readonly SchemaType[] = ['JSON', 'PROTOBUF', 'AVRO'];

/** A reference as a client sends it: the name the schema uses, and the subject/version it names. */
export interface SchemaReference { name: string; subject: string; version: number }

/** A reference with its schema text fetched (and its own references, depth first). */
export interface ResolvedReference {
  name: string;
  schemaType: SchemaType;
  schema: string;
  references: readonly ResolvedReference[];
}

export interface ParsedSchema {
  readonly schemaType: SchemaType;
  /** The form stored and compared: two registrations with the same canonical form are the same schema. */
  readonly canonical: string;
  /** Confluent's normalized form (`normalize=true`): names qualified, properties ordered. */
  normalized(): string;
  /**
   * Why this schema cannot read data written with `previous` (same format); empty when it can.
   * Each message names the difference as Confluent's checkers report it.
   */
  backwardIncompatibilities(previous: ParsedSchema): string[];
  /**
   * The name RecordNameStrategy gives a subject (Confluent's ParsedSchema.name()): an Avro named
   * type's full name, a Protobuf file's first message, a JSON Schema's title; null when it has none.
   */
  recordName(): string | null;
  /**
   * A record's bytes after Confluent's five-byte header (magic byte, schema id; for Protobuf, the
   * message indexes are part of `payload`), decoded with this schema as plain JSON data (bytes as
   * base64, 64-bit integers beyond 2^53 as strings). Throws when the bytes do not match it.
   */
  decode(payload: Buffer): unknown;
}

/** Decoded data as JSON can carry it: Buffers as base64, bigints as numbers when safe, else strings. */
export function plainData(v: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('nested too deep');
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (Array.isArray(v)) return v.map((x) => plainData(x, depth + 1));
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainData(x, depth + 1)]));
  return v;
}

/** The schema text is not a valid schema of its type (the REST door answers 42201). */
export class SchemaParseError extends Error {}

/** Counts the steps of one walk over schemas (limits.registryCompatibilityStepsMax). */
export class StepBudget {
  private left: number;
  constructor(max: number) { this.left = max; }
  take(): void {
    if (--this.left < 0) throw new SchemaParseError('schema too large to compare');
  }
}

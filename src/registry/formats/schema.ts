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

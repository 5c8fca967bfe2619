// The records of `_schemas`, keyed and valued as Confluent's registry writes them (JSON keys with a
// `keytype` and `magic`, JSON values; a null value is a tombstone), so a topic written by either
// reads the same. NOOP with a `maxId` value is Logline's: written on a permanent delete, it keeps
// the highest id ever handed out after compaction has removed the schema that had it, so ids are
// never reused (Confluent writes NOOP keys with null values only, to find the end of the log).
import type { SchemaReference, SchemaType } from './formats/index.js';

export const SCHEMAS_TOPIC = '_schemas';

export interface SchemaValue {
  subject: string;
  version: number;
  id: number;
  schemaType: SchemaType;
  references: SchemaReference[];
  schema: string;
  deleted: boolean;
}

export type RegistryRecord =
  | { keytype: 'SCHEMA'; subject: string; version: number; value: SchemaValue | null }
  | { keytype: 'CONFIG'; subject: string | null; value: { compatibilityLevel: string } | null }
  | { keytype: 'MODE'; subject: string | null; value: { mode: string } | null }
  | { keytype: 'DELETE_SUBJECT'; subject: string; value: { subject: string; version: number } | null }
  | { keytype: 'CLEAR_SUBJECT'; subject: string; value: { subject: string } | null }
  | { keytype: 'NOOP'; value: { maxId: number } | null };

export function encodeRegistryRecord(r: RegistryRecord): { key: Buffer; value: Buffer | null } {
  const key = r.keytype === 'SCHEMA' ? { keytype: 'SCHEMA', subject: r.subject, version: r.version, magic: 1 }
    : r.keytype === 'NOOP' ? { keytype: 'NOOP', magic: 0 } : { keytype: r.keytype, subject: r.subject, magic: 0 };
  let value: unknown = r.value;
  if (r.keytype === 'SCHEMA' && r.value) {
    const v = r.value;
    // AVRO is Confluent's default type and is left out of the value, as Confluent writes it.
    value = {
      subject: v.subject, version: v.version, id: v.id, ...(v.schemaType !== 'AVRO' ? { schemaType: v.schemaType } : {}),
      ...(v.references.length > 0 ? { references: v.references } : {}), schema: v.schema, deleted: v.deleted,
    };
  }
  return { key: Buffer.from(JSON.stringify(key)), value: value === null ? null : Buffer.from(JSON.stringify(value)) };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** null: a record this registry does not know (skipped, as Confluent skips unknown key types), or one it cannot read. */
export function decodeRegistryRecord(keyBytes: Buffer, valueBytes: Buffer | null): RegistryRecord | null {
  let key: unknown;
  let value: unknown = null;
  try {
    key = JSON.parse(keyBytes.toString('utf8'));
    if (valueBytes !== null) value = JSON.parse(valueBytes.toString('utf8'));
  } catch {
    return null;
  }
  if (!isObject(key)) return null;
  const subject = typeof key.subject === 'string' ? key.subject : null;
  const v = isObject(value) ? value : null;
  switch (key.keytype) {
    case 'SCHEMA': {
      if (subject === null || typeof key.version !== 'number') return null;
      if (v === null) return { keytype: 'SCHEMA', subject, version: key.version, value: null };
      if (typeof v.id !== 'number' || typeof v.schema !== 'string') return null;
      const schemaType = (typeof v.schemaType === 'string' ? v.schemaType : 'AVRO') as SchemaType;
      const references = Array.isArray(v.references) ? (v.references as SchemaReference[]) : [];
      return { keytype: 'SCHEMA', subject, version: key.version, value: { subject, version: key.version, id: v.id, schemaType, references, schema: v.schema, deleted: v.deleted === true } };
    }
    case 'CONFIG':
      return { keytype: 'CONFIG', subject, value: v && typeof v.compatibilityLevel === 'string' ? { compatibilityLevel: v.compatibilityLevel } : null };
    case 'MODE':
      return { keytype: 'MODE', subject, value: v && typeof v.mode === 'string' ? { mode: v.mode } : null };
    case 'DELETE_SUBJECT':
      if (subject === null) return null;
      return { keytype: 'DELETE_SUBJECT', subject, value: v && typeof v.version === 'number' ? { subject, version: v.version } : null };
    case 'CLEAR_SUBJECT':
      if (subject === null) return null;
      return { keytype: 'CLEAR_SUBJECT', subject, value: v ? { subject } : null };
    case 'NOOP':
      return { keytype: 'NOOP', value: v && typeof v.maxId === 'number' ? { maxId: v.maxId } : null };
    default:
      return null;
  }
}

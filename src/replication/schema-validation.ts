// Broker-side schema validation (Confluent Server's confluent.key.schema.validation and
// confluent.value.schema.validation topic configs): every record of a validated topic must frame
// its key or value as Confluent's serializers do, the magic byte 0 then a 4-byte big-endian schema
// id, and that id must be registered under the subject the topic's subject name strategy gives.
// Only the first five bytes are read, in place. A null key or value passes (tombstones on
// compacted topics, as Confluent Server lets them through).
//
// Replication knows no registry: the node wires the registry's answer in as a `SchemaIdLookup`.
import type { RecordCursor } from '../records/index.js';

/** Confluent's subject name strategies, by the short name of their Java class. */
export type SubjectNameStrategy = 'TopicNameStrategy' | 'RecordNameStrategy' | 'TopicRecordNameStrategy';
const STRATEGY_PACKAGE = 'io.confluent.kafka.serializers.subject.';
export const SUBJECT_NAME_STRATEGIES: readonly string[] = ['TopicNameStrategy', 'RecordNameStrategy', 'TopicRecordNameStrategy'].map((s) => STRATEGY_PACKAGE + s);

/** The strategy a `confluent.*.subject.name.strategy` value names (its full class name, or the short name). */
export function subjectNameStrategyOf(className: string): SubjectNameStrategy {
  const short = className.startsWith(STRATEGY_PACKAGE) ? className.slice(STRATEGY_PACKAGE.length) : className;
  if (short === 'TopicNameStrategy' || short === 'RecordNameStrategy' || short === 'TopicRecordNameStrategy') return short;
  throw new Error(`unknown subject name strategy ${className}`);
}

/** A topic's validation: which of key and value are checked, each with its strategy (null: not checked). */
export interface SchemaValidation {
  readonly key: SubjectNameStrategy | null;
  readonly value: SubjectNameStrategy | null;
}

/** The registry as validation sees it (the node wires it; a node without a registry leaves it null). */
export interface SchemaIdLookup {
  /** Why `id` may not frame `topic`'s key (isKey) or value under `strategy`; null when it may. */
  refusal(topic: string, isKey: boolean, strategy: SubjectNameStrategy, id: number): string | null;
}

/** Confluent's wire format: magic byte 0, then the schema id. */
const MAGIC_BYTE = 0;
const PREFIX_BYTES = 5;

/**
 * The per-record check of one append to `topic`. Ids are looked up once per append: records of a
 * batch nearly always share one id.
 */
export function schemaRecordCheck(topic: string, validation: SchemaValidation, lookup: SchemaIdLookup | null): (c: RecordCursor) => string | null {
  const answers = [new Map<number, string | null>(), new Map<number, string | null>()];
  const judge = (body: Buffer, start: number, length: number, isKey: boolean, strategy: SubjectNameStrategy): string | null => {
    const what = isKey ? 'key' : 'value';
    if (length < 0) return null;
    if (length < PREFIX_BYTES || body[start] !== MAGIC_BYTE) return `the record's ${what} does not start with the magic byte 0 and a 4-byte schema id (topic ${topic} validates its ${what}s)`;
    if (lookup === null) return `topic ${topic} validates schema ids, but this broker runs no schema registry (schema.registry.listener)`;
    const id = body.readInt32BE(start + 1);
    const cache = answers[isKey ? 0 : 1]!;
    let answer = cache.get(id);
    if (answer === undefined) cache.set(id, answer = lookup.refusal(topic, isKey, strategy, id));
    return answer === null ? null : `the record's ${what} has schema id ${id}: ${answer}`;
  };
  return (c) => {
    if (validation.key !== null) {
      const refused = judge(c.body, c.keyStart, c.keyLength, true, validation.key);
      if (refused !== null) return refused;
    }
    return validation.value === null ? null : judge(c.body, c.valueStart, c.valueLength, false, validation.value);
  };
}

// Kafka 4.x's configuration key names (test/fixtures/kafka-config-keys.json, read from Kafka 4.2.0's
// config definitions, with the 4.0 keys removed since) and a value each accepted key takes, shared by the config and broker key walks.
import { readFileSync } from 'node:fs';
import type { ConfigKeyDef } from '../../src/config/index.js';

const root = new URL('../../../', import.meta.url);
export const KAFKA_KEYS: { broker: string[]; topic: string[]; group: string[]; clientMetrics: string[] } =
  JSON.parse(readFileSync(new URL('test/fixtures/kafka-config-keys.json', root), 'utf8'));
/** Tiered storage's keys are declared with the tiered storage work, not here. */
export const TIERED = /^(remote\.|rsm\.config\.|log\.local\.retention\.|local\.retention\.)/;

/** A value the key accepts: its default, else one of its type. */
export function sampleValue(def: ConfigKeyDef): string {
  if (def.defaultValue !== null) return def.defaultValue;
  if (def.validator?.kind === 'custom' && /Java classes/.test(def.validator.rule)) return '';
  switch (def.type) {
    case 'boolean': return 'false';
    case 'short': case 'int': case 'long': return '1';
    case 'double': return '0.5';
    case 'password': return 'secret';
    case 'class': case 'list': return '';
    case 'string': return 'x';
  }
}


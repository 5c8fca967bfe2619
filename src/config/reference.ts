// The configuration reference (docs/config-reference.md), rendered from the table so that it can never
// disagree with it: every key of each kind with Kafka's type, default and dynamic scope, whether
// Logline uses it, and the keys Kafka knows that Logline refuses, with the reason.
import {
  BROKER_KEY_LIST, CLIENT_METRICS_KEY_LIST, GROUP_KEY_LIST, REFUSED_BROKER_KEYS, REFUSED_TOPIC_KEYS, TOPIC_KEY_LIST,
} from './table.js';
import type { ConfigKeyDef } from './types.js';
import { documentation } from './describe.js';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function keyTable(defs: readonly ConfigKeyDef[], scope: boolean): string[] {
  const head = scope ? '| key | type | default | dynamic | used | description |\n| --- | --- | --- | --- | --- | --- |'
    : '| key | type | default | used | description |\n| --- | --- | --- | --- | --- |';
  const rows = [...defs].sort((a, b) => a.name.localeCompare(b.name)).map((d) => {
    const dflt = d.defaultValue === null ? '(none)' : d.type === 'password' ? '(hidden)' : `\`${cell(d.defaultValue)}\``;
    const used = d.unused === true ? 'accepted, not used' : 'used';
    return `| \`${d.name}\` | ${d.type} | ${dflt} |${scope ? ` ${d.dynamic} |` : ''} ${used} | ${cell(documentation(d))} |`;
  });
  return [head, ...rows];
}

function refusedTable(refused: ReadonlyMap<string, string>): string[] {
  return ['| key | why it is refused |', '| --- | --- |', ...[...refused].sort(([a], [b]) => a.localeCompare(b)).map(([k, why]) => `| \`${k}\` | ${cell(why)} |`)];
}

export function renderConfigReference(): string {
  const count = (defs: readonly ConfigKeyDef[]): string => {
    const unused = defs.filter((d) => d.unused === true).length;
    return `${defs.length} keys: ${defs.length - unused} used, ${unused} accepted and not used`;
  };
  return [
    '# Configuration reference',
    '',
    'Generated from `src/config/table.ts` by `node scripts/config-reference.mjs`; do not edit by hand.',
    '',
    'Every key Kafka 4.0 defines for brokers, topics, groups and client-metrics subscriptions is either',
    '**used** by Logline, **accepted, not used** (Kafka would accept it and setting it is harmless; its',
    'DescribeConfigs documentation says why it does nothing here), or **refused** with the reason in',
    'the error. Keys no Kafka version knows are refused as unknown. Dynamic scope is Kafka\'s:',
    '`read-only` (server.properties only), `per-broker` (AlterConfigs on one broker id, and per listener',
    'as `listener.name.<listener>.<key>` for the TLS, SASL and connection-limit keys), `cluster-wide`',
    '(also on the cluster default, the broker resource with an empty name).',
    '',
    `## Broker keys (${count(BROKER_KEY_LIST)})`,
    '',
    ...keyTable(BROKER_KEY_LIST, true),
    '',
    `## Topic keys (${count(TOPIC_KEY_LIST)})`,
    '',
    'Every topic key is dynamic (CreateTopics, AlterConfigs, IncrementalAlterConfigs on the topic).',
    '',
    ...keyTable(TOPIC_KEY_LIST, false),
    '',
    `## Group keys (${count(GROUP_KEY_LIST)})`,
    '',
    'Set per group on the GROUP resource; a group without one takes its broker synonym\'s value.',
    '',
    ...keyTable(GROUP_KEY_LIST, false),
    '',
    `## Client-metrics keys (${count(CLIENT_METRICS_KEY_LIST)})`,
    '',
    ...keyTable(CLIENT_METRICS_KEY_LIST, false),
    '',
    `## Refused broker keys (${REFUSED_BROKER_KEYS.size})`,
    '',
    ...refusedTable(REFUSED_BROKER_KEYS),
    '',
    `## Refused topic keys (${REFUSED_TOPIC_KEYS.size})`,
    '',
    ...refusedTable(REFUSED_TOPIC_KEYS),
    '',
  ].join('\n');
}

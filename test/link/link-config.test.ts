// A cluster link's settings are Logline's LINK config resource (64), checked by the controller like
// any config change: Kafka client keys only, a source address required, a usable name; and a
// topic's link.name / link.epoch.base are ordinary topic configs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planConfigChange } from '../../src/broker/index.js';
import { parseBrokerConfig, resolveTopicConfig } from '../../src/config/index.js';
import { ErrorCode } from '../../src/protocol/index.js';

const LINK = 64;
const state: Parameters<typeof planConfigChange>[0] = { topicExists: () => true, configs: () => new Map() };
const set = (name: string, value: string) => ({ name, configOperation: 0, value });
const plan = (resourceName: string, ops: { name: string; configOperation: number; value: string | null }[]) =>
  planConfigChange(state, { resourceType: LINK, resourceName, ops, replace: false, validateOnly: false });

test('a link is created with its source address and client keys as ConfigRecords of resource type 64', () => {
  const r = plan('dr', [set('bootstrap.servers', 'a:9092,b:9092'), set('security.protocol', 'SASL_SSL'), set('sasl.mechanism', 'SCRAM-SHA-512')]);
  assert.equal(r.response.errorCode, 0, r.response.errorMessage ?? '');
  assert.deepEqual(r.records.map((x) => [x.data.resourceType, x.data.resourceName, x.data.name, x.data.value]).sort(), [
    [LINK, 'dr', 'bootstrap.servers', 'a:9092,b:9092'], [LINK, 'dr', 'sasl.mechanism', 'SCRAM-SHA-512'], [LINK, 'dr', 'security.protocol', 'SASL_SSL'],
  ]);
});

test('a link without bootstrap.servers, with an unknown key, a bad value or a bad name is refused with a message', () => {
  const noSource = plan('dr', [set('security.protocol', 'SSL')]);
  assert.equal(noSource.response.errorCode, ErrorCode.INVALID_CONFIG);
  assert.match(noSource.response.errorMessage!, /needs bootstrap\.servers/);
  const unknown = plan('dr', [set('bootstrap.servers', 'a:9092'), set('bootstrap.server', 'x')]);
  assert.equal(unknown.response.errorCode, ErrorCode.INVALID_CONFIG);
  assert.match(unknown.response.errorMessage!, /bootstrap\.server/);
  const badValue = plan('dr', [set('bootstrap.servers', 'a:9092'), set('security.protocol', 'TLS')]);
  assert.equal(badValue.response.errorCode, ErrorCode.INVALID_CONFIG);
  const badName = plan('no/slash', [set('bootstrap.servers', 'a:9092')]);
  assert.equal(badName.response.errorCode, ErrorCode.INVALID_REQUEST);
  assert.match(badName.response.errorMessage!, /Link name/);
  for (const r of [noSource, unknown, badValue, badName]) assert.deepEqual(r.records, []);
});

test('link.name and link.epoch.base are topic configs with empty and zero defaults', () => {
  const plain = resolveTopicConfig(new Map(), parseBrokerConfig({}));
  assert.equal(plain.linkName, '');
  assert.equal(plain.linkEpochBase, 0);
  const mirror = resolveTopicConfig(new Map([['link.name', 'dr'], ['link.epoch.base', '11']]), parseBrokerConfig({}));
  assert.equal(mirror.linkName, 'dr');
  assert.equal(mirror.linkEpochBase, 11);
});

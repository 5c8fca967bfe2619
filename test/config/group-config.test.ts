// A group's overrides against the broker's bounds (Kafka's GroupConfig.validateValues).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseBrokerConfig, validateGroupConfigs } from '../../src/config/index.js';

const broker = parseBrokerConfig(new Map([['node.id', '1'], ['group.share.min.session.timeout.ms', '20000'], ['group.consumer.max.heartbeat.interval.ms', '8000']]));
const check = (entries: [string, string][]) => validateGroupConfigs(new Map(entries), broker);

test('group overrides within the broker\'s bounds pass; unset keys take the group defaults', () => {
  assert.equal(check([]), null);
  assert.equal(check([['share.session.timeout.ms', '20000'], ['consumer.heartbeat.interval.ms', '8000'], ['share.record.lock.duration.ms', '15000']]), null);
});

test('each bound is the broker\'s min/max key, named in the refusal as Kafka names it', () => {
  assert.deepEqual(check([['share.session.timeout.ms', '19999']]), {
    name: 'share.session.timeout.ms', errorCode: 'INVALID_CONFIG', message: 'share.session.timeout.ms must be greater than or equal to group.share.min.session.timeout.ms',
  });
  assert.equal(check([['consumer.heartbeat.interval.ms', '8001']])?.message, 'consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms');
  assert.equal(check([['consumer.session.timeout.ms', '60001']])?.message, 'consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms');
  assert.equal(check([['share.heartbeat.interval.ms', '4999']])?.message, 'share.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms');
  assert.equal(check([['share.record.lock.duration.ms', '60001']])?.message, 'share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms');
});

test('a session must outlast its heartbeat interval', () => {
  const wide = parseBrokerConfig(new Map([['node.id', '1'], ['group.share.min.session.timeout.ms', '1000'], ['group.share.max.heartbeat.interval.ms', '30000']]));
  assert.equal(validateGroupConfigs(new Map([['share.session.timeout.ms', '10000'], ['share.heartbeat.interval.ms', '10000']]), wide)?.message,
    'share.session.timeout.ms must be greater than share.heartbeat.interval.ms');
  assert.equal(validateGroupConfigs(new Map([['share.session.timeout.ms', '10001'], ['share.heartbeat.interval.ms', '10000']]), wide), null);
});

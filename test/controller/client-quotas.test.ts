// ClientQuotaControlManager as a pure function of the image: records only for changed values,
// validate_only writes nothing, and ip entities take IP literals only (no name lookups here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { alterClientQuotas } from '../../src/controller/client-quotas.js';
import { MetadataDelta, MetadataImage } from '../../src/metadata/index.js';

const ipEntry = (ip: string) => ({ entity: [{ entityType: 'ip', entityName: ip }], ops: [{ key: 'connection_creation_rate', value: 10, remove: false }] });

test('ip entities: IPv4 and IPv6 literals are taken, anything else is INVALID_REQUEST', () => {
  const good = ['10.0.0.1', '::1', '2001:db8::1', '::ffff:10.0.0.1', 'fe80:0:0:0:0:0:0:1'];
  const bad = ['1.2.3.256', 'localhost', ':::', '1:2:3:4:5:6:7:8:9', '10.0.0', 'g::1'];
  const out = alterClientQuotas(MetadataImage.EMPTY, [...good, ...bad].map(ipEntry), false);
  assert.deepEqual(out.response.map((r) => r.errorCode), [...good.map(() => 0), ...bad.map(() => 42)]);
  assert.equal(out.records.length, good.length);
});

test('only changed values are written; validate_only writes nothing; removing an absent key writes nothing', () => {
  const entry = { entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 100, remove: false }] };
  const first = alterClientQuotas(MetadataImage.EMPTY, [entry], false);
  assert.equal(first.records.length, 1);
  const delta = new MetadataDelta(MetadataImage.EMPTY);
  for (const r of first.records) delta.replay(r);
  const image = delta.apply(MetadataImage.EMPTY.provenance);
  assert.equal(alterClientQuotas(image, [entry], false).records.length, 0, 'same value again');
  assert.equal(alterClientQuotas(MetadataImage.EMPTY, [entry], true).records.length, 0, 'validate_only');
  assert.equal(alterClientQuotas(MetadataImage.EMPTY, [{ ...entry, ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }], false).records.length, 0);
  assert.equal(alterClientQuotas(image, [{ ...entry, ops: [{ key: 'producer_byte_rate', value: 0, remove: true }] }], false).records.length, 1);
});

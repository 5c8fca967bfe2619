import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeFromBuffer, encodeToBuffer, messageSchemas, allApis } from '../../src/protocol/index.js';
import { allMessageVersions, messageArb } from './arbitrary-helpers.js';

test('every message of every version round-trips: encode, decode, deep-equal, re-encode byte for byte', () => {
  const pairs = allMessageVersions();
  assert.ok(pairs.length > 700, `only ${pairs.length} message versions in the table`);
  for (const { name, version } of pairs) {
    fc.assert(
      fc.property(messageArb(name, version), (value) => {
        const bytes = encodeToBuffer(name, version, value);
        const decoded = decodeFromBuffer(name, version, bytes);
        assert.deepStrictEqual(decoded, value, `${name} v${version}`);
        assert.ok(encodeToBuffer(name, version, decoded).equals(bytes), `${name} v${version} re-encode`);
      }),
      { numRuns: 40, seed: 42 + version },
    );
  }
});

test('the schema table has every API the issue names, with a request and a response', () => {
  const names = new Set(allApis().map((a) => a.name));
  for (const n of ['Produce', 'Fetch', 'ListOffsets', 'Metadata', 'ApiVersions', 'Vote', 'BeginQuorumEpoch',
    'EndQuorumEpoch', 'FetchSnapshot', 'DescribeQuorum', 'AlterPartition', 'BrokerRegistration',
    'BrokerHeartbeat', 'ConsumerGroupHeartbeat', 'InitProducerId', 'EndTxn', 'JoinGroup', 'SyncGroup']) {
    assert.ok(names.has(n), `missing ${n}`);
  }
  assert.ok(allApis().length >= 80, `${allApis().length} APIs`);
  for (const n of ['ConsumerProtocolSubscription', 'ConsumerProtocolAssignment', 'TopicRecord', 'PartitionRecord',
    'OffsetCommitValue', 'GroupMetadataValue', 'TransactionLogValue', 'LeaderChangeMessage']) {
    assert.ok(messageSchemas[n], `missing ${n}`);
  }
});

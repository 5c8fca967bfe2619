// lagRows: a group's committed offsets against the partitions' end offsets, row by row as
// kafka-consumer-groups --describe shows them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lagRows } from '../../src/http/index.js';
import { partitionKey } from '../../src/util/index.js';

const ref = (topic: string, partition: number) => ({ topic, partition });

test('lag rows: committed and assigned partitions, sorted; lag is end minus committed; none without a commit or an end offset', () => {
  const member = { memberId: 'm-1', clientId: 'app', host: '/127.0.0.1', instanceId: null, assignment: [ref('b', 0), ref('a', 1)] };
  const committed = new Map([
    [partitionKey('a', 1), { ref: ref('a', 1), offset: 7n }],
    [partitionKey('a', 0), { ref: ref('a', 0), offset: 10n }],
    [partitionKey('gone', 0), { ref: ref('gone', 0), offset: 3n }],
  ]);
  const ends = new Map([[partitionKey('a', 0), 10n], [partitionKey('a', 1), 12n], [partitionKey('b', 0), 4n]]);
  assert.deepEqual(lagRows([member], committed, ends).map((r) => [r.topic, r.partition, r.committedOffset, r.logEndOffset, r.lag, r.clientId]), [
    ['a', 0, 10, 10, 0, null],
    ['a', 1, 7, 12, 5, 'app'],
    ['b', 0, null, 4, null, 'app'],
    ['gone', 0, 3, null, null, null],
  ]);
  assert.deepEqual(lagRows([], new Map(), new Map()), []);
});

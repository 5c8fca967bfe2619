// The coordinator runtime's log port over the replica manager: a shard loading on a new leader
// replays the partition to its log end, not only to its high watermark, as Kafka's coordinator
// loader does. A new leader learns the high watermark a fetch late, so what the previous leader
// acknowledged (a transactional offset commit and its marker) may still be above it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Partition, ReplicaManager } from '../../src/replication/index.js';
import { replayPartition, replicaManagerLog } from '../../src/coordinator/index.js';
import { buildRecordBatchSync } from '../../src/records/index.js';
import { partitionKey, systemClock } from '../../src/util/index.js';
import { realScheduler } from '../../src/replication/index.js';
import { storageLog } from '../replication/helpers.js';

test('a coordinator partition loads to its log end on a leader whose high watermark lags (followers have not fetched in its epoch yet)', async () => {
  const rm = new ReplicaManager(1, systemClock, realScheduler, { fetchPurgatoryOperationsMax: 10, producePurgatoryOperationsMax: 10 });
  const log = storageLog();
  const p = new Partition('__consumer_offsets', 0, log, -1, -1, 1, 1);
  rm.addPartition(p);
  p.makeLeader({ leader: 1, leaderEpoch: 3, partitionEpoch: 5, isr: [1, 2], replicas: [1, 2] });
  const records = buildRecordBatchSync({ records: ['a', 'b', 'c'].map((k) => ({ key: Buffer.from(k), value: Buffer.from(`v-${k}`), timestamp: 1_700_000_000_000 })) });
  const r = await rm.produce(1, 1000, [{ topic: '__consumer_offsets', partition: 0, records }]);
  assert.equal(r.get(partitionKey('__consumer_offsets', 0))?.errorCode, 0);
  assert.deepEqual([p.highWatermark, log.logEndOffset], [0, 3], 'follower 2 has not fetched: the high watermark is behind');

  const replayed: string[] = [];
  await replayPartition(replicaManagerLog(rm, '__consumer_offsets', 1000), 0, (key) => { replayed.push(key.toString()); }, () => {});
  assert.deepEqual(replayed, ['a', 'b', 'c']);
});

// Kafka's snapshot file layout around a state machine's record batches (store/snapshot-file.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeSnapshotFile, encodeSnapshotFile, SnapshotFormatError } from '../../src/raft/index.js';
import { buildRecordBatchSync, iterateBatches, iterateRecords, parseControlRecordType } from '../../src/records/index.js';
import { unwrapSnapshotData, wrapSnapshotData } from '../../src/raft/core/voters.js';

const values = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${from + i}`) }));

test('a snapshot file is header (with the voter set), the records from offset 0 in the snapshot epoch, footer; and reads back', () => {
  const body = Buffer.concat([buildRecordBatchSync({ records: values(3), baseOffset: 40 }), buildRecordBatchSync({ records: values(2, 3), baseOffset: 90 })]);
  const voters = [{ id: 1, host: 'localhost', port: 9093 }];
  const file = encodeSnapshotFile({ id: { endOffset: 120, epoch: 4 }, data: wrapSnapshotData(voters, body) });
  const batches = [...iterateBatches(file)];
  const types = batches.map((b) => (b.isControl ? [...iterateRecords(b, b.bytes().subarray(61))].map((r) => parseControlRecordType(r.key)).join('+') : 'data'));
  assert.deepEqual(types, ['SNAPSHOT_HEADER+KRAFT_VERSION+KRAFT_VOTERS', 'data', 'data', 'SNAPSHOT_FOOTER']);
  assert.deepEqual(batches.map((b) => [b.baseOffset, b.lastOffset, b.partitionLeaderEpoch]), [[0, 2, 4], [3, 5, 4], [6, 7, 4], [8, 8, 4]]);
  assert.ok(batches.every((b) => b.verifyCrc()));
  const back = unwrapSnapshotData(decodeSnapshotFile({ endOffset: 120, epoch: 4 }, file));
  assert.deepEqual(back.voters, voters);
  const records = [...iterateBatches(Buffer.from(back.data))].flatMap((b) => [...iterateRecords(b, b.bytes().subarray(61))].map((r) => r.value!.toString()));
  assert.deepEqual(records, ['v0', 'v1', 'v2', 'v3', 'v4']);
});

test('a snapshot file without its footer is refused', () => {
  const file = encodeSnapshotFile({ id: { endOffset: 5, epoch: 1 }, data: wrapSnapshotData([{ id: 1 }], buildRecordBatchSync({ records: values(2) })) });
  const last = [...iterateBatches(file)].at(-1)!;
  assert.throws(() => decodeSnapshotFile({ endOffset: 5, epoch: 1 }, file.subarray(0, file.length - last.bytes().length)), SnapshotFormatError);
});

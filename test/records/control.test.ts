// Transaction markers, byte for byte as Kafka's EndTransactionMarker and ControlRecordType write them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  RecordBatchView, RecordsError, buildControlBatch, parseControlRecord, readRecords, validateBatch,
} from '../../src/records/index.js';

test('a COMMIT marker batch is control + transactional with Kafka key and value layouts', async () => {
  const buf = buildControlBatch({ type: 'COMMIT', producerId: 4000, producerEpoch: 2, coordinatorEpoch: 17, timestamp: 1_700_000_000_123, baseOffset: 50, partitionLeaderEpoch: 3 });
  const view = new RecordBatchView(buf);
  validateBatch(view);
  assert.throws(() => validateBatch(view, { fromClient: true }), (e: unknown) => e instanceof RecordsError && e.code === 'INVALID_RECORD');
  assert.equal(view.isControl, true);
  assert.equal(view.isTransactional, true);
  assert.equal(view.attributes, 0x30);
  assert.equal(view.producerId, 4000);
  assert.equal(view.producerEpoch, 2);
  assert.equal(view.baseSequence, -1);
  assert.equal(view.baseOffset, 50);
  assert.equal(view.partitionLeaderEpoch, 3);
  assert.equal(view.maxTimestamp, 1_700_000_000_123);
  const [record, ...rest] = await readRecords(view);
  assert.equal(rest.length, 0);
  assert.equal(record!.key!.toString('hex'), '00000001');
  assert.equal(record!.value!.toString('hex'), '000000000011');
  assert.deepEqual(parseControlRecord(record!), { type: 'COMMIT', coordinatorEpoch: 17 });
  // One record: 7 bytes of framing fields plus a 4-byte key and a 6-byte value, after the 61-byte header.
  assert.equal(buf.length, 61 + 17);
});

test('an ABORT marker has type 0', async () => {
  const view = new RecordBatchView(buildControlBatch({ type: 'ABORT', producerId: 1, producerEpoch: 0, coordinatorEpoch: 0, timestamp: 0 }));
  const [record] = await readRecords(view);
  assert.equal(record!.key!.toString('hex'), '00000000');
  assert.deepEqual(parseControlRecord(record!), { type: 'ABORT', coordinatorEpoch: 0 });
});

test('control keys: newer versions parse as v0, KRaft types are named, malformed keys are INVALID_RECORD', () => {
  const key = (v: number, t: number) => { const b = Buffer.alloc(4); b.writeInt16BE(v, 0); b.writeInt16BE(t, 2); return b; };
  assert.deepEqual(parseControlRecord({ key: key(1, 1), value: Buffer.from('000100000005', 'hex') }), { type: 'COMMIT', coordinatorEpoch: 5 });
  // Kafka's ControlRecordType ids: LEADER_CHANGE 2, SNAPSHOT_HEADER 3, SNAPSHOT_FOOTER 4, KRAFT_VERSION 5, KRAFT_VOTERS 6.
  assert.deepEqual([2, 3, 4, 5, 6].map((t) => parseControlRecord({ key: key(0, t), value: null }).type),
    ['LEADER_CHANGE', 'SNAPSHOT_HEADER', 'SNAPSHOT_FOOTER', 'KRAFT_VERSION', 'KRAFT_VOTERS']);
  assert.equal(parseControlRecord({ key: key(0, 99), value: null }).type, 'UNKNOWN');
  const invalid = (e: unknown) => e instanceof RecordsError && e.code === 'INVALID_RECORD';
  assert.throws(() => parseControlRecord({ key: Buffer.alloc(3), value: null }), invalid);
  assert.throws(() => parseControlRecord({ key: null, value: null }), invalid);
  assert.throws(() => parseControlRecord({ key: key(-1, 0), value: null }), invalid);
  assert.throws(() => parseControlRecord({ key: key(0, 1), value: Buffer.alloc(5) }), invalid);
});

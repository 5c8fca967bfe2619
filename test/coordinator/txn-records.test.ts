// The `__transaction_state` records against Kafka's schemas: bytes written out by hand from
// TransactionLogKey / TransactionLogValue, and round trips of every state.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeTxnRecord, encodeTxnRecord, TXN_STATES, type TxnRecordValue, type TxnState } from '../../src/coordinator/index.js';

/** Hex with `#` comments to the end of a line. */
const hex = (s: string): Buffer => Buffer.from(s.replace(/#.*$/gm, '').replace(/\s+/g, ''), 'hex');

const ongoing: TxnRecordValue = {
  producerId: 0x1234n, lastProducerId: 0x1233n, nextProducerId: -1n, producerEpoch: 3, lastProducerEpoch: -1, txnTimeoutMs: 60_000, state: 'Ongoing',
  topicPartitions: [{ topic: 'ab', partition: 0 }, { topic: 'ab', partition: 2 }, { topic: 'c', partition: 1 }],
  txnStartTimestampMs: 1000, txnLastUpdateTimestampMs: 2000, clientTransactionVersion: 2,
};
/** What a transaction version 1 client's record holds (a version 0 value can carry it). */
const ongoingV1: TxnRecordValue = { ...ongoing, clientTransactionVersion: 1 };

test('the key is record type 0 and the transactional id as a string', () => {
  assert.deepEqual(encodeTxnRecord({ transactionalId: 'tx', value: null }).key, hex('0000 0002 7478'));
});

test('a version 0 value is Kafka\'s fixed layout, and reads back without the fields v0 does not carry', () => {
  const bytes = encodeTxnRecord({ transactionalId: 'tx', value: ongoingV1 }, 0).value!;
  assert.deepEqual(bytes, hex(`
    0000                              # version 0
    0000000000001234                  # producer id
    0003                              # epoch
    0000ea60                          # timeout 60000
    01                                # Ongoing
    00000002                          # 2 topics
      0002 6162  00000002 00000000 00000002
      0001 63    00000001 00000001
    00000000000007d0                  # last update 2000
    00000000000003e8                  # start 1000
  `));
  const back = decodeTxnRecord(hex('0000 0002 7478'), bytes)!;
  assert.deepEqual(back, { transactionalId: 'tx', value: { ...ongoingV1, lastProducerId: -1n, clientTransactionVersion: 0 } });
});

test('a transaction version 2 value is written as version 1 even where version 0 is configured, with its next producer id', () => {
  const value: TxnRecordValue = { ...ongoing, state: 'PrepareCommit', producerEpoch: 32767, lastProducerEpoch: -1, nextProducerId: 0x2000n };
  const r = encodeTxnRecord({ transactionalId: 'tx', value }, 0);
  assert.equal(r.value!.readInt16BE(0), 1);
  assert.deepEqual(decodeTxnRecord(r.key, r.value)!.value, value);
  // The tagged fields: previous producer id (tag 0), next producer id (tag 1), client transaction version (tag 2).
  const tags = hex('03  00 08 0000000000001233  01 08 0000000000002000  02 02 0002');
  assert.deepEqual(r.value!.subarray(-tags.length), tags);
});

test('a version 1 value written by hand (flexible, tagged previous producer id and client transaction version) decodes', () => {
  const bytes = hex(`
    0001 0000000000001234 0003 0000ea60 02
    03  03 6162 03 00000000 00000002 00   02 63 02 00000001 00
    00000000000007d0 00000000000003e8
    02  00 08 0000000000001233  02 02 0002
  `);
  const back = decodeTxnRecord(hex('0000 0002 7478'), bytes)!;
  assert.deepEqual(back.value, { ...ongoing, state: 'PrepareCommit' });
  // And ours decodes to the same thing.
  const ours = encodeTxnRecord({ transactionalId: 'tx', value: { ...ongoing, state: 'PrepareCommit' } }, 1);
  assert.deepEqual(decodeTxnRecord(ours.key, ours.value), back);
});

test('every stored state round-trips in both value versions; an Empty transaction writes a null partition list', () => {
  for (const state of TXN_STATES.filter((s): s is TxnState => s !== 'Dead' && s !== 'PrepareEpochFence')) {
    const value = { ...ongoingV1, state, topicPartitions: state === 'Empty' || state.startsWith('Complete') ? [] : ongoing.topicPartitions };
    for (const version of [0, 1] as const) {
      const r = encodeTxnRecord({ transactionalId: 'id-' + state, value }, version);
      const back = decodeTxnRecord(r.key, r.value)!;
      const expected = version === 0 ? { ...value, lastProducerId: -1n, clientTransactionVersion: 0 } : value;
      assert.deepEqual(back, { transactionalId: 'id-' + state, value: expected }, `${state} v${version}`);
    }
  }
  const empty = encodeTxnRecord({ transactionalId: 'e', value: { ...ongoingV1, state: 'Empty', topicPartitions: [] } }, 0).value!;
  // version, pid, epoch, timeout, status, then -1 (null array)
  assert.equal(empty.subarray(2 + 8 + 2 + 4 + 1, 2 + 8 + 2 + 4 + 1 + 4).toString('hex'), 'ffffffff');
});

test('a tombstone round-trips; an unknown key type is skipped; Dead and an unknown status are refused', () => {
  const t = encodeTxnRecord({ transactionalId: 'gone', value: null });
  assert.deepEqual(decodeTxnRecord(t.key, t.value), { transactionalId: 'gone', value: null });
  assert.equal(decodeTxnRecord(hex('0001 0001 78'), null), null);
  assert.throws(() => encodeTxnRecord({ transactionalId: 'x', value: { ...ongoing, state: 'Dead' } }));
  const bad = Buffer.from(encodeTxnRecord({ transactionalId: 'x', value: ongoingV1 }, 0).value!);
  bad[2 + 8 + 2 + 4] = 9;
  assert.throws(() => decodeTxnRecord(t.key, bad), /unknown transaction status/);
});

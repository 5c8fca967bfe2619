// Control records (Kafka's ControlRecordType and EndTransactionMarker). A control batch carries the
// control and transactional attribute bits and one record whose key is [int16 version 0, int16 type]
// and, for transaction markers, whose value is [int16 version 0, int32 coordinatorEpoch]. Readers
// accept newer key/value versions and parse them as version 0, as Kafka does.
import { RecordsError } from './errors.js';
import { buildRecordBatchSync } from './builder.js';
import type { Record } from './records.js';

const CONTROL_TYPES = ['ABORT', 'COMMIT', 'LEADER_CHANGE', 'SNAPSHOT_HEADER',
  'SNAPSHOT_FOOTER', 'KRAFT_VERSION', 'KRAFT_VOTERS'] as const;

export type ControlRecordType = (typeof CONTROL_TYPES)[number] | 'UNKNOWN';

const CONTROL_KEY_BYTES = 4;
const END_TXN_MARKER_VALUE_BYTES = 6;

export interface ControlBatchOptions {
  type: 'COMMIT' | 'ABORT';
  producerId: number;
  producerEpoch: number;
  coordinatorEpoch: number;
  timestamp: number;
  baseOffset?: number;
  partitionLeaderEpoch?: number;
}

/** An end-transaction marker batch, as the broker writes on WriteTxnMarkers. */
export function buildControlBatch(opts: ControlBatchOptions): Buffer {
  const key = Buffer.alloc(CONTROL_KEY_BYTES);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(opts.type === 'COMMIT' ? 1 : 0, 2);
  const value = Buffer.alloc(END_TXN_MARKER_VALUE_BYTES);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(opts.coordinatorEpoch, 2);
  return buildRecordBatchSync({
    records: [{ key, value, timestamp: opts.timestamp }],
    baseOffset: opts.baseOffset ?? 0,
    partitionLeaderEpoch: opts.partitionLeaderEpoch ?? -1,
    producerId: opts.producerId,
    producerEpoch: opts.producerEpoch,
    baseSequence: -1,
    isControl: true,
    isTransactional: true,
    baseTimestamp: opts.timestamp,
  });
}

/** The type of a control record from its key. Throws INVALID_RECORD on a malformed key. */
export function parseControlRecordType(key: Buffer | null): ControlRecordType {
  if (key === null || key.length < CONTROL_KEY_BYTES) {
    throw new RecordsError('INVALID_RECORD', `control record key has ${key?.length ?? 'no'} bytes, needs ${CONTROL_KEY_BYTES}`);
  }
  const version = key.readInt16BE(0);
  if (version < 0) throw new RecordsError('INVALID_RECORD', `invalid control record key version ${version}`);
  const id = key.readInt16BE(2);
  return CONTROL_TYPES[id] ?? 'UNKNOWN';
}

/**
 * Parses a control record of a control batch. coordinatorEpoch is read for COMMIT and ABORT markers
 * and is -1 for the other (KRaft) control types, whose values this room does not interpret.
 */
export function parseControlRecord(record: Pick<Record, 'key' | 'value'>): { type: ControlRecordType; coordinatorEpoch: number } {
  const type = parseControlRecordType(record.key);
  if (type !== 'COMMIT' && type !== 'ABORT') return { type, coordinatorEpoch: -1 };
  const value = record.value;
  if (value === null || value.length < END_TXN_MARKER_VALUE_BYTES) {
    throw new RecordsError('INVALID_RECORD', `end transaction marker value has ${value?.length ?? 'no'} bytes, needs ${END_TXN_MARKER_VALUE_BYTES}`);
  }
  const version = value.readInt16BE(0);
  if (version < 0) throw new RecordsError('INVALID_RECORD', `invalid end transaction marker version ${version}`);
  return { type, coordinatorEpoch: value.readInt32BE(2) };
}

// The records the share coordinator writes to `__share_group_state`, with Kafka's key/value schemas
// (ShareSnapshotKey/Value, ShareUpdateKey/Value): a key is an int16 record type (0 snapshot, 1
// update) and the key fields; a value is an int16 version and the value fields; null is a tombstone.
import { Reader, Writer, decodeMessage, encodeMessage, type ShareSnapshotValue, type ShareUpdateValue } from '../../protocol/index.js';

/** A share-partition's identity: the group, the topic id and the partition. */
export interface SharePartitionKey { groupId: string; topicId: string; partition: number }

export type ShareStateRecord =
  | { type: 'snapshot'; key: SharePartitionKey; value: ShareSnapshotValue | null }
  | { type: 'update'; key: SharePartitionKey; value: ShareUpdateValue | null };

const SNAPSHOT = 0;
const UPDATE = 1;

/** Kafka's coordinator key string of a share-partition (what the partition of the topic is chosen by). */
export const shareCoordinatorKey = (k: SharePartitionKey) => `${k.groupId}:${k.topicId}:${k.partition}`;

function versioned(version: number, schema: string, value: object): Buffer {
  const w = new Writer();
  w.int16(version);
  encodeMessage(schema, version, value, w);
  return w.toBuffer();
}

export function encodeShareStateRecord(r: ShareStateRecord): { key: Buffer; value: Buffer | null } {
  const snapshot = r.type === 'snapshot';
  return {
    key: versioned(snapshot ? SNAPSHOT : UPDATE, snapshot ? 'ShareSnapshotKey' : 'ShareUpdateKey', r.key),
    value: r.value && versioned(0, snapshot ? 'ShareSnapshotValue' : 'ShareUpdateValue', r.value),
  };
}

/** One record of the topic; an unknown record type gives null (skipped, as Kafka skips them). */
export function decodeShareStateRecord(key: Buffer, value: Buffer | null): ShareStateRecord | null {
  const kr = new Reader(key);
  const type = kr.int16();
  if (type !== SNAPSHOT && type !== UPDATE) return null;
  const k = decodeMessage<SharePartitionKey>(type === SNAPSHOT ? 'ShareSnapshotKey' : 'ShareUpdateKey', type, kr);
  const keyOut = { groupId: k.groupId, topicId: k.topicId, partition: k.partition };
  if (value === null) return { type: type === SNAPSHOT ? 'snapshot' : 'update', key: keyOut, value: null } as ShareStateRecord;
  const vr = new Reader(value);
  vr.int16(); // version 0 is the only one; newer ones add tagged fields the codec keeps
  return type === SNAPSHOT
    ? { type: 'snapshot', key: keyOut, value: decodeMessage<ShareSnapshotValue>('ShareSnapshotValue', 0, vr) }
    : { type: 'update', key: keyOut, value: decodeMessage<ShareUpdateValue>('ShareUpdateValue', 0, vr) };
}

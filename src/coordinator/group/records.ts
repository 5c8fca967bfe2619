// The records a group coordinator writes to its `__consumer_offsets` partition, with Kafka's own
// key/value schemas (generated into src/protocol from Kafka's JSON message schemas, which are kept
// outside this repository; see scripts/generate-protocol.mjs). A key is an int16 record type (the
// key schema's only version) followed by the key fields; a value is an int16 value version followed
// by the value fields; a null value is a tombstone. Kafka's tools can read our topic and we can read
// theirs.
import {
  Reader, Writer, decodeMessage, encodeMessage, ProtocolError,
  type ConsumerGroupCurrentMemberAssignmentValue, type ConsumerGroupMemberMetadataValue, type ConsumerGroupMetadataValue,
  type ConsumerGroupTargetAssignmentMemberValue, type ConsumerGroupTargetAssignmentMetadataValue, type GroupMetadataValue,
  type OffsetCommitValue, type ConsumerGroupPartitionMetadataValue, type ShareGroupMetadataValue, type ShareGroupPartitionMetadataValue, type ShareGroupStatePartitionMetadataValue,
  type ShareGroupMemberMetadataValue, type ShareGroupTargetAssignmentMetadataValue, type ShareGroupTargetAssignmentMemberValue,
  type ShareGroupCurrentMemberAssignmentValue,
} from '../../protocol/index.js';

/** Record types: the key version of each key schema. */
export const RecordType = {
  OffsetCommit: 1, // 0 is the same key, written by Kafka before 0.10
  GroupMetadata: 2,
  ConsumerGroupMetadata: 3,
  ConsumerGroupPartitionMetadata: 4,
  ConsumerGroupMemberMetadata: 5,
  ConsumerGroupTargetAssignmentMetadata: 6,
  ConsumerGroupTargetAssignmentMember: 7,
  ConsumerGroupCurrentMemberAssignment: 8,
  ShareGroupPartitionMetadata: 9,
  ShareGroupMemberMetadata: 10,
  ShareGroupMetadata: 11,
  ShareGroupTargetAssignmentMetadata: 12,
  ShareGroupTargetAssignmentMember: 13,
  ShareGroupCurrentMemberAssignment: 14,
  ShareGroupStatePartitionMetadata: 15,
} as const;

export type GroupRecord =
  | { type: 'offset'; group: string; topic: string; partition: number; value: OffsetCommitValue | null }
  | { type: 'group'; group: string; value: GroupMetadataValue | null }
  | { type: 'consumer-group'; group: string; value: ConsumerGroupMetadataValue | null }
  | { type: 'consumer-partition-metadata'; group: string; value: ConsumerGroupPartitionMetadataValue | null }
  | { type: 'consumer-member'; group: string; memberId: string; value: ConsumerGroupMemberMetadataValue | null }
  | { type: 'consumer-target-metadata'; group: string; value: ConsumerGroupTargetAssignmentMetadataValue | null }
  | { type: 'consumer-target-member'; group: string; memberId: string; value: ConsumerGroupTargetAssignmentMemberValue | null }
  | { type: 'consumer-current-member'; group: string; memberId: string; value: ConsumerGroupCurrentMemberAssignmentValue | null }
  | { type: 'share-group'; group: string; value: ShareGroupMetadataValue | null }
  | { type: 'share-partition-metadata'; group: string; value: ShareGroupPartitionMetadataValue | null }
  | { type: 'share-member'; group: string; memberId: string; value: ShareGroupMemberMetadataValue | null }
  | { type: 'share-target-metadata'; group: string; value: ShareGroupTargetAssignmentMetadataValue | null }
  | { type: 'share-target-member'; group: string; memberId: string; value: ShareGroupTargetAssignmentMemberValue | null }
  | { type: 'share-current-member'; group: string; memberId: string; value: ShareGroupCurrentMemberAssignmentValue | null }
  | { type: 'share-state-metadata'; group: string; value: ShareGroupStatePartitionMetadataValue | null };

export interface RecordBytes { key: Buffer; value: Buffer | null }

/** OffsetCommitValue v1 carries an explicit expire timestamp; v3 the leader epoch (Kafka's choice). */
const offsetValueVersion = (v: OffsetCommitValue): number => (v.expireTimestamp >= 0n ? 1 : 3);
const GROUP_METADATA_VALUE_VERSION = 3;

function encodeWith(version: number, schema: string, value: object): Buffer {
  const w = new Writer();
  w.int16(version);
  encodeMessage(schema, version, value, w);
  return w.toBuffer();
}

const KEY_SCHEMAS: Record<number, string> = {
  0: 'OffsetCommitKey', 1: 'OffsetCommitKey', 2: 'GroupMetadataKey', 3: 'ConsumerGroupMetadataKey', 4: 'ConsumerGroupPartitionMetadataKey',
  5: 'ConsumerGroupMemberMetadataKey', 6: 'ConsumerGroupTargetAssignmentMetadataKey', 7: 'ConsumerGroupTargetAssignmentMemberKey',
  8: 'ConsumerGroupCurrentMemberAssignmentKey', 9: 'ShareGroupPartitionMetadataKey', 10: 'ShareGroupMemberMetadataKey', 11: 'ShareGroupMetadataKey',
  12: 'ShareGroupTargetAssignmentMetadataKey', 13: 'ShareGroupTargetAssignmentMemberKey', 14: 'ShareGroupCurrentMemberAssignmentKey',
  15: 'ShareGroupStatePartitionMetadataKey',
};
const VALUE_SCHEMAS: Record<number, string> = {
  0: 'OffsetCommitValue', 1: 'OffsetCommitValue', 2: 'GroupMetadataValue', 3: 'ConsumerGroupMetadataValue', 4: 'ConsumerGroupPartitionMetadataValue',
  5: 'ConsumerGroupMemberMetadataValue', 6: 'ConsumerGroupTargetAssignmentMetadataValue', 7: 'ConsumerGroupTargetAssignmentMemberValue',
  8: 'ConsumerGroupCurrentMemberAssignmentValue', 9: 'ShareGroupPartitionMetadataValue', 10: 'ShareGroupMemberMetadataValue', 11: 'ShareGroupMetadataValue',
  12: 'ShareGroupTargetAssignmentMetadataValue', 13: 'ShareGroupTargetAssignmentMemberValue', 14: 'ShareGroupCurrentMemberAssignmentValue',
  15: 'ShareGroupStatePartitionMetadataValue',
};
/** Record type of each keyed record kind past GroupMetadata (KIP-848 and share groups). */
const TYPE_OF = {
  'consumer-group': RecordType.ConsumerGroupMetadata, 'consumer-partition-metadata': RecordType.ConsumerGroupPartitionMetadata,
  'consumer-member': RecordType.ConsumerGroupMemberMetadata, 'consumer-target-metadata': RecordType.ConsumerGroupTargetAssignmentMetadata,
  'consumer-target-member': RecordType.ConsumerGroupTargetAssignmentMember, 'consumer-current-member': RecordType.ConsumerGroupCurrentMemberAssignment,
  'share-group': RecordType.ShareGroupMetadata, 'share-partition-metadata': RecordType.ShareGroupPartitionMetadata,
  'share-member': RecordType.ShareGroupMemberMetadata, 'share-target-metadata': RecordType.ShareGroupTargetAssignmentMetadata,
  'share-target-member': RecordType.ShareGroupTargetAssignmentMember, 'share-current-member': RecordType.ShareGroupCurrentMemberAssignment,
  'share-state-metadata': RecordType.ShareGroupStatePartitionMetadata,
} as const;
const KIND_OF = Object.fromEntries(Object.entries(TYPE_OF).map(([kind, type]) => [type, kind])) as Record<number, Exclude<GroupRecord['type'], 'offset' | 'group'>>;

export function encodeGroupRecord(r: GroupRecord): RecordBytes {
  switch (r.type) {
    case 'offset':
      return {
        key: encodeWith(RecordType.OffsetCommit, 'OffsetCommitKey', { group: r.group, topic: r.topic, partition: r.partition }),
        value: r.value && encodeWith(offsetValueVersion(r.value), 'OffsetCommitValue', r.value),
      };
    case 'group':
      return { key: encodeWith(RecordType.GroupMetadata, 'GroupMetadataKey', { group: r.group }), value: r.value && encodeWith(GROUP_METADATA_VALUE_VERSION, 'GroupMetadataValue', r.value) };
    default: {
      const type = TYPE_OF[r.type];
      const key = 'memberId' in r ? { groupId: r.group, memberId: r.memberId } : { groupId: r.group };
      return { key: encodeWith(type, KEY_SCHEMAS[type]!, key), value: r.value && encodeWith(0, VALUE_SCHEMAS[type]!, r.value) };
    }
  }
}

/** Decodes one record of the offsets topic; unknown record types (streams groups, newer Kafka) give null. */
export function decodeGroupRecord(key: Buffer, value: Buffer | null): GroupRecord | null {
  const kr = new Reader(key);
  const type = kr.int16();
  const keySchema = KEY_SCHEMAS[type];
  if (!keySchema) return null;
  const k = decodeMessage<Record<string, any>>(keySchema, type, kr);
  let v: any = null;
  if (value !== null) {
    const vr = new Reader(value);
    const version = vr.int16();
    const schema = VALUE_SCHEMAS[type]!;
    if (version < 0) throw new ProtocolError(`${schema}: negative version ${version}`);
    // Newer value versions add fields at the end; read what we know of them.
    v = decodeMessage(schema, Math.min(version, type <= 2 ? 4 : 0), vr);
  }
  switch (type) {
    case 0: case 1: return { type: 'offset', group: k.group, topic: k.topic, partition: k.partition, value: v };
    case 2: return { type: 'group', group: k.group, value: v };
    default: return ('memberId' in k ? { type: KIND_OF[type]!, group: k.groupId, memberId: k.memberId, value: v } : { type: KIND_OF[type]!, group: k.groupId, value: v }) as GroupRecord;
  }
}

/** The int16-versioned embedded protocol bytes of the classic "consumer" protocol, read leniently as Kafka does. */
export function decodeVersioned<T>(schema: string, maxVersion: number, bytes: Buffer): T | null {
  try {
    const r = new Reader(bytes);
    const version = r.int16();
    if (version < 0) return null;
    return decodeMessage<T>(schema, Math.min(version, maxVersion), r);
  } catch (err) {
    if (err instanceof ProtocolError) return null;
    throw err;
  }
}

export function encodeVersioned(schema: string, version: number, value: object): Buffer {
  return encodeWith(version, schema, value);
}

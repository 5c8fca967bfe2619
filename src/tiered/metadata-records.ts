// The records of `__remote_log_metadata` in Kafka's own format (RemoteLogMetadataSerde): a record
// value is an unsigned-varint frame version (1), the record's api key and version, then the body
// from Kafka's storage record schemas (generated into src/protocol). Keys are
// null. The framing is the one __cluster_metadata records use (src/metadata/records.ts).
import { Reader, Writer, ProtocolError, encodeMessage, decodeMessage, messageSchemas } from '../protocol/index.js';
import type {
  RemoteLogSegmentMetadataRecord, RemoteLogSegmentMetadataUpdateRecord, RemotePartitionDeleteMetadataRecord,
  RemoteLogSegmentMetadataSnapshotRecord,
} from '../protocol/index.js';
import { RemoteLogMetadataError } from './errors.js';
import type {
  RemoteLogMetadataEvent, RemoteLogSegmentMetadata, RemoteLogSegmentState, RemotePartitionDeleteState, TopicIdPartition,
} from './segment-metadata.js';

const FRAME_VERSION = 1;
/** Api keys from the schemas (Kafka's storage MetadataRecordType). */
export const RemoteLogMetadataRecordType = {
  RemoteLogSegmentMetadataRecord: messageSchemas.RemoteLogSegmentMetadataRecord!.apiKey!,
  RemoteLogSegmentMetadataUpdateRecord: messageSchemas.RemoteLogSegmentMetadataUpdateRecord!.apiKey!,
  RemotePartitionDeleteMetadataRecord: messageSchemas.RemotePartitionDeleteMetadataRecord!.apiKey!,
  RemoteLogSegmentMetadataSnapshotRecord: messageSchemas.RemoteLogSegmentMetadataSnapshotRecord!.apiKey!,
} as const;
const NAMES = Object.fromEntries(Object.entries(RemoteLogMetadataRecordType).map(([n, k]) => [k, n])) as Record<number, keyof typeof RemoteLogMetadataRecordType>;

const tip = (p: TopicIdPartition) => ({ name: p.topic, id: p.topicId, partition: p.partition });
const fromTip = (t: { name: string; id: string; partition: number }): TopicIdPartition => ({ topicId: t.id, topic: t.name, partition: t.partition });
const epochsOut = (m: RemoteLogSegmentMetadata) => m.segmentLeaderEpochs.map((e) => ({ leaderEpoch: e.leaderEpoch, offset: BigInt(e.startOffset) }));

function frame(name: keyof typeof RemoteLogMetadataRecordType, body: object): Buffer {
  const w = new Writer(256);
  w.unsignedVarint(FRAME_VERSION);
  w.unsignedVarint(RemoteLogMetadataRecordType[name]);
  w.unsignedVarint(0);
  encodeMessage(name, 0, body, w);
  return w.toBuffer();
}

/** The value of the record Kafka's RemoteLogMetadataSerde writes for the event. */
export function encodeRemoteLogMetadata(event: RemoteLogMetadataEvent): Buffer {
  switch (event.kind) {
    case 'segment': {
      const m = event.metadata;
      return frame('RemoteLogSegmentMetadataRecord', {
        remoteLogSegmentId: { topicIdPartition: tip(m.remoteLogSegmentId.topicIdPartition), id: m.remoteLogSegmentId.id },
        ...segmentBody(m),
      } satisfies Omit<RemoteLogSegmentMetadataRecord, 'unknownTaggedFields'>);
    }
    case 'segment-update': {
      const u = event.update;
      return frame('RemoteLogSegmentMetadataUpdateRecord', {
        remoteLogSegmentId: { topicIdPartition: tip(u.remoteLogSegmentId.topicIdPartition), id: u.remoteLogSegmentId.id },
        brokerId: u.brokerId, eventTimestampMs: BigInt(u.eventTimestampMs), customMetadata: u.customMetadata, remoteLogSegmentState: u.state,
      } satisfies Omit<RemoteLogSegmentMetadataUpdateRecord, 'unknownTaggedFields'>);
    }
    case 'partition-delete': {
      const d = event.metadata;
      return frame('RemotePartitionDeleteMetadataRecord', {
        topicIdPartition: tip(d.topicIdPartition), brokerId: d.brokerId, eventTimestampMs: BigInt(d.eventTimestampMs), remotePartitionDeleteState: d.state,
      } satisfies Omit<RemotePartitionDeleteMetadataRecord, 'unknownTaggedFields'>);
    }
  }
}

function segmentBody(m: RemoteLogSegmentMetadata) {
  return {
    startOffset: BigInt(m.startOffset), endOffset: BigInt(m.endOffset), brokerId: m.brokerId, maxTimestampMs: BigInt(m.maxTimestampMs),
    eventTimestampMs: BigInt(m.eventTimestampMs), segmentLeaderEpochs: epochsOut(m), segmentSizeInBytes: m.segmentSizeInBytes,
    customMetadata: m.customMetadata, remoteLogSegmentState: m.state,
  };
}

/** A segment as Kafka's metadata snapshot file stores it (no partition: the file is per partition). */
export function encodeSegmentSnapshotRecord(m: RemoteLogSegmentMetadata): Buffer {
  return frame('RemoteLogSegmentMetadataSnapshotRecord', { segmentId: m.remoteLogSegmentId.id, ...segmentBody(m) } satisfies Omit<RemoteLogSegmentMetadataSnapshotRecord, 'unknownTaggedFields'>);
}

interface Decoded { name: keyof typeof RemoteLogMetadataRecordType; body: Record<string, unknown> }

function unframe(value: Buffer): Decoded {
  const r = new Reader(value);
  try {
    const frameVersion = r.unsignedVarint();
    if (frameVersion !== FRAME_VERSION) throw new RemoteLogMetadataError('MALFORMED_RECORD', `unknown frame version ${frameVersion}`);
    const apiKey = r.unsignedVarint();
    const version = r.unsignedVarint();
    const name = NAMES[apiKey];
    if (name === undefined) throw new RemoteLogMetadataError('MALFORMED_RECORD', `unknown remote log metadata record type ${apiKey}`);
    if (version !== 0) throw new RemoteLogMetadataError('MALFORMED_RECORD', `${name} has no version ${version}`);
    const body = decodeMessage<Record<string, unknown>>(name, version, r);
    if (r.remaining !== 0) throw new RemoteLogMetadataError('MALFORMED_RECORD', `${name}: ${r.remaining} trailing bytes`);
    return { name, body };
  } catch (e) {
    if (e instanceof ProtocolError) throw new RemoteLogMetadataError('MALFORMED_RECORD', `remote log metadata record: ${e.message}`);
    throw e;
  }
}

function toNumber(v: bigint, what: string): number {
  if (v < BigInt(Number.MIN_SAFE_INTEGER) || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new RemoteLogMetadataError('MALFORMED_RECORD', `${what} ${v} is beyond 2^53`);
  return Number(v);
}

function segmentFrom(id: { topicIdPartition: TopicIdPartition; id: string }, b: RemoteLogSegmentMetadataSnapshotRecord | RemoteLogSegmentMetadataRecord): RemoteLogSegmentMetadata {
  return {
    remoteLogSegmentId: id,
    startOffset: toNumber(b.startOffset, 'start offset'), endOffset: toNumber(b.endOffset, 'end offset'), brokerId: b.brokerId,
    maxTimestampMs: toNumber(b.maxTimestampMs, 'max timestamp'), eventTimestampMs: toNumber(b.eventTimestampMs, 'event timestamp'),
    segmentLeaderEpochs: b.segmentLeaderEpochs.map((e) => ({ leaderEpoch: e.leaderEpoch, startOffset: toNumber(e.offset, 'epoch offset') })),
    segmentSizeInBytes: b.segmentSizeInBytes, customMetadata: b.customMetadata, state: segmentState(b.remoteLogSegmentState),
  };
}

function segmentState(v: number): RemoteLogSegmentState {
  if (v < 0 || v > 3) throw new RemoteLogMetadataError('MALFORMED_RECORD', `unknown remote log segment state ${v}`);
  return v as RemoteLogSegmentState;
}

/** Decodes a `__remote_log_metadata` record value. Throws RemoteLogMetadataError (MALFORMED_RECORD). */
export function decodeRemoteLogMetadata(value: Buffer): RemoteLogMetadataEvent {
  const { name, body } = unframe(value);
  switch (name) {
    case 'RemoteLogSegmentMetadataRecord': {
      const b = body as unknown as RemoteLogSegmentMetadataRecord;
      return { kind: 'segment', metadata: segmentFrom({ topicIdPartition: fromTip(b.remoteLogSegmentId.topicIdPartition), id: b.remoteLogSegmentId.id }, b) };
    }
    case 'RemoteLogSegmentMetadataUpdateRecord': {
      const b = body as unknown as RemoteLogSegmentMetadataUpdateRecord;
      return {
        kind: 'segment-update',
        update: {
          remoteLogSegmentId: { topicIdPartition: fromTip(b.remoteLogSegmentId.topicIdPartition), id: b.remoteLogSegmentId.id },
          brokerId: b.brokerId, eventTimestampMs: toNumber(b.eventTimestampMs, 'event timestamp'), customMetadata: b.customMetadata,
          state: segmentState(b.remoteLogSegmentState),
        },
      };
    }
    case 'RemotePartitionDeleteMetadataRecord': {
      const b = body as unknown as RemotePartitionDeleteMetadataRecord;
      if (b.remotePartitionDeleteState < 0 || b.remotePartitionDeleteState > 2) throw new RemoteLogMetadataError('MALFORMED_RECORD', `unknown partition delete state ${b.remotePartitionDeleteState}`);
      return {
        kind: 'partition-delete',
        metadata: { topicIdPartition: fromTip(b.topicIdPartition), brokerId: b.brokerId, eventTimestampMs: toNumber(b.eventTimestampMs, 'event timestamp'), state: b.remotePartitionDeleteState as RemotePartitionDeleteState },
      };
    }
    case 'RemoteLogSegmentMetadataSnapshotRecord':
      throw new RemoteLogMetadataError('MALFORMED_RECORD', 'a snapshot record belongs in a snapshot, not in __remote_log_metadata');
  }
}

/** Decodes a segment of a partition's snapshot; the partition comes from the snapshot it is in. */
export function decodeSegmentSnapshotRecord(value: Buffer, partition: TopicIdPartition): RemoteLogSegmentMetadata {
  const { name, body } = unframe(value);
  if (name !== 'RemoteLogSegmentMetadataSnapshotRecord') throw new RemoteLogMetadataError('MALFORMED_RECORD', `expected a snapshot record, got ${name}`);
  const b = body as unknown as RemoteLogSegmentMetadataSnapshotRecord;
  return segmentFrom({ topicIdPartition: partition, id: b.segmentId }, b);
}

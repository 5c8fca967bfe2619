// Maps the core's messages (core/types.ts) onto Kafka's own RPCs for the metadata partition
// `__cluster_metadata-0`: Vote v1 (52), BeginQuorumEpoch v1 (53), EndQuorumEpoch v1 (54), Fetch v17
// (1, the KRaft form with ReplicaState), FetchSnapshot v1 (59) and DescribeQuorum v2 (55). Pure
// functions: core message -> protocol body -> core message; the transport does the framing.
//
// Where our schema copy lacks what the core needs:
// - PreVote (KIP-996) is Vote v2's field; the schemas here stop at v1, so it travels as tagged field
//   PRE_VOTE_TAG on the partition data (one byte, 1 = pre-vote) until the schemas are regenerated.
// - A Vote response does not echo the candidate epoch or pre-vote flag; the transport fills them
//   from the request it answers (it matches responses by correlation id).
// - Snapshot bytes are the state machine's own bytes in FetchSnapshot's UnalignedRecords, not
//   Kafka's snapshot record batches.
// - Entries go as RecordBatch v2: one record batch per entry batch of the log (encoded once, or
//   the bytes as received), baseOffset = first offset, partitionLeaderEpoch = epoch; control entries in control batches with
//   a LEADER_CHANGE key and the core's leader-change value (not Kafka's LeaderChangeMessage).
import {
  ZERO_UUID,
  type BeginQuorumEpochRequest as WireBeginReq, type BeginQuorumEpochResponse as WireBeginResp,
  type EndQuorumEpochRequest as WireEndReq, type EndQuorumEpochResponse as WireEndResp,
  type FetchRequest as WireFetchReq, type FetchResponse as WireFetchResp,
  type FetchSnapshotRequest as WireSnapReq, type FetchSnapshotResponse as WireSnapResp,
  type VoteRequest as WireVoteReq, type VoteResponse as WireVoteResp,
  type DescribeQuorumResponse as WireDescribeResp,
} from '../../protocol/index.js';
import {
  ATTR_CONTROL, NO_TIMESTAMP, RECORD_BATCH_HEADER_BYTES, buildRecordBatchSync, forEachRecord, iterateBatches, type RecordInput,
} from '../../records/index.js';
import type {
  BeginQuorumEpochRequest, BeginQuorumEpochResponse, EndQuorumEpochRequest, EndQuorumEpochResponse, EntryBatch,
  FetchRequest, FetchResponse, FetchSnapshotRequest, FetchSnapshotResponse, NodeId, QuorumDescription, ReplicaProgress,
  RaftErrorCodeValue, RaftMessage, RaftRequest, VoteRequest, VoteResponse,
} from '../core/types.js';
import { lastOffsetOf } from '../core/batch.js';
import { CONTROLLER_LISTENER } from '../core/voters.js';

export const ApiKey = {
  Fetch: 1, Vote: 52, BeginQuorumEpoch: 53, EndQuorumEpoch: 54, DescribeQuorum: 55, FetchSnapshot: 59, AddRaftVoter: 80, RemoveRaftVoter: 81,
} as const;
export const apiVersion: Readonly<Record<number, number>> = { 1: 17, 52: 1, 53: 1, 54: 1, 55: 2, 59: 1 };

export const METADATA_TOPIC = '__cluster_metadata';
/** Kafka's Uuid.METADATA_TOPIC_ID (0, 1) as our UUID strings spell it. */
export const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
export const PRE_VOTE_TAG = 0x7f00;
/** Kafka's ControlRecordType.LEADER_CHANGE and KRAFT_VOTERS. */
const LEADER_CHANGE_TYPE = 2;
const KRAFT_VOTERS_TYPE = 6;
/** A follower asks for at most this many bytes per fetch (Kafka's replica.fetch.max.bytes is 1 MiB too). */
export const fetchBytesMax = 8 << 20;

export class WireError extends Error {
  override name = 'WireError';
}

function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new WireError(message);
}

const noneId = (id: NodeId | undefined): number => id ?? -1;
const someId = (id: number): NodeId | undefined => (id < 0 ? undefined : id);
const toNumber = (v: bigint, what: string): number => {
  check(v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER), `${what} ${v} is not a safe integer`);
  return Number(v);
};
const asError = (code: number): RaftErrorCodeValue => code as RaftErrorCodeValue;

export function apiKeyOf(type: RaftRequest['type']): number {
  switch (type) {
    case 'VoteRequest': return ApiKey.Vote;
    case 'BeginQuorumEpochRequest': return ApiKey.BeginQuorumEpoch;
    case 'EndQuorumEpochRequest': return ApiKey.EndQuorumEpoch;
    case 'FetchRequest': return ApiKey.Fetch;
    case 'FetchSnapshotRequest': return ApiKey.FetchSnapshot;
  }
}

// ---- Requests ----------------------------------------------------------------------------------

export interface WireContext {
  readonly clusterId: string;
  /** The receiving voter (VoterId in Vote and BeginQuorumEpoch). */
  readonly to: NodeId;
  /** The sender's own endpoint, advertised as LeaderEndpoints. */
  readonly host: string;
  readonly port: number;
}

export function encodeRequest(m: RaftRequest, ctx: WireContext): object {
  switch (m.type) {
    case 'VoteRequest': {
      const body: WireVoteReq = {
        clusterId: ctx.clusterId, voterId: ctx.to,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{
          partitionIndex: 0, candidateEpoch: m.candidateEpoch, candidateId: m.candidateId,
          candidateDirectoryId: ZERO_UUID, voterDirectoryId: ZERO_UUID,
          lastOffsetEpoch: m.lastOffsetEpoch, lastOffset: BigInt(m.lastOffset),
          ...(m.preVote ? { unknownTaggedFields: [{ tag: PRE_VOTE_TAG, data: Buffer.from([1]) }] } : {}),
        }] }],
      };
      return body;
    }
    case 'BeginQuorumEpochRequest': {
      const body: WireBeginReq = {
        clusterId: ctx.clusterId, voterId: ctx.to,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0, voterDirectoryId: ZERO_UUID, leaderId: m.leaderId, leaderEpoch: m.leaderEpoch }] }],
        leaderEndpoints: [{ name: 'CONTROLLER', host: ctx.host, port: ctx.port }],
      };
      return body;
    }
    case 'EndQuorumEpochRequest': {
      const body: WireEndReq = {
        clusterId: ctx.clusterId,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{
          partitionIndex: 0, leaderId: m.leaderId, leaderEpoch: m.leaderEpoch, preferredSuccessors: [...m.preferredSuccessors],
          preferredCandidates: m.preferredSuccessors.map((candidateId) => ({ candidateId, candidateDirectoryId: ZERO_UUID })),
        }] }],
        leaderEndpoints: [{ name: 'CONTROLLER', host: ctx.host, port: ctx.port }],
      };
      return body;
    }
    case 'FetchRequest': {
      const body: Partial<WireFetchReq> = {
        clusterId: ctx.clusterId, replicaId: -1, replicaState: { replicaId: m.replicaId, replicaEpoch: -1n },
        maxWaitMs: m.maxWaitMs, minBytes: 0, maxBytes: fetchBytesMax, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
        topics: [{ topic: METADATA_TOPIC, topicId: METADATA_TOPIC_ID, partitions: [{
          partition: 0, currentLeaderEpoch: m.replicaEpoch, fetchOffset: BigInt(m.fetchOffset), lastFetchedEpoch: m.lastFetchedEpoch,
          logStartOffset: -1n, partitionMaxBytes: fetchBytesMax, replicaDirectoryId: ZERO_UUID,
        }] }],
        forgottenTopicsData: [], rackId: '',
      };
      return body;
    }
    case 'FetchSnapshotRequest': {
      const body: WireSnapReq = {
        clusterId: ctx.clusterId, replicaId: m.replicaId, maxBytes: m.maxBytes,
        topics: [{ name: METADATA_TOPIC, partitions: [{
          partition: 0, currentLeaderEpoch: m.replicaEpoch,
          snapshotId: { endOffset: BigInt(m.snapshotId.endOffset), epoch: m.snapshotId.epoch },
          position: BigInt(m.position), replicaDirectoryId: ZERO_UUID,
        }] }],
      };
      return body;
    }
  }
}

/** The one partition of a KRaft request, or a WireError when it names anything else. */
function onlyPartition<P>(topics: ReadonlyArray<{ partitions: readonly P[] }>, what: string): P {
  check(topics.length === 1 && topics[0]!.partitions.length === 1, `${what} must name exactly one partition`);
  return topics[0]!.partitions[0]!;
}

export interface DecodedRequest {
  readonly from: NodeId;
  readonly message: RaftRequest;
  readonly clusterId: string | null;
}

export function decodeRequest(apiKey: number, body: Record<string, unknown>): DecodedRequest {
  switch (apiKey) {
    case ApiKey.Vote: {
      const b = body as unknown as WireVoteReq;
      const p = onlyPartition(b.topics, 'Vote');
      const tag = p.unknownTaggedFields?.find((u) => u.tag === PRE_VOTE_TAG);
      const message: VoteRequest = {
        type: 'VoteRequest', candidateEpoch: p.candidateEpoch, candidateId: p.candidateId, lastOffsetEpoch: p.lastOffsetEpoch,
        lastOffset: toNumber(p.lastOffset, 'lastOffset'), preVote: tag !== undefined && tag.data.length === 1 && tag.data[0] === 1,
      };
      return { from: p.candidateId, message, clusterId: b.clusterId };
    }
    case ApiKey.BeginQuorumEpoch: {
      const b = body as unknown as WireBeginReq;
      const p = onlyPartition(b.topics, 'BeginQuorumEpoch');
      const message: BeginQuorumEpochRequest = { type: 'BeginQuorumEpochRequest', leaderEpoch: p.leaderEpoch, leaderId: p.leaderId };
      return { from: p.leaderId, message, clusterId: b.clusterId };
    }
    case ApiKey.EndQuorumEpoch: {
      const b = body as unknown as WireEndReq;
      const p = onlyPartition(b.topics, 'EndQuorumEpoch');
      const successors = p.preferredCandidates.length > 0 ? p.preferredCandidates.map((c) => c.candidateId) : p.preferredSuccessors;
      check(successors.length <= 64, 'too many preferred candidates');
      const message: EndQuorumEpochRequest = {
        type: 'EndQuorumEpochRequest', leaderEpoch: p.leaderEpoch, leaderId: p.leaderId, preferredSuccessors: successors,
      };
      return { from: p.leaderId, message, clusterId: b.clusterId };
    }
    case ApiKey.Fetch: {
      const b = body as unknown as WireFetchReq;
      const p = onlyPartition(b.topics, 'Fetch');
      const replicaId = b.replicaState.replicaId;
      check(replicaId >= 0, 'a KRaft Fetch needs ReplicaState.ReplicaId');
      const message: FetchRequest = {
        type: 'FetchRequest', replicaId, replicaEpoch: p.currentLeaderEpoch, fetchOffset: toNumber(p.fetchOffset, 'fetchOffset'),
        lastFetchedEpoch: p.lastFetchedEpoch, maxWaitMs: Math.max(0, b.maxWaitMs),
      };
      return { from: replicaId, message, clusterId: b.clusterId };
    }
    case ApiKey.FetchSnapshot: {
      const b = body as unknown as WireSnapReq;
      const p = onlyPartition(b.topics, 'FetchSnapshot');
      const message: FetchSnapshotRequest = {
        type: 'FetchSnapshotRequest', replicaId: b.replicaId, replicaEpoch: p.currentLeaderEpoch,
        snapshotId: { endOffset: toNumber(p.snapshotId.endOffset, 'snapshotId.endOffset'), epoch: p.snapshotId.epoch },
        position: toNumber(p.position, 'position'), maxBytes: Math.max(0, b.maxBytes),
      };
      return { from: b.replicaId, message, clusterId: b.clusterId };
    }
    default:
      throw new WireError(`api key ${apiKey} is not a Raft request`);
  }
}

// ---- Responses ---------------------------------------------------------------------------------

/** `ranges`: the sending node's cache of encoded entry ranges (uncached without). */
export function encodeResponse(m: RaftMessage, ranges?: EncodedRanges): object {
  switch (m.type) {
    case 'VoteResponse': {
      const body: Partial<WireVoteResp> = {
        errorCode: 0,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{
          partitionIndex: 0, errorCode: m.errorCode, leaderId: noneId(m.leaderId), leaderEpoch: m.leaderEpoch, voteGranted: m.voteGranted,
        }] }],
      };
      return body;
    }
    case 'BeginQuorumEpochResponse':
    case 'EndQuorumEpochResponse': {
      const body: Partial<WireBeginResp & WireEndResp> = {
        errorCode: 0,
        topics: [{ topicName: METADATA_TOPIC, partitions: [{
          partitionIndex: 0, errorCode: m.errorCode, leaderId: noneId(m.leaderId), leaderEpoch: m.leaderEpoch,
        }] }],
      };
      return body;
    }
    case 'FetchResponse': {
      // Absent tagged fields (divergingEpoch, snapshotId) take their schema defaults.
      const body = {
        throttleTimeMs: 0, errorCode: 0, sessionId: 0,
        responses: [{ topic: METADATA_TOPIC, topicId: METADATA_TOPIC_ID, partitions: [{
          partitionIndex: 0, errorCode: m.errorCode, highWatermark: BigInt(m.highWatermark), lastStableOffset: -1n,
          logStartOffset: BigInt(m.logStartOffset),
          ...(m.divergingEpoch !== undefined ? { divergingEpoch: { epoch: m.divergingEpoch.epoch, endOffset: BigInt(m.divergingEpoch.endOffset) } } : {}),
          currentLeader: { leaderId: noneId(m.leaderId), leaderEpoch: m.leaderEpoch },
          ...(m.snapshotId !== undefined ? { snapshotId: { endOffset: BigInt(m.snapshotId.endOffset), epoch: m.snapshotId.epoch } } : {}),
          abortedTransactions: null, preferredReadReplica: -1, records: ranges !== undefined ? ranges.encode(m.batches) : encodeEntries(m.batches),
        }] }],
      };
      return body;
    }
    case 'FetchSnapshotResponse': {
      const body: Partial<WireSnapResp> = {
        throttleTimeMs: 0, errorCode: 0,
        topics: [{ name: METADATA_TOPIC, partitions: [{
          index: 0, errorCode: m.errorCode,
          snapshotId: { endOffset: BigInt(m.snapshotId.endOffset), epoch: m.snapshotId.epoch },
          currentLeader: { leaderId: noneId(m.leaderId), leaderEpoch: m.leaderEpoch },
          size: BigInt(m.size), position: BigInt(m.position), unalignedRecords: Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.length),
        }] }],
      };
      return body;
    }
    default:
      throw new WireError(`${m.type} is not a response`);
  }
}

/** Decodes the answer to `request` (the Vote echo fields come from the request itself). */
export function decodeResponse(request: RaftRequest, body: Record<string, unknown>, entriesMax: number): RaftMessage {
  switch (request.type) {
    case 'VoteRequest': {
      const b = body as unknown as WireVoteResp;
      check(b.errorCode === 0, `Vote failed with error ${b.errorCode}`);
      const p = onlyPartition(b.topics, 'Vote response');
      const m: VoteResponse = {
        type: 'VoteResponse', errorCode: asError(p.errorCode), leaderEpoch: p.leaderEpoch, leaderId: someId(p.leaderId),
        voteGranted: p.voteGranted, preVote: request.preVote, candidateEpoch: request.candidateEpoch,
      };
      return m;
    }
    case 'BeginQuorumEpochRequest':
    case 'EndQuorumEpochRequest': {
      const b = body as unknown as WireBeginResp;
      check(b.errorCode === 0, `${request.type} failed with error ${b.errorCode}`);
      const p = onlyPartition(b.topics, 'quorum epoch response');
      const type = request.type === 'BeginQuorumEpochRequest' ? 'BeginQuorumEpochResponse' : 'EndQuorumEpochResponse';
      const m: BeginQuorumEpochResponse | EndQuorumEpochResponse = {
        type, errorCode: asError(p.errorCode), leaderEpoch: p.leaderEpoch, leaderId: someId(p.leaderId),
      };
      return m;
    }
    case 'FetchRequest': {
      const b = body as unknown as WireFetchResp;
      check(b.errorCode === 0, `Fetch failed with error ${b.errorCode}`);
      check(b.responses.length === 1 && b.responses[0]!.partitions.length === 1, 'Fetch response must hold one partition');
      // A decoded message has every field, tagged ones included (at their defaults when absent).
      const p = b.responses[0]!.partitions[0]! as Required<typeof b.responses[0]['partitions'][0]>;
      const m: FetchResponse = {
        type: 'FetchResponse', errorCode: asError(p.errorCode), leaderEpoch: p.currentLeader.leaderEpoch,
        leaderId: someId(p.currentLeader.leaderId), highWatermark: toNumber(p.highWatermark, 'highWatermark'),
        logStartOffset: toNumber(p.logStartOffset, 'logStartOffset'),
        ...(p.divergingEpoch.epoch >= 0 ? { divergingEpoch: { epoch: p.divergingEpoch.epoch, endOffset: toNumber(p.divergingEpoch.endOffset, 'divergingEpoch.endOffset') } } : {}),
        ...(p.snapshotId.epoch >= 0 && p.snapshotId.endOffset >= 0n ? { snapshotId: { endOffset: toNumber(p.snapshotId.endOffset, 'snapshotId.endOffset'), epoch: p.snapshotId.epoch } } : {}),
        batches: p.records === null ? [] : decodeEntries(p.records, entriesMax),
      };
      return m;
    }
    case 'FetchSnapshotRequest': {
      const b = body as unknown as WireSnapResp;
      check(b.errorCode === 0, `FetchSnapshot failed with error ${b.errorCode}`);
      const p = onlyPartition(b.topics, 'FetchSnapshot response') as Required<ReturnType<typeof onlyPartition<WireSnapResp['topics'][0]['partitions'][0]>>>;
      const m: FetchSnapshotResponse = {
        type: 'FetchSnapshotResponse', errorCode: asError(p.errorCode), leaderEpoch: p.currentLeader.leaderEpoch,
        leaderId: someId(p.currentLeader.leaderId),
        snapshotId: { endOffset: toNumber(p.snapshotId.endOffset, 'snapshotId.endOffset'), epoch: p.snapshotId.epoch },
        size: toNumber(p.size, 'size'), position: toNumber(p.position, 'position'),
        bytes: p.unalignedRecords === null ? new Uint8Array(0) : new Uint8Array(p.unalignedRecords),
      };
      return m;
    }
  }
}

export function encodeDescribeQuorum(d: QuorumDescription, errorCode: number): object {
  const replica = (r: ReplicaProgress) => ({
    replicaId: r.nodeId, replicaDirectoryId: ZERO_UUID, logEndOffset: BigInt(r.endOffset),
    lastFetchTimestamp: BigInt(r.lastFetchMs ?? -1), lastCaughtUpTimestamp: BigInt(r.lastCaughtUpMs ?? -1),
  });
  const body: Partial<WireDescribeResp> = {
    errorCode: 0, errorMessage: null,
    topics: [{ topicName: METADATA_TOPIC, partitions: [{
      partitionIndex: 0, errorCode, errorMessage: null, leaderId: noneId(d.leaderId), leaderEpoch: d.leaderEpoch,
      highWatermark: BigInt(d.highWatermark), currentVoters: d.voters.map(replica), observers: d.observers.map(replica),
    }] }],
    nodes: (d.voterEndpoints ?? []).map((e) => ({ nodeId: e.nodeId, listeners: [{ name: CONTROLLER_LISTENER, host: e.host, port: e.port }] })),
  };
  return body;
}

export function decodeDescribeQuorum(body: Record<string, unknown>): QuorumDescription & { errorCode: number } {
  const b = body as unknown as WireDescribeResp;
  const p = onlyPartition(b.topics, 'DescribeQuorum response');
  const replica = (r: { replicaId: number; logEndOffset: bigint; lastFetchTimestamp: bigint; lastCaughtUpTimestamp: bigint }) => ({
    nodeId: r.replicaId, endOffset: toNumber(r.logEndOffset, 'logEndOffset'),
    lastFetchMs: r.lastFetchTimestamp < 0n ? undefined : toNumber(r.lastFetchTimestamp, 'lastFetchTimestamp'),
    lastCaughtUpMs: r.lastCaughtUpTimestamp < 0n ? undefined : toNumber(r.lastCaughtUpTimestamp, 'lastCaughtUpTimestamp'),
  });
  return {
    errorCode: b.errorCode !== 0 ? b.errorCode : p.errorCode, leaderId: someId(p.leaderId), leaderEpoch: p.leaderEpoch,
    highWatermark: toNumber(p.highWatermark, 'highWatermark'), voters: p.currentVoters.map(replica), observers: p.observers.map(replica),
    voterEndpoints: (b.nodes ?? []).flatMap((n) => {
      const l = n.listeners.find((x) => x.name === CONTROLLER_LISTENER) ?? n.listeners[0];
      return l === undefined ? [] : [{ nodeId: n.nodeId, host: l.host, port: l.port }];
    }),
  };
}

// ---- Entries as record batches -----------------------------------------------------------------

function asBuffer(v: Uint8Array): Buffer {
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.length);
}

function controlKey(type: number): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(type, 2);
  return key;
}
const leaderChangeKey = controlKey(LEADER_CHANGE_TYPE);
const votersKey = controlKey(KRAFT_VOTERS_TYPE);

/**
 * The RecordBatch v2 bytes of one entry batch: the bytes themselves when the batch arrived as one
 * (a follower's log), else encoded once and remembered for as long as the batch lives (the
 * leader's store write and every follower's fetch of it share one encoding).
 */
const encodedBatches = new WeakMap<EntryBatch, Buffer>();

export function encodeBatch(b: EntryBatch): Buffer {
  if (b.recordBatch) return asBuffer(b.bytes);
  const cached = encodedBatches.get(b);
  if (cached !== undefined) return cached;
  const encoded = encodeRecordBatch(b);
  encodedBatches.set(b, encoded);
  return encoded;
}

/**
 * One uncompressed RecordBatch v2 for the batch, built by the records room's builder: no
 * timestamps (-1), no producer, null keys for data and the LEADER_CHANGE or KRAFT_VOTERS key for
 * control records. The values are views into the batch's buffer (no copy until the builder writes
 * them).
 */
function encodeRecordBatch(b: EntryBatch): Buffer {
  const key = b.kind === 'control' ? leaderChangeKey : b.kind === 'voters' ? votersKey : null;
  const src = asBuffer(b.bytes);
  const records: RecordInput[] = new Array(b.count);
  for (let i = 0; i < b.count; i++) records[i] = { key, value: src.subarray(b.bounds[2 * i]!, b.bounds[2 * i + 1]!) };
  return buildRecordBatchSync({
    records, baseOffset: b.baseOffset, partitionLeaderEpoch: b.epoch, baseTimestamp: NO_TIMESTAMP, isControl: b.kind !== 'data',
  });
}

/** Several batches back to back. */
export function encodeEntries(batches: readonly EntryBatch[]): Buffer {
  if (batches.length === 0) return Buffer.alloc(0);
  if (batches.length === 1) return encodeBatch(batches[0]!);
  return Buffer.concat(batches.map(encodeBatch));
}

/**
 * One node's recent concatenations (each follower fetches the same range), keyed by the (offset,
 * epoch) of the first and last entry, which by log matching name the whole range, within one
 * quorum. So one per node, never per process: two quorums in one process (tests) hold different
 * entries under the same keys, and a process-wide cache served one quorum's bytes to the other.
 */
export class EncodedRanges {
  private static readonly max = 4;
  private readonly ranges = new Map<string, Buffer>();

  encode(batches: readonly EntryBatch[]): Buffer {
    if (batches.length <= 1) return encodeEntries(batches);
    const first = batches[0]!;
    const last = batches[batches.length - 1]!;
    const key = `${first.baseOffset}:${first.epoch}:${lastOffsetOf(last)}:${last.epoch}`;
    const cached = this.ranges.get(key);
    if (cached !== undefined) return cached;
    const encoded = encodeEntries(batches);
    if (this.ranges.size >= EncodedRanges.max) this.ranges.delete(this.ranges.keys().next().value!);
    this.ranges.set(key, encoded);
    return encoded;
  }
}

/**
 * Record batches to entry batches, one per record batch, without an object per record: the
 * batch keeps its bytes (a view into `records`) and the bounds of its values.
 */
export function decodeEntries(records: Buffer, entriesMax: number): EntryBatch[] {
  const out: EntryBatch[] = [];
  let total = 0;
  let next = -1;
  for (const view of iterateBatches(records, { allowPartialTail: true })) {
    check(view.verifyCrc(), `record batch at ${view.baseOffset} fails its CRC`);
    check(view.compression === 0, 'compressed metadata batches are not supported');
    const count = view.recordCount;
    check(count > 0, `record batch at ${view.baseOffset} holds no records`);
    total += count;
    check(total <= entriesMax, `fetch response holds more than ${entriesMax} entries`);
    const baseOffset = view.baseOffset;
    check(next < 0 || baseOffset === next, 'fetched entries are not contiguous');
    const bytes = view.bytes();
    const bounds = new Int32Array(2 * count);
    const control = (view.attributes & ATTR_CONTROL) !== 0;
    let controlType = -1;
    let i = 0;
    forEachRecord(view, bytes.subarray(RECORD_BATCH_HEADER_BYTES), (c) => {
      check(c.valueLength >= 0, 'metadata records have values');
      if (control) {
        check(c.keyLength >= 4, 'a control record has a 4-byte key');
        const type = c.body.readInt16BE(c.keyStart + 2);
        check(type === LEADER_CHANGE_TYPE || type === KRAFT_VOTERS_TYPE, `control record type ${type} in the metadata log`);
        check(controlType < 0 || controlType === type, 'a control batch mixes record types');
        controlType = type;
      }
      check(c.offset === baseOffset + i, `record ${i} of the batch at ${baseOffset} has offset ${c.offset}`);
      bounds[2 * i] = RECORD_BATCH_HEADER_BYTES + c.valueStart;
      bounds[2 * i + 1] = RECORD_BATCH_HEADER_BYTES + c.valueStart + c.valueLength;
      i++;
    });
    check(i === count, `record batch at ${baseOffset} holds ${i} records, not ${count}`);
    out.push({
      baseOffset, epoch: view.partitionLeaderEpoch, kind: !control ? 'data' : controlType === KRAFT_VOTERS_TYPE ? 'voters' : 'control',
      count, bytes, bounds, recordBatch: true,
    });
    next = baseOffset + count;
  }
  return out;
}

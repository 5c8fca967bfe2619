// ShareFetch (key 78), v0-1 (KIP-932; v1 is Kafka 4.1's stable version: MaxRecords, BatchSize,
// AcquisitionLockTimeoutMs). A share consumer's fetch from the leaders of its partitions: the
// share session (epoch 0 opens it with the request's partitions, then each request adds and
// forgets partitions at the next epoch; -1 closes it and only acknowledges), acknowledgements
// piggybacked per partition (applied first; AcknowledgeErrorCode), then records acquired for this
// member from every partition of the session (AcquiredRecords: the offsets it holds, with their
// delivery counts; the Records are whole batches, which the client filters by them). With nothing
// to acquire anywhere it waits once up to MaxWaitMs for appends. v0's PartitionMaxBytes is
// ignored (MaxBytes bounds the answer); BatchSize is a hint this broker does not use.
import { ErrorCode, type ShareFetchRequest, type ShareFetchResponse, type ShareFetchResponsePartitionData } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareServices } from '../services.js';
import { SHARE_SESSION_FINAL_EPOCH, SHARE_SESSION_INITIAL_EPOCH } from '../share-sessions.js';
import { ackBatches, groupByTopic, resolvePartition } from './share-common.js';

const failed = (errorCode: number, errorMessage: string | null = null): ShareFetchResponse =>
  ({ throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] });
const partitionData = (partitionIndex: number, over: Partial<ShareFetchResponsePartitionData> = {}): ShareFetchResponsePartitionData => ({
  partitionIndex, errorCode: 0, errorMessage: null, acknowledgeErrorCode: 0, acknowledgeErrorMessage: null,
  // Empty records rather than null: librdkafka 2.15 refuses a null record set (MessageSetSize -1).
  currentLeader: { leaderId: -1, leaderEpoch: -1 }, records: EMPTY, acquiredRecords: [], ...over,
});
const EMPTY = Buffer.alloc(0);
/** librdkafka's default max.poll.records; v0 carries no MaxRecords. */
const V0_MAX_RECORDS = 500;

export const shareFetchHandler: HandlerSpec<ShareServices, 78> = {
  apiKey: 78,
  minVersion: 0,
  maxVersion: 1,
  feature: 'share.version',
  async handle(request: ShareFetchRequest, ctx) {
    const { groupId, memberId, shareSessionEpoch: epoch } = request;
    if (!groupId) return failed(ErrorCode.INVALID_GROUP_ID, 'GroupId must be set.');
    if (!memberId) return failed(ErrorCode.INVALID_REQUEST, 'MemberId must be set.');
    const view = ctx.services.metadata();
    const wanted = request.topics.flatMap((t) => t.partitions.map((p) => ({ topicId: t.topicId, p })));
    const forget = request.forgottenTopicsData.flatMap((t) => t.partitions.map((partition) => ({ topicId: t.topicId, partition })));
    const sessions = ctx.services.shareSessions;
    const opened = sessions.open(groupId, memberId, epoch, wanted.map((w) => ({ topicId: w.topicId, partition: w.p.partitionIndex })), forget, ctx.nowMs);
    if (opened.errorCode !== 0 || opened.session === null) return failed(opened.errorCode);
    const share = ctx.services.share;
    const resolve = (topicId: string, partition: number) => resolvePartition(view, topicId, partition, ctx.readableTopic);
    if (opened.replaced.length > 0) {
      await share.releaseMember(groupId, memberId, opened.replaced.map((x) => resolvePartition(view, x.topicId, x.partition)).flatMap((r) => (r.ok ? [r.p] : [])));
    }
    const answers = new Map<string, { topicId: string; data: ShareFetchResponsePartitionData }>();
    const answer = (topicId: string, partition: number) => {
      const k = `${topicId}:${partition}`;
      return answers.get(k) ?? answers.set(k, { topicId, data: partitionData(partition) }).get(k)!;
    };
    // Piggybacked acknowledgements of a partition this fetch acquires from are applied by the
    // acquisition itself, first, and written with it in one state write; the others (a final
    // epoch, a partition forgotten or not readable) are applied on their own, before the fetch.
    const acks = new Map(wanted.filter((w) => w.p.acknowledgementBatches.length > 0).map((w) => [`${w.topicId}:${w.p.partitionIndex}`, w]));
    const session = epoch === SHARE_SESSION_FINAL_EPOCH ? null : opened.session;
    const targets = session === null ? [] : [...session.partitions.values()].map((x) => resolve(x.topicId, x.partition));
    const fetchable = targets.flatMap((t) => (t.ok ? [t.p] : []))
      .map((p) => {
        const w = acks.get(`${p.topicId}:${p.partition}`);
        acks.delete(`${p.topicId}:${p.partition}`);
        return w ? { ...p, acknowledgements: ackBatches(w.p.acknowledgementBatches) } : p;
      });
    await Promise.all([...acks.values()].map(async (w) => {
      const r = resolve(w.topicId, w.p.partitionIndex);
      answer(w.topicId, w.p.partitionIndex).data.acknowledgeErrorCode = r.ok ? await share.acknowledge(groupId, memberId, r.p, ackBatches(w.p.acknowledgementBatches)) : r.errorCode;
    }));
    if (epoch === SHARE_SESSION_FINAL_EPOCH) {
      // Releasing needs no READ: it only gives records back.
      const all = sessions.close(groupId, memberId).map((x) => resolvePartition(view, x.topicId, x.partition)).flatMap((r) => (r.ok ? [r.p] : []));
      await share.releaseMember(groupId, memberId, all);
      return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, acquisitionLockTimeoutMs: share.lockDurationMs(groupId), responses: groupByTopic([...answers.values()]), nodeEndpoints: [] };
    }
    for (const t of targets) if (!t.ok) answer(t.topicId, t.partition).data.errorCode = t.errorCode;
    const maxRecords = ctx.apiVersion >= 1 && request.maxRecords > 0 ? request.maxRecords : V0_MAX_RECORDS;
    const results = await share.fetch(groupId, memberId, fetchable, { maxBytes: request.maxBytes, maxRecords, maxWaitMs: request.maxWaitMs });
    results.forEach((r, i) => {
      const p = fetchable[i]!;
      const has = answers.has(`${p.topicId}:${p.partition}`);
      if (r.errorCode === 0 && r.acquired.length === 0 && r.acknowledgeErrorCode === null && !has && epoch !== SHARE_SESSION_INITIAL_EPOCH) return;
      const a = answer(p.topicId, p.partition).data;
      if (r.acknowledgeErrorCode !== null) a.acknowledgeErrorCode = r.acknowledgeErrorCode;
      a.errorCode = r.errorCode;
      a.records = r.records ?? EMPTY;
      a.acquiredRecords = r.acquired.map((x) => ({ firstOffset: BigInt(x.firstOffset), lastOffset: BigInt(x.lastOffset), deliveryCount: x.deliveryCount }));
    });
    sessions.advance(session!);
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, acquisitionLockTimeoutMs: share.lockDurationMs(groupId), responses: groupByTopic([...answers.values()]), nodeEndpoints: [] };
  },
};

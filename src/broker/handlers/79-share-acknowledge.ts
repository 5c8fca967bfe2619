// ShareAcknowledge (key 79), v0-1 (KIP-932): a share consumer's acknowledgements outside a fetch
// (commitSync/commitAsync, close): accept, release, reject or gap per offset range, applied on the
// share-partitions led here, in the member's share session (its epoch must be the session's next
// one; -1 closes the session after acknowledging, releasing whatever it still holds). A partition
// answers INVALID_RECORD_STATE for offsets the member does not hold.
import { ErrorCode, type ShareAcknowledgeRequest, type ShareAcknowledgeResponse, type ShareAcknowledgeResponsePartitionData } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareServices } from '../services.js';
import { SHARE_SESSION_FINAL_EPOCH, SHARE_SESSION_INITIAL_EPOCH } from '../share-sessions.js';
import { ackBatches, groupByTopic, resolvePartition } from './share-common.js';

const failed = (errorCode: number, errorMessage: string | null = null): ShareAcknowledgeResponse =>
  ({ throttleTimeMs: 0, errorCode, errorMessage, responses: [], nodeEndpoints: [] });

export const shareAcknowledgeHandler: HandlerSpec<ShareServices, 79> = {
  apiKey: 79,
  minVersion: 0,
  maxVersion: 1,
  feature: 'share.version',
  async handle(request: ShareAcknowledgeRequest, ctx) {
    const { groupId, memberId, shareSessionEpoch: epoch } = request;
    if (!groupId) return failed(ErrorCode.INVALID_GROUP_ID, 'GroupId must be set.');
    if (!memberId) return failed(ErrorCode.INVALID_REQUEST, 'MemberId must be set.');
    if (epoch === SHARE_SESSION_INITIAL_EPOCH) return failed(ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'ShareAcknowledge needs an open share session.');
    const sessions = ctx.services.shareSessions;
    const opened = sessions.open(groupId, memberId, epoch, [], [], ctx.nowMs);
    if (opened.errorCode !== 0 || opened.session === null) return failed(opened.errorCode);
    const view = ctx.services.metadata();
    const share = ctx.services.share;
    const entries = await Promise.all(request.topics.flatMap((t) => t.partitions.map(async (p) => {
      const r = resolvePartition(view, t.topicId, p.partitionIndex, ctx.readableTopic);
      const errorCode = r.ok ? await share.acknowledge(groupId, memberId, r.p, ackBatches(p.acknowledgementBatches)) : r.errorCode;
      const data: ShareAcknowledgeResponsePartitionData = { partitionIndex: p.partitionIndex, errorCode, errorMessage: null, currentLeader: { leaderId: -1, leaderEpoch: -1 } };
      return { topicId: t.topicId, data };
    })));
    if (epoch === SHARE_SESSION_FINAL_EPOCH) {
      const held = sessions.close(groupId, memberId).map((x) => resolvePartition(view, x.topicId, x.partition)).flatMap((r) => (r.ok ? [r.p] : []));
      await share.releaseMember(groupId, memberId, held);
    } else {
      sessions.advance(opened.session);
    }
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses: groupByTopic(entries), nodeEndpoints: [] };
  },
};

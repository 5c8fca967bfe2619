// DeleteShareGroupOffsets (key 92), v0 (KIP-932; `kafka-share-groups.sh --delete-offsets`): a
// share group forgets topics, only while it has no members (NON_EMPTY_GROUP): they leave its
// share-partitions and their state is deleted from the share coordinator wherever it is led
// (DeleteShareGroupState), so the next member starts them per share.auto.offset.reset. A topic
// the cluster does not know: UNKNOWN_TOPIC_OR_PARTITION.
import { ErrorCode, ZERO_UUID, type DeleteShareGroupOffsetsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareAdminServices } from '../services.js';

export const deleteShareGroupOffsetsHandler: HandlerSpec<ShareAdminServices, 92> = {
  apiKey: 92,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: DeleteShareGroupOffsetsRequest, ctx) {
    const s = ctx.services;
    const view = s.metadata();
    const topics = request.topics.map((t) => ({ name: t.topicName, topicId: view.topic(t.topicName)?.id ?? null }));
    const ids = topics.flatMap((t) => (t.topicId === null ? [] : [t.topicId]));
    const r = await s.groups.deleteShareOffsets(request.groupId, ids);
    if (r.errorCode !== ErrorCode.NONE) return { throttleTimeMs: 0, errorCode: r.errorCode, errorMessage: null, responses: [] };
    const responses = await Promise.all(topics.map(async (t) => {
      if (t.topicId === null) return { topicName: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null };
      const deleted = r.deleted.find((d) => d.topicId === t.topicId);
      const codes = await Promise.all((deleted?.partitions ?? []).map((partition) => s.sharePersister.delete({ groupId: request.groupId, topicId: t.topicId!, partition })));
      return { topicName: t.name, topicId: t.topicId, errorCode: codes.find((c) => c !== ErrorCode.NONE) ?? ErrorCode.NONE, errorMessage: null };
    }));
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, responses };
  },
};

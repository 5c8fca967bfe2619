// AlterShareGroupOffsets (key 91), v0 (KIP-932; `kafka-share-groups.sh --reset-offsets`): sets the
// start offset of a share group's share-partitions, only while the group has no members
// (NON_EMPTY_GROUP). The group (created when it does not exist) records the partitions as its
// share-partitions, then each share-partition's state starts again at the offset under the next
// state epoch (InitializeShareGroupState wherever it is led), so a share-partition leader still
// holding the old state is fenced and reloads. Unknown topics and partitions:
// UNKNOWN_TOPIC_OR_PARTITION per partition.
import { ErrorCode, ZERO_UUID, type AlterShareGroupOffsetsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareAdminServices } from '../services.js';

export const alterShareGroupOffsetsHandler: HandlerSpec<ShareAdminServices, 91> = {
  apiKey: 91,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: AlterShareGroupOffsetsRequest, ctx) {
    const s = ctx.services;
    const view = s.metadata();
    const topics = request.topics.map((t) => {
      const topic = view.topic(t.topicName);
      const exists = (p: number) => topic?.partitions.some((x) => x.partition === p) ?? false;
      return { name: t.topicName, topicId: topic?.id ?? '', partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, startOffset: Number(p.startOffset), known: exists(p.partitionIndex) })) };
    });
    const known = topics.map((t) => ({ topicId: t.topicId, name: t.name, partitions: t.partitions.filter((p) => p.known).map((p) => p.partition) })).filter((t) => t.partitions.length > 0);
    const errorCode = known.length > 0 ? await s.groups.alterShareOffsets(request.groupId, known) : ErrorCode.NONE;
    const responses = await Promise.all(topics.map(async (t) => ({
      topicName: t.name, topicId: t.topicId,
      partitions: await Promise.all(t.partitions.map(async (p) => {
        const code = !p.known ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : errorCode !== ErrorCode.NONE ? errorCode
          : p.startOffset < 0 ? ErrorCode.INVALID_REQUEST : await reset(s, { groupId: request.groupId, topicId: t.topicId, partition: p.partition }, p.startOffset);
        return { partitionIndex: p.partition, errorCode: code, errorMessage: null };
      })),
    })));
    return { throttleTimeMs: 0, errorCode, errorMessage: null, responses };
  },
};

async function reset(s: ShareAdminServices, k: { groupId: string; topicId: string; partition: number }, startOffset: number): Promise<number> {
  const current = await s.sharePersister.summary(k);
  if (current.errorCode !== ErrorCode.NONE && current.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION) return current.errorCode;
  return s.sharePersister.initialize(k, (current.stateEpoch ?? -1) + 1, startOffset);
}

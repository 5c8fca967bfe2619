// ReadShareGroupStateSummary (key 87), v0 (KIP-932, broker to broker): a share-partition's start
// offset and state epoch without its batches, for DescribeShareGroupOffsets. It does not record a
// leader epoch (a summary fences no one). UNKNOWN_TOPIC_OR_PARTITION when never initialized;
// NOT_COORDINATOR off the leader of the key's `__share_group_state` partition.
import type { ReadShareGroupStateSummaryRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareStateServices } from '../services.js';
import { perSharePartition } from './share-state-common.js';

export const readShareGroupStateSummaryHandler: HandlerSpec<ShareStateServices, 87> = {
  apiKey: 87,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: ReadShareGroupStateSummaryRequest, ctx) {
    const results = await perSharePartition(request, async (k, p) => {
      const r = await ctx.services.shareState.summary(k);
      return { partition: p.partition, errorCode: r.errorCode, errorMessage: r.errorMessage, stateEpoch: r.stateEpoch ?? 0, startOffset: BigInt(r.startOffset ?? -1) };
    });
    return { results };
  },
};

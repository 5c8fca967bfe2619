// ReadShareGroupState (key 84), v0 (KIP-932, broker to broker): a share-partition leader taking a
// partition over reads its state (start offset, state epoch, the in-flight batches with their
// states and delivery counts). Its LeaderEpoch is recorded first, fencing the previous leader's
// writes; an older one than recorded is FENCED_LEADER_EPOCH. A share-partition never initialized
// is UNKNOWN_TOPIC_OR_PARTITION (the leader then initializes it). NOT_COORDINATOR off the leader
// of the key's `__share_group_state` partition.
import type { ReadShareGroupStateRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareStateServices } from '../services.js';
import { perSharePartition, stateBatchesToWire } from './share-state-common.js';

export const readShareGroupStateHandler: HandlerSpec<ShareStateServices, 84> = {
  apiKey: 84,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: ReadShareGroupStateRequest, ctx) {
    const results = await perSharePartition(request, async (k, p) => {
      const r = await ctx.services.shareState.read(k, p.leaderEpoch);
      return {
        partition: p.partition, errorCode: r.errorCode, errorMessage: r.errorMessage, stateEpoch: r.stateEpoch ?? 0,
        startOffset: BigInt(r.startOffset ?? -1), stateBatches: stateBatchesToWire(r.stateBatches ?? []),
      };
    });
    return { results };
  },
};

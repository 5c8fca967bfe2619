// WriteShareGroupState (key 85), v0 (KIP-932, broker to broker): a share-partition leader writes
// its state after every change (acquisition, acknowledgement, release, lock expiry) before it
// answers the consumer. A write under an older state epoch is FENCED_STATE_EPOCH, from an older
// leader FENCED_LEADER_EPOCH. NOT_COORDINATOR off the leader of the key's `__share_group_state`
// partition. The answer goes out once the record is committed there (acks=all).
import type { WriteShareGroupStateRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareStateServices } from '../services.js';
import { perSharePartition, stateBatchesFromWire } from './share-state-common.js';

export const writeShareGroupStateHandler: HandlerSpec<ShareStateServices, 85> = {
  apiKey: 85,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: WriteShareGroupStateRequest, ctx) {
    const results = await perSharePartition(request, async (k, p) => {
      const errorCode = await ctx.services.shareState.write({
        ...k, stateEpoch: p.stateEpoch, leaderEpoch: p.leaderEpoch, startOffset: Number(p.startOffset), stateBatches: stateBatchesFromWire(p.stateBatches),
      });
      return { partition: p.partition, errorCode, errorMessage: null };
    });
    return { results };
  },
};

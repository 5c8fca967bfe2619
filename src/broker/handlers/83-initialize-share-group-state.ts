// InitializeShareGroupState (key 83), v0 (KIP-932, broker to broker): a share-partition starts at
// StartOffset under StateEpoch: its state is replaced by a snapshot with nothing in flight. Sent
// by a share-partition leader that found no state, and by the group coordinator when offsets are
// altered. Served by the share coordinator leading the key's `__share_group_state` partition;
// elsewhere NOT_COORDINATOR. An older state epoch is FENCED_STATE_EPOCH.
import type { InitializeShareGroupStateRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareStateServices } from '../services.js';
import { perSharePartition } from './share-state-common.js';

export const initializeShareGroupStateHandler: HandlerSpec<ShareStateServices, 83> = {
  apiKey: 83,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: InitializeShareGroupStateRequest, ctx) {
    const results = await perSharePartition(request, async (k, p) => {
      const errorCode = await ctx.services.shareState.initialize(k, p.stateEpoch, Number(p.startOffset));
      return { partition: p.partition, errorCode, errorMessage: null };
    });
    return { results };
  },
};

// DeleteShareGroupState (key 86), v0 (KIP-932, broker to broker): the group coordinator deletes a
// share-partition's state when its group is deleted or its offsets are (DeleteGroups,
// DeleteShareGroupOffsets): tombstones for its snapshot and update records. Deleting what does not
// exist succeeds. NOT_COORDINATOR off the leader of the key's `__share_group_state` partition.
import type { DeleteShareGroupStateRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { ShareStateServices } from '../services.js';
import { perSharePartition } from './share-state-common.js';

export const deleteShareGroupStateHandler: HandlerSpec<ShareStateServices, 86> = {
  apiKey: 86,
  minVersion: 0,
  maxVersion: 0,
  feature: 'share.version',
  async handle(request: DeleteShareGroupStateRequest, ctx) {
    const results = await perSharePartition(request, async (k, p) => ({ partition: p.partition, errorCode: await ctx.services.shareState.delete(k), errorMessage: null }));
    return { results };
  },
};

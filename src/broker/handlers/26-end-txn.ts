// EndTxn (key 26), v0-4: commit or abort. The coordinator writes PrepareCommit/PrepareAbort and
// answers; the markers go to every partition of the transaction after that, and CompleteCommit /
// CompleteAbort follows them (a read_committed consumer sees the data once the marker is in).
// v5 (KIP-890 part 2, an epoch bump on every transaction) is not offered: ApiVersions says 0-4,
// so clients keep transaction version 1.
import type { EndTxnRequest } from '../../protocol/index.js';
import { fencedErrorForVersion } from '../../coordinator/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const endTxnHandler: HandlerSpec<TxnServices, 26> = {
  apiKey: 26,
  minVersion: 0,
  maxVersion: 4,
  async handle(request: EndTxnRequest, ctx) {
    const code = await ctx.services.txn.endTxn({
      transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch, commit: request.committed,
    });
    return { throttleTimeMs: 0, errorCode: fencedErrorForVersion(code, 26, ctx.apiVersion), producerId: -1n, producerEpoch: -1 };
  },
};

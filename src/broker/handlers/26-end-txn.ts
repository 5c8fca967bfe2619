// EndTxn (key 26), v0-5: commit or abort. The coordinator writes PrepareCommit/PrepareAbort and
// answers; the markers go to every partition of the transaction after that, and CompleteCommit /
// CompleteAbort follows them (a read_committed consumer sees the data once the marker is in).
// v5 is transaction version 2 (KIP-890 part 2), as Kafka reads the version: every EndTxn bumps the
// producer epoch (the markers carry the bumped one, fencing late writes of the old), the answer
// carries the producer id and epoch the client continues with (a new producer id at epoch 0 once
// the epochs ran out), a retry is recognised by its epoch, and an abort with no transaction open
// is allowed. v0-4 are transaction version 1, unchanged. Clients use v5 only when ApiVersions
// finalizes `transaction.version` 2 (src/metadata/features.ts).
import type { EndTxnRequest } from '../../protocol/index.js';
import { fencedErrorForVersion } from '../../coordinator/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

/** The first EndTxn version of transaction version 2 (Kafka's EndTxnRequest.LAST_STABLE_VERSION_BEFORE_TRANSACTION_V2 + 1). */
export const END_TXN_V2_VERSION = 5;

export const endTxnHandler: HandlerSpec<TxnServices, 26> = {
  apiKey: 26,
  minVersion: 0,
  maxVersion: 5,
  async handle(request: EndTxnRequest, ctx) {
    const r = await ctx.services.txn.endTxn({
      transactionalId: request.transactionalId, producerId: request.producerId, producerEpoch: request.producerEpoch, commit: request.committed,
      clientTransactionVersion: ctx.apiVersion >= END_TXN_V2_VERSION ? 2 : 0,
    });
    return { throttleTimeMs: 0, errorCode: fencedErrorForVersion(r.errorCode, 26, ctx.apiVersion), producerId: r.producerId, producerEpoch: r.producerEpoch };
  },
};

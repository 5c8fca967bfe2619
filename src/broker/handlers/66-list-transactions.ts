// ListTransactions (key 66), v0-1: the transactional ids this broker coordinates, filtered by state
// names (unknown names are echoed back in unknownStateFilters), producer ids and, v1+, by running
// longer than DurationFilter ms. COORDINATOR_LOAD_IN_PROGRESS while a shard is loading.
import type { ListTransactionsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const listTransactionsHandler: HandlerSpec<TxnServices, 66> = {
  apiKey: 66,
  minVersion: 0,
  maxVersion: 1,
  handle(request: ListTransactionsRequest, ctx) {
    const out = ctx.services.txn.list({
      stateFilters: request.stateFilters, producerIdFilters: request.producerIdFilters,
      durationFilterMs: ctx.apiVersion >= 1 ? Number(request.durationFilter) : -1, transactionalIdPattern: null,
    });
    return { throttleTimeMs: 0, ...out };
  },
};

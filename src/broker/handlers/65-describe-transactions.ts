// DescribeTransactions (key 65), v0: state, timeout, start time, producer id/epoch and partitions
// of each transactional id this broker coordinates (NOT_COORDINATOR for the others,
// TRANSACTIONAL_ID_NOT_FOUND for unknown ones).
import type { DescribeTransactionsRequest } from '../../protocol/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

export const describeTransactionsHandler: HandlerSpec<TxnServices, 65> = {
  apiKey: 65,
  minVersion: 0,
  maxVersion: 0,
  handle(request: DescribeTransactionsRequest, ctx) {
    return { throttleTimeMs: 0, transactionStates: request.transactionalIds.map((id) => ctx.services.txn.describe(id)) };
  },
};

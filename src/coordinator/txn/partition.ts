// Which `__transaction_state` partition owns a transactional id: Kafka's partitionFor, the same
// hash the group coordinator uses for group ids.
import { partitionForGroup } from '../group/service.js';

export const TRANSACTION_STATE_TOPIC = '__transaction_state';

export function partitionForTransactionalId(transactionalId: string, partitions: number): number {
  return partitionForGroup(transactionalId, partitions);
}

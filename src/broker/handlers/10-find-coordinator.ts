// FindCoordinator (key 10), v0-6. Key type 0 (group): the coordinator of group G is the leader of
// `__consumer_offsets` partition abs(G.hashCode()) % offsets.topic.num.partitions, as Kafka
// computes it, so clients that cache the mapping agree. The topic is created on first use (Kafka
// answers COORDINATOR_NOT_AVAILABLE meanwhile; we wait for the controller, then answer) and the
// partition's shard starts loading. v4+ batch keys (`coordinatorKeys`), with a result per key.
// Key type 1 (transaction): the leader of `__transaction_state` partition
// abs(id.hashCode()) % transaction.state.log.num.partitions, the topic created on first use in the
// same way. Other key types are INVALID_REQUEST. librdkafka uses v0-2, kafkajs v2, Java v4+.
import { ErrorCode, type FindCoordinatorRequest } from '../../protocol/index.js';
import { OFFSETS_TOPIC, TRANSACTION_STATE_TOPIC } from '../../coordinator/index.js';
import type { HandlerSpec } from '../context.js';
import type { TxnServices } from '../services.js';

interface Found { key: string; nodeId: number; host: string; port: number; errorCode: number; errorMessage: string | null }

const failure = (key: string, errorCode: number, errorMessage: string | null = null): Found => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage });

function findCoordinator(key: string, s: TxnServices, listenerName: string, topicError: number, keyType: 0 | 1): Found {
  if (topicError !== 0) return failure(key, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  // Kafka refuses an empty transactional id here (an empty group id is allowed, for old clients).
  if (keyType === 1 && key === '') return failure(key, ErrorCode.INVALID_REQUEST, 'an empty transactional id');
  const view = s.metadata();
  const partition = keyType === 0 ? s.groups.partitionFor(key) : s.txn.partitionFor(key);
  const topic = keyType === 0 ? OFFSETS_TOPIC : TRANSACTION_STATE_TOPIC;
  const leader = view.topic(topic)?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  const endpoint = view.brokers(listenerName).find((b) => b.nodeId === leader);
  if (!endpoint) return failure(key, ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (keyType === 0) s.groups.ensureLoading(partition);
  else s.txn.ensureLoading(partition);
  return { key, nodeId: endpoint.nodeId, host: endpoint.host, port: endpoint.port, errorCode: 0, errorMessage: null };
}

export const findCoordinatorHandler: HandlerSpec<TxnServices, 10> = {
  apiKey: 10,
  minVersion: 0,
  maxVersion: 6,
  async handle(request: FindCoordinatorRequest, ctx) {
    const keys = ctx.apiVersion < 4 ? [request.key] : request.coordinatorKeys;
    const keyType = ctx.apiVersion === 0 ? 0 : request.keyType;
    let found: Found[];
    if (keyType === 0 || keyType === 1) {
      const topicError = keyType === 0 ? await ctx.services.ensureOffsetsTopic() : await ctx.services.ensureTransactionTopic();
      found = keys.map((k) => findCoordinator(k, ctx.services, ctx.listenerName, topicError, keyType));
    } else {
      found = keys.map((k) => failure(k, ErrorCode.INVALID_REQUEST, `unsupported key type ${keyType}`));
    }
    if (ctx.apiVersion >= 4) return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, nodeId: -1, host: '', port: -1, coordinators: found };
    const f = found[0]!;
    return { throttleTimeMs: 0, errorCode: f.errorCode, errorMessage: f.errorMessage, nodeId: f.nodeId, host: f.host, port: f.port, coordinators: [] };
  },
};

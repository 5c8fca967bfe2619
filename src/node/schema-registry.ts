// The schema registry on a node: its `_schemas` port over this broker's replica manager, the
// service that replays it, the REST door and its listener (schema.registry.listener). The writer
// is the leader of `_schemas`-0; other nodes forward writes to the registry address the writer
// registered with the controller (a registration endpoint named SCHEMA_REGISTRY), so any node can
// find it from the metadata image alone.
import { ErrorCode } from '../protocol/index.js';
import { RegistryRest, RegistryService, SCHEMAS_TOPIC, startRegistryListener, type RegistryListener, type SchemasLog } from '../registry/index.js';
import { componentLogger, partitionKey, type Clock, type Logger } from '../util/index.js';
import type { Broker } from './broker.js';

/** The name of the registration endpoint that carries a node's registry address. */
export const SCHEMA_REGISTRY_ENDPOINT = 'SCHEMA_REGISTRY';

export interface NodeRegistry { service: RegistryService; listener: RegistryListener; close(): Promise<void> }

function schemasLog(broker: Broker, commitTimeoutMs: number): SchemasLog {
  const rm = broker.replicaManager;
  const partition = () => rm.partition(SCHEMAS_TOPIC, 0);
  return {
    hasReplica: () => partition() !== undefined && partition() !== null,
    isLeader: () => partition()?.isLeader ?? false,
    leaderId: () => broker.partitionLeader(SCHEMAS_TOPIC, 0),
    highWatermark: () => partition()?.highWatermark ?? 0,
    logEndOffset: () => partition()?.log.logEndOffset ?? 0,
    logStartOffset: () => partition()?.log.logStartOffset ?? 0,
    read: async (offset, maxOffset) => {
      const p = partition();
      if (!p || offset >= maxOffset) return Buffer.alloc(0);
      return p.log.read(offset, 1024 * 1024, maxOffset, true);
    },
    append: async (batch) => {
      const out = await rm.produce(-1, commitTimeoutMs, [{ topic: SCHEMAS_TOPIC, partition: 0, records: batch }]);
      const r = out.get(partitionKey(SCHEMAS_TOPIC, 0));
      return { errorCode: r?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR, baseOffset: Number(r?.baseOffset ?? -1n) };
    },
    ensureTopic: () => broker.ensureSchemasTopic(),
  };
}

/** Starts the registry of `broker` listening at `address`. */
export async function startNodeRegistry(broker: Broker, address: { host: string; port: number }, clock: Clock, logger: Logger): Promise<NodeRegistry> {
  const log = componentLogger(logger, 'schema-registry');
  const service = new RegistryService({ log: schemasLog(broker, 30_000), clock, logger: log });
  const rest = new RegistryRest(service, (nodeId) => broker.endpointUrl(nodeId, SCHEMA_REGISTRY_ENDPOINT));
  const listener = await startRegistryListener(rest, address, log);
  service.start();
  // Broker-side schema validation asks this node's copy of the registry.
  broker.replicaManager.schemaIds = {
    refusal: (topic, isKey, strategy, id) => service.hasLocalCopy()
      ? service.state.validationRefusal(topic, isKey, strategy, id)
      : `this broker holds no replica of ${SCHEMAS_TOPIC} to check it against`,
  };
  return {
    service, listener,
    close: async () => { broker.replicaManager.schemaIds = null; service.close(); await listener.close(); },
  };
}

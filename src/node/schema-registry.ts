// The schema registry on a node: its `_schemas` port over this broker's replica manager, the
// service that replays it, the REST door and its listener (schema.registry.listener). The writer
// is the leader of `_schemas`-0; other nodes forward writes to the registry address the writer
// registered with the controller (a registration endpoint named SCHEMA_REGISTRY), so any node can
// find it from the metadata image alone.
//
// Security: the registry listener is the listener named SCHEMA_REGISTRY in
// listener.security.protocol.map (PLAINTEXT when absent). SSL serves HTTPS with its
// listener.name.schema_registry.ssl.* settings, falling back to the broker's ssl.* (Kafka's own
// lookup); SASL_PLAINTEXT and SASL_SSL ask for HTTP Basic, checked against the users the SASL
// mechanisms enabled for it know (PLAIN's JAAS users, SCRAM credentials in the metadata).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { BrokerConfig } from '../config/index.js';
import { clientTlsFor, listenerTlsOf, saslSettingsOf, usesSasl, usesTls } from '../network/index.js';
import { ErrorCode } from '../protocol/index.js';
import { RegistryRest, RegistryService, SCHEMAS_TOPIC, startRegistryListener, type RegistryListener, type RegistryListenerSecurity, type SchemasLog } from '../registry/index.js';
import { scramKeysFromSaltedPassword, scramSaltedPassword, SCRAM_MECHANISM_IDS, secretsEqual, tlsPeerPrincipal } from '../security/index.js';
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
    endOffsetForEpoch: (epoch) => partition()?.log.endOffsetForEpoch(epoch)?.endOffset ?? -1,
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

/** The registry listener's security protocol (listener.security.protocol.map; PLAINTEXT when it is not named there). */
export function registryProtocol(config: BrokerConfig): string {
  return config.securityProtocolMap.get(SCHEMA_REGISTRY_ENDPOINT) ?? 'PLAINTEXT';
}

/**
 * HTTP Basic over the SASL users of the registry listener: PLAIN's JAAS users, then SCRAM
 * credentials. A SCRAM check costs a PBKDF2 of `iterations` rounds, so a verified password is
 * remembered (as a hash, with the stored key it matched: a changed credential no longer matches).
 */
function basicUsers(broker: Broker, config: BrokerConfig): (user: string, password: string) => string | null {
  const settings = saslSettingsOf(config, SCHEMA_REGISTRY_ENDPOINT);
  const scram = (['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const).filter((m) => settings.mechanisms.includes(m));
  const verified = new Set<string>();
  return (user, password) => {
    const plain = settings.plainUsers.get(user);
    if (plain !== undefined && secretsEqual(plain, password)) return `User:${user}`;
    for (const mechanism of scram) {
      const c = broker.scramImage.credential(user, SCRAM_MECHANISM_IDS[mechanism]);
      if (c === undefined) continue;
      const key = createHash('sha256').update(`${mechanism}\u0000${user}\u0000${password}\u0000`).update(c.storedKey).digest('hex');
      if (verified.has(key)) return `User:${user}`;
      const keys = scramKeysFromSaltedPassword(mechanism, scramSaltedPassword(mechanism, password, c.salt, c.iterations), c.salt, c.iterations);
      if (keys.storedKey.length === c.storedKey.length && timingSafeEqual(keys.storedKey, c.storedKey)) {
        if (verified.size >= 1024) verified.clear();
        verified.add(key);
        return `User:${user}`;
      }
    }
    return null;
  };
}

/** The listener's TLS, HTTP Basic and authorizer, from the broker's settings. */
function registrySecurity(broker: Broker, config: BrokerConfig): RegistryListenerSecurity {
  const protocol = registryProtocol(config);
  const tls = usesTls(protocol) ? listenerTlsOf(config, SCHEMA_REGISTRY_ENDPOINT) : null;
  return {
    tls: tls === null ? null : {
      options: tls.server,
      principalOf: (socket) => { const p = tlsPeerPrincipal(socket, tls.clientAuth, tls.principalRules); return 'principal' in p ? p.principal : null; },
    },
    basic: usesSasl(protocol) ? basicUsers(broker, config) : null,
    authorize: broker.authorizer === null ? null : (principal, host, operation, type, name) => broker.authorize(principal, host, operation, type, name),
  };
}

/** Starts the registry of `broker` listening at `address`. */
export async function startNodeRegistry(broker: Broker, address: { host: string; port: number }, clock: Clock, logger: Logger, config: BrokerConfig): Promise<NodeRegistry> {
  const log = componentLogger(logger, 'schema-registry');
  const service = new RegistryService({ log: schemasLog(broker, 30_000), clock, logger: log });
  const forwardTls = usesTls(registryProtocol(config)) ? clientTlsFor(config, SCHEMA_REGISTRY_ENDPOINT) ?? null : null;
  const rest = new RegistryRest(service, (nodeId) => broker.endpointUrl(nodeId, SCHEMA_REGISTRY_ENDPOINT), forwardTls);
  const listener = await startRegistryListener(rest, address, log, registrySecurity(broker, config));
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

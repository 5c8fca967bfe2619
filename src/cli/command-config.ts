// `--command-config FILE`: Kafka's client properties, as kafka-topics.sh and friends take them:
// security.protocol, sasl.mechanism, sasl.jaas.config (PlainLoginModule / ScramLoginModule with
// username and password) or librdkafka's sasl.username/sasl.password, and ssl.truststore.*,
// ssl.keystore.*, ssl.endpoint.identification.algorithm (librdkafka's ssl.ca.location also works).
import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { parseProperties } from '../config/index.js';
import { ClientConfigError, clientSecurityFromProperties as fromProperties, type ClientSecurity } from '../client/index.js';
import { UsageError } from './args.js';

export type { ClientSecurity };

/** The TLS and SASL settings that Kafka client properties ask for; a bad one is a usage error (exit code 2). */
export function clientSecurityFromProperties(props: ReadonlyMap<string, string>): ClientSecurity {
  try {
    return fromProperties(props);
  } catch (e) {
    if (e instanceof ClientConfigError) throw new UsageError(e.message);
    throw e;
  }
}

/** What Confluent's clients prefix their schema registry settings with. */
const REGISTRY_PREFIX = 'schema.registry.';

/**
 * TLS towards the schema registry from client properties, as Confluent's clients name it: the
 * Java serializers' schema.registry.ssl.truststore.* and schema.registry.ssl.keystore.* (PEM or
 * PKCS12; .type, .location, .password, and ssl.key.password for an encrypted PEM key), or
 * confluent-kafka-python's ssl.ca.location, ssl.certificate.location and ssl.key.location under
 * the same prefix; schema.registry.ssl.endpoint.identification.algorithm empty skips the host name
 * check. Only prefixed keys count: unprefixed ssl.* are the Kafka connection's. They are read as
 * the Kafka connection's ssl.* are (clientSecurityFromProperties). Null when none is set (Node's
 * own roots then, which NODE_EXTRA_CA_CERTS extends).
 */
export function registryTlsFromProperties(props: ReadonlyMap<string, string>): TlsConnectionOptions | null {
  const own = new Map<string, string>();
  for (const [k, v] of props) if (k.startsWith(`${REGISTRY_PREFIX}ssl.`)) own.set(k.slice(REGISTRY_PREFIX.length), v);
  if (own.size === 0) return null;
  const readPem = (key: string): string => {
    try {
      return readFileSync(own.get(key)!, 'latin1');
    } catch (e) {
      throw new UsageError(`${REGISTRY_PREFIX}${key} ${own.get(key)}: ${(e as Error).message}`);
    }
  };
  // confluent-kafka-python's certificate and key files, as Kafka's inline PEM keystore.
  const certificate = own.has('ssl.certificate.location');
  if (certificate || own.has('ssl.key.location')) {
    if (!certificate || !own.has('ssl.key.location')) throw new UsageError(`${REGISTRY_PREFIX}ssl.certificate.location and ${REGISTRY_PREFIX}ssl.key.location go together`);
    if (own.has('ssl.keystore.location')) throw new UsageError(`${REGISTRY_PREFIX}ssl.keystore.location or ${REGISTRY_PREFIX}ssl.certificate.location with ssl.key.location, not both`);
    own.set('ssl.keystore.type', 'PEM');
    own.set('ssl.keystore.certificate.chain', readPem('ssl.certificate.location'));
    own.set('ssl.keystore.key', readPem('ssl.key.location'));
    own.delete('ssl.certificate.location');
    own.delete('ssl.key.location');
  }
  own.set('security.protocol', 'SSL');
  try {
    return clientSecurityFromProperties(own).tls ?? null;
  } catch (e) {
    throw new UsageError(`the schema registry's TLS (${REGISTRY_PREFIX}ssl.*): ${(e as Error).message}`);
  }
}

/** The client security settings of --command-config, or none. */
export function commandConfig(flags: Record<string, unknown>): ClientSecurity {
  const file = flags['command-config'];
  if (typeof file !== 'string') return {};
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--command-config ${file}: ${(e as Error).message}`);
  }
  return clientSecurityFromProperties(parseProperties(text));
}

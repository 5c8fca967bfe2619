// `--command-config FILE`: Kafka's client properties, as kafka-topics.sh and friends take them:
// security.protocol, sasl.mechanism, sasl.jaas.config (PlainLoginModule / ScramLoginModule with
// username and password) or librdkafka's sasl.username/sasl.password, and ssl.truststore.*,
// ssl.keystore.*, ssl.endpoint.identification.algorithm (librdkafka's ssl.ca.location also works).
import { readFileSync } from 'node:fs';
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

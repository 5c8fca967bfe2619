// Kafka's client properties (security.protocol, sasl.mechanism, sasl.jaas.config with PlainLoginModule
// or ScramLoginModule and username/password, librdkafka's sasl.username/sasl.password, ssl.truststore.*,
// ssl.keystore.*, ssl.endpoint.identification.algorithm; librdkafka's ssl.ca.location too) → the TLS
// and SASL options of a connection. The CLI's --command-config, MirrorMaker 2's per-cluster client
// keys (in `logline mirror` and in a node's mirror) read them here.
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { clientTls, parseJaasConfig } from '../security/index.js';
import type { ClientSasl } from './sasl-login.js';

/** A client property that cannot be used, named in the message. */
export class ClientConfigError extends Error {
  override name = 'ClientConfigError';
}

export interface ClientSecurity {
  tls?: TlsConnectionOptions;
  sasl?: ClientSasl;
}

const PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];
const LIST_KEYS = new Set(['ssl.enabled.protocols', 'ssl.cipher.suites']);
const DEFAULTS: Record<string, string> = {
  'ssl.enabled.protocols': 'TLSv1.2,TLSv1.3', 'ssl.cipher.suites': '', 'ssl.endpoint.identification.algorithm': 'https',
  'ssl.keystore.type': 'PEM', 'ssl.truststore.type': 'PEM',
};

/** The TLS and SASL settings that Kafka client properties ask for. */
export function clientSecurityFromProperties(props: ReadonlyMap<string, string>): ClientSecurity {
  const protocol = (props.get('security.protocol') ?? 'PLAINTEXT').toUpperCase();
  if (!PROTOCOLS.includes(protocol)) throw new ClientConfigError(`security.protocol ${protocol}: expected one of ${PROTOCOLS.join(', ')}`);
  const out: ClientSecurity = {};
  if (protocol === 'SSL' || protocol === 'SASL_SSL') {
    const get = (key: string): unknown => {
      let v = props.get(key);
      if (v === undefined && key === 'ssl.truststore.location') v = props.get('ssl.ca.location');
      v ??= DEFAULTS[key];
      if (v === undefined) return null;
      return LIST_KEYS.has(key) ? v.split(',').map((x) => x.trim()).filter((x) => x !== '') : v;
    };
    out.tls = clientTls(get);
  }
  if (protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL') {
    const mechanism = (props.get('sasl.mechanism') ?? props.get('sasl.mechanisms') ?? 'GSSAPI').toUpperCase();
    let username = props.get('sasl.username');
    let password = props.get('sasl.password');
    const jaas = props.get('sasl.jaas.config');
    if (jaas !== undefined) {
      const entry = parseJaasConfig(jaas);
      username ??= entry.options.get('username');
      password ??= entry.options.get('password');
    }
    if (username === undefined || password === undefined) throw new ClientConfigError(`${protocol} needs a user name and password: sasl.jaas.config with username and password, or sasl.username and sasl.password`);
    out.sasl = { mechanism, username, password };
  }
  return out;
}


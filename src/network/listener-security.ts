// What each listener's security protocol asks of the network: TLS settings for an SSL or SASL_SSL
// listener (listener.name.<l>.ssl.* over ssl.*), SASL settings for a SASL_PLAINTEXT or SASL_SSL
// one (sasl.enabled.mechanisms and the JAAS entries, with Kafka's listener and mechanism
// prefixes), and the TLS client settings the broker's own connections use towards another node's
// listener (inter-broker replication, the controller), as Kafka does: the settings of the listener
// they connect to, with the broker's own keystore and truststore. The controller listener's gate
// and the TLS reload on a dynamic config change are the node's (src/node/controller-listener.ts,
// src/node/tls-reload.ts): they read the metadata.
import { createHmac, randomBytes } from 'node:crypto';
import type { ConnectionOptions } from 'node:tls';
import type { BrokerConfig, BrokerConfigName } from '../config/index.js';
import {
  clientTls, listenerTls, oauthBearerOptions, parseJaasConfig, plainUsers, scramKeysFromSaltedPassword, SASL_MECHANISMS,
  type JaasEntry, type ListenerTls, type SaslInputs, type SaslListenerSettings, type ScramMechanismName, type SslValue,
} from '../security/index.js';
import { limits } from '../util/index.js';
import type { ClientSasl } from '../client/index.js';
import type { ListenerSasl, ListenerSpec } from './socket-server.js';

function settingsOf(config: BrokerConfig, listener: string): SslValue {
  return (key) => config.listenerValue(listener, key as BrokerConfigName);
}

/** The security protocol of listener `listener` (listener.security.protocol.map). */
export function protocolOf(config: BrokerConfig, listener: string): string {
  const protocol = config.securityProtocolMap.get(listener.toUpperCase());
  if (protocol === undefined) throw new Error(`listener ${listener} is not in listener.security.protocol.map`);
  return protocol;
}

export const usesTls = (protocol: string): boolean => protocol === 'SSL' || protocol === 'SASL_SSL';
export const usesSasl = (protocol: string): boolean => protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';

/**
 * The JAAS entry for `mechanism` on `listener`, as Kafka looks it up:
 * listener.name.<l>.<mechanism>.sasl.jaas.config, then listener.name.<l>.sasl.jaas.config, then sasl.jaas.config.
 */
export function jaasEntryOf(config: BrokerConfig, listener: string, mechanism: string): JaasEntry | undefined {
  const prefix = `listener.name.${listener.toLowerCase()}.`;
  const text = [`${prefix}${mechanism.toLowerCase()}.sasl.jaas.config`, `${prefix}sasl.jaas.config`, 'sasl.jaas.config']
    .map((k) => config.values.get(k) as string | null | undefined).find((v) => v !== undefined && v !== null);
  if (text === undefined) return undefined;
  try {
    return parseJaasConfig(text);
  } catch (e) {
    throw new Error(`listener ${listener}: ${mechanism} sasl.jaas.config: ${(e as Error).message}`);
  }
}

/** The SASL settings of listener `name` (mechanisms, PLAIN users, OAUTHBEARER options, re-authentication). */
export function saslSettingsOf(config: BrokerConfig, name: string): SaslListenerSettings {
  const enabled = (config.listenerValue(name, 'sasl.enabled.mechanisms') as string[]).map((m) => m.trim().toUpperCase()).filter((m) => m !== '');
  const unknown = enabled.filter((m) => !(SASL_MECHANISMS as readonly string[]).includes(m));
  if (unknown.length > 0) throw new Error(`listener ${name}: sasl.enabled.mechanisms ${unknown.join(',')} not supported (${SASL_MECHANISMS.join(', ')})`);
  if (enabled.length === 0) throw new Error(`listener ${name}: sasl.enabled.mechanisms is empty`);
  const plain = enabled.includes('PLAIN') ? jaasEntryOf(config, name, 'PLAIN') : undefined;
  if (enabled.includes('PLAIN') && plain === undefined) throw new Error(`listener ${name}: PLAIN is enabled but no sasl.jaas.config lists its users`);
  return {
    mechanisms: Object.freeze(enabled),
    plainUsers: plain === undefined ? new Map() : plainUsers(plain),
    oauthBearer: oauthBearerOptions(enabled.includes('OAUTHBEARER') ? jaasEntryOf(config, name, 'OAUTHBEARER')?.options : undefined),
    reauthMs: Number(config.listenerValue(name, 'connections.max.reauth.ms')),
  };
}

/**
 * What SASL sessions read: SCRAM credentials from the current metadata image, decoy keys for
 * unknown users (derived from a per-process secret, so the same user always gets the same salt,
 * as a real one would), and random nonces.
 */
type ScramLookup = { credential(user: string, mechanism: number): { salt: Buffer; storedKey: Buffer; serverKey: Buffer; iterations: number } | undefined };

export function saslInputs(scramImage: () => ScramLookup): SaslInputs {
  const secret = randomBytes(32);
  return {
    scramCredential: (user, mechanism) => scramImage().credential(user, mechanism),
    scramDecoy: (user: string, mechanism: ScramMechanismName) => {
      const salt = createHmac('sha256', secret).update(`salt\u0000${mechanism}\u0000${user}`).digest();
      const salted = createHmac(mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512', secret).update(`key\u0000${user}`).digest();
      return scramKeysFromSaltedPassword(mechanism, salted, salt, limits.scramIterationsMin);
    },
    nonce: () => randomBytes(24).toString('base64url'),
  };
}

/** The TLS settings of listener `name` (an SSL listener), errors naming the listener. */
export function listenerTlsOf(config: BrokerConfig, name: string): ListenerTls {
  try {
    return listenerTls(settingsOf(config, name));
  } catch (e) {
    throw new Error(`listener ${name}: ${(e as Error).message}`);
  }
}

/** A listener with what its security protocol needs (TLS settings for SSL, SASL settings for SASL_*). */
export function securedListener(spec: ListenerSpec, config: BrokerConfig, inputs?: SaslInputs): ListenerSpec {
  const protocol = protocolOf(config, spec.name);
  const tls = usesTls(protocol) ? { tls: listenerTlsOf(config, spec.name) } : {};
  if (!usesSasl(protocol)) return { ...spec, ...tls };
  const sasl: ListenerSasl = {
    settings: saslSettingsOf(config, spec.name),
    inputs: inputs ?? saslInputs(() => ({ credential: () => undefined })),
    failedAuthenticationDelayMs: config.get('connection.failed.authentication.delay.ms') as number,
  };
  return { ...spec, ...tls, sasl };
}

/** TLS client settings for connecting to another node's listener `name`, or undefined (PLAINTEXT). */
export function clientTlsFor(config: BrokerConfig, name: string): ConnectionOptions | undefined {
  // A name this node does not map (the inter-broker default PLAINTEXT where no listener has that
  // name) connects as before: plaintext, to the first endpoint the peer registered.
  if (!config.securityProtocolMap.has(name.toUpperCase()) || !usesTls(protocolOf(config, name))) return undefined;
  try {
    return clientTls(settingsOf(config, name));
  } catch (e) {
    throw new Error(`listener ${name}: ${(e as Error).message}`);
  }
}

/**
 * The SASL credentials the broker's own connections to listener `name` use (inter-broker
 * replication, transaction markers), or undefined when it is not a SASL listener: the mechanism of
 * sasl.mechanism.inter.broker.protocol, with username and password from that listener's JAAS entry
 * for the mechanism, as Kafka's brokers log in.
 */
export function clientSaslFor(config: BrokerConfig, name: string): ClientSasl | undefined {
  if (!config.securityProtocolMap.has(name.toUpperCase()) || !usesSasl(protocolOf(config, name))) return undefined;
  return brokerLoginOf(config, name, String(config.get('sasl.mechanism.inter.broker.protocol')).toUpperCase(), 'sasl.mechanism.inter.broker.protocol');
}

/** The username and password of listener `name`'s JAAS entry for `mechanism`: how this node logs in to it. */
export function brokerLoginOf(config: BrokerConfig, name: string, mechanism: string, setting: string): ClientSasl {
  const entry = jaasEntryOf(config, name, mechanism);
  const username = entry?.options.get('username');
  const password = entry?.options.get('password');
  if (username === undefined || password === undefined) {
    throw new Error(`listener ${name}: this node's own ${mechanism} connections need username and password in listener.name.${name.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config (${setting}=${mechanism})`);
  }
  return { mechanism, username, password };
}

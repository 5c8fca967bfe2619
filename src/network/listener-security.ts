// What each listener's security protocol asks of the network: TLS settings for an SSL or SASL_SSL
// listener (listener.name.<l>.ssl.* over ssl.*), SASL settings for a SASL_PLAINTEXT or SASL_SSL
// one (sasl.enabled.mechanisms and the JAAS entries, with Kafka's listener and mechanism
// prefixes), and the TLS client settings the broker's own connections use towards another node's
// listener (inter-broker replication, the controller), as Kafka does: the settings of the listener
// they connect to, with the broker's own keystore and truststore. On a controller, the gate of the
// controller listener: each connection's principal (certificate or SASL) and the authorization of
// the quorum's own APIs there (controllerGateFor).
import { createHmac, randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { ConnectionOptions, TLSSocket, TlsOptions } from 'node:tls';
import type { BrokerConfig, BrokerConfigName } from '../config/index.js';
import { onBrokerConfigChange } from '../broker/dynamic-broker-config.js';
import { AclsImage, type MetadataImage } from '../metadata/index.js';
import {
  authorizerFromConfig, clientTls, listenerTls, oauthBearerOptions, tlsPeerPrincipal, parseJaasConfig, plainUsers, scramKeysFromSaltedPassword, SASL_MECHANISMS,
  SaslServerSession, type JaasEntry, type ListenerTls, type SaslInputs, type SaslListenerSettings, type ScramMechanismName, type SslValue,
} from '../security/index.js';
import { limits } from '../util/index.js';
import { SaslLogin, type ClientSasl } from '../client/index.js';
import { ApiKey, decodeRequest, encodeResponseFrame, type RequestHeader } from '../protocol/index.js';
import { CONTROLLER_LISTENER_RULES, aclHost, authorizeRequest, bindAuthz } from '../broker/authorization.js';
import type { Authz, RequestContext } from '../broker/context.js';
import { isQuorumApi, type InboundGate, type PeerLogin } from '../raft/index.js';
import type { ListenerSasl, ListenerSpec, Logger, NetworkServer } from '../broker/network.js';

function settingsOf(config: BrokerConfig, listener: string): SslValue {
  return (key) => config.listenerValue(listener, key as BrokerConfigName);
}

function protocolOf(config: BrokerConfig, listener: string): string {
  const protocol = config.securityProtocolMap.get(listener.toUpperCase());
  if (protocol === undefined) throw new Error(`listener ${listener} is not in listener.security.protocol.map`);
  return protocol;
}

const usesTls = (protocol: string): boolean => protocol === 'SSL' || protocol === 'SASL_SSL';
const usesSasl = (protocol: string): boolean => protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';

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
function brokerLoginOf(config: BrokerConfig, name: string, mechanism: string, setting: string): ClientSasl {
  const entry = jaasEntryOf(config, name, mechanism);
  const username = entry?.options.get('username');
  const password = entry?.options.get('password');
  if (username === undefined || password === undefined) {
    throw new Error(`listener ${name}: this node's own ${mechanism} connections need username and password in listener.name.${name.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config (${setting}=${mechanism})`);
  }
  return { mechanism, username, password };
}

/**
 * SASL on the controller listener (SASL_PLAINTEXT or SASL_SSL), or undefined: the credentials this
 * node logs in with (sasl.mechanism.controller.protocol, username/password of the listener's JAAS
 * entry for it), for the Raft transport's connections to other controllers (`login`) and for
 * requests forwarded to the active controller (`client`). The listener's own side is
 * controllerGateFor's.
 */
export function controllerSaslFor(config: BrokerConfig): { client: ClientSasl; login: () => PeerLogin } | undefined {
  const name = config.controllerListenerNames[0];
  if (name === undefined || !config.securityProtocolMap.has(name.toUpperCase()) || !usesSasl(protocolOf(config, name))) return undefined;
  const client = brokerLoginOf(config, name, String(config.get('sasl.mechanism.controller.protocol')).toUpperCase(), 'sasl.mechanism.controller.protocol');
  return { client, login: () => new SaslLogin(client) };
}

/** The caller's rights on the controller listener, or null when no authorizer is configured (everything is allowed). */
export function controllerAuthz(config: BrokerConfig, acls: () => AclsImage | undefined): ((principal: string, clientAddress: string) => Authz) | null {
  const authorizer = authorizerFromConfig(config.get('authorizer.class.name') as string | null, config.get('super.users') as string | null,
    config.get('allow.everyone.if.no.acl.found') === true, AclsImage.EMPTY);
  if (authorizer === null) return null;
  return (principal, clientAddress) => bindAuthz(authorizer.indexFor(acls() ?? AclsImage.EMPTY), principal, clientAddress);
}

/**
 * What each connection to this controller's listener goes through (Kafka's ControllerApis with the
 * listener's authentication), or undefined where there is nothing to check (a PLAINTEXT listener
 * without an authorizer: everyone is User:ANONYMOUS and allowed). The connection's principal is its
 * client certificate's DN mapped by ssl.principal.mapping.rules (SSL), the SASL identity once it
 * has logged in (SASL_*), else User:ANONYMOUS. The quorum's own APIs, which the Raft transport
 * answers itself, are authorized here (CONTROLLER_LISTENER_RULES); the controller's other APIs by
 * the controller router, which is given the principal with each request. SCRAM cannot serve here
 * before the metadata log is readable (the credentials live in it), so controllers use PLAIN among
 * themselves, as with Kafka.
 */
export function controllerGateFor(config: BrokerConfig, image: () => MetadataImage | undefined): ((socket: Socket) => InboundGate | { refused: string }) | undefined {
  const name = config.controllerListenerNames[0];
  if (name === undefined || !config.processRoles.includes('controller') || !config.securityProtocolMap.has(name.toUpperCase())) return undefined;
  const protocol = protocolOf(config, name);
  const tls = usesTls(protocol) ? listenerTlsOf(config, name) : undefined;
  const sasl = usesSasl(protocol) ? { settings: saslSettingsOf(config, name), inputs: saslInputs(() => image()?.scram ?? { credential: () => undefined }) } : undefined;
  const authz = controllerAuthz(config, () => image()?.acls);
  if (tls === undefined && sasl === undefined && authz === null) return undefined;
  return (socket) => {
    let certificate = 'User:ANONYMOUS';
    if (tls !== undefined) {
      const peer = tlsPeerPrincipal(socket as TLSSocket, tls.clientAuth, tls.principalRules);
      if ('refused' in peer) return peer;
      certificate = peer.principal;
    }
    const session = sasl === undefined ? undefined : new SaslServerSession(sasl.settings, sasl.inputs);
    return controllerGate(() => session?.authenticated === true ? session.principal : certificate, aclHost(socket.remoteAddress ?? ''), session, authz);
  };
}

/**
 * Requests on the controller listener pass once the connection has logged in (SASL; the exchange
 * is answered here) and, for the quorum's own APIs, once the principal may send them.
 */
function controllerGate(principal: () => string, host: string, session: SaslServerSession | undefined,
  authz: ((principal: string, clientAddress: string) => Authz) | null): InboundGate {
  const refusal = (header: RequestHeader): InboundAnswer | undefined => {
    const apiKey = header.requestApiKey;
    // The Raft transport answers these itself; the controller router authorizes the rest.
    if (authz === null || !isQuorumApi(apiKey)) return undefined;
    const ctx = { header, apiVersion: header.requestApiVersion } as RequestContext<unknown>;
    const rule = authorizeRequest(apiKey, {}, authz(principal(), host), ctx, CONTROLLER_LISTENER_RULES);
    if (rule === undefined || rule === 'unlisted' || !('respond' in rule)) return undefined;
    return { kind: 'answer', chunks: encodeResponseFrame(apiKey, header.requestApiVersion, header.correlationId, rule.respond), thenClose: false };
  };
  return {
    get principal() { return principal(); },
    admit(header, frame) {
      const apiKey = header.requestApiKey;
      const version = header.requestApiVersion;
      if (session === undefined) return refusal(header) ?? { kind: 'pass' };
      if (apiKey !== ApiKey.SaslHandshake && apiKey !== ApiKey.SaslAuthenticate) {
        if (!session.allows(apiKey, Date.now())) return { kind: 'close', reason: `API ${apiKey} before SASL authentication on the controller listener` };
        return refusal(header) ?? { kind: 'pass' };
      }
      let body: Record<string, any>;
      try {
        body = decodeRequest(frame).body as Record<string, any>;
      } catch (e) {
        return { kind: 'close', reason: `malformed SASL request: ${(e as Error).message}` };
      }
      // Raw tokens after a v0 handshake are for clients from before KIP-152; controllers are not such clients.
      if (apiKey === ApiKey.SaslHandshake && version === 0) return { kind: 'close', reason: 'SaslHandshake v0 on the controller listener' };
      const answer = apiKey === ApiKey.SaslHandshake ? session.handshake(String(body['mechanism']), version) : session.authenticate(body['authBytes'] as Buffer, Date.now());
      return { kind: 'answer', chunks: encodeResponseFrame(apiKey, version, header.correlationId, answer), thenClose: session.failed };
    },
  };
}

type InboundAnswer = ReturnType<InboundGate['admit']>;

/** The controller listener's TLS (serving it when this node is a controller, reaching it always), or undefined. */
export function controllerTlsFor(config: BrokerConfig): { server?: TlsOptions; client: ConnectionOptions } | undefined {
  const name = config.controllerListenerNames[0];
  if (name === undefined) return undefined;
  const client = clientTlsFor(config, name);
  if (client === undefined) return undefined;
  const serves = config.processRoles.includes('controller');
  return { client, ...(serves ? { server: listenerTlsOf(config, name).server } : {}) };
}

/**
 * The ssl.* values of a listener that a reload compares (the keystore and truststore it would load),
 * with the store files' size and modification time: as in Kafka, setting a store's location to the
 * path it already has reloads it when the file there was replaced.
 */
function tlsFingerprint(config: BrokerConfig, name: string): string {
  const values = ['ssl.keystore.type', 'ssl.keystore.location', 'ssl.keystore.password', 'ssl.key.password', 'ssl.keystore.certificate.chain', 'ssl.keystore.key',
    'ssl.truststore.type', 'ssl.truststore.location', 'ssl.truststore.password', 'ssl.truststore.certificates', 'ssl.enabled.protocols', 'ssl.cipher.suites']
    .map((k) => config.listenerValue(name, k as BrokerConfigName));
  const files = ['ssl.keystore.location', 'ssl.truststore.location'].map((k) => {
    const path = config.listenerValue(name, k as BrokerConfigName);
    if (typeof path !== 'string' || path === '') return null;
    try {
      const st = statSync(path);
      return [st.size, st.mtimeMs];
    } catch {
      return 'missing';
    }
  });
  return JSON.stringify([values, files]);
}

/**
 * Kafka's dynamic keystore update: when this broker's dynamic configs change a TLS listener's
 * keystore or truststore (listener.name.<l>.ssl.keystore.location, ...), the listener loads the
 * new files; new connections get the new certificate, open ones keep theirs. A store that fails to
 * load is logged and the old one stays.
 */
export function reloadTlsOnConfigChange(
  metadata: { onDelta(listener: (delta: unknown, image: MetadataImage) => void): void },
  nodeId: number, staticConfig: BrokerConfig, network: NetworkServer<unknown>, log: Logger,
): void {
  const tlsListeners = network.bound.filter((l) => l.tls !== undefined).map((l) => l.name);
  if (tlsListeners.length === 0) return;
  const seen = new Map(tlsListeners.map((n) => [n, tlsFingerprint(staticConfig, n)]));
  onBrokerConfigChange(metadata, nodeId, staticConfig, log, 'TLS reload', (config) => {
    for (const name of tlsListeners) {
      const fingerprint = tlsFingerprint(config, name);
      if (fingerprint === seen.get(name)) continue;
      try {
        network.reloadTls(name, listenerTlsOf(config, name));
        seen.set(name, fingerprint);
        log.info(`listener ${name}: TLS keystore and truststore reloaded`);
      } catch (e) {
        log.error(`TLS reload of listener ${name} failed, keeping the current keystore: ${(e as Error).message}`);
      }
    }
  });
}

// The controller listener as this node serves and reaches it (Kafka's ControllerApis with its
// listener's authentication): the gate each connection to it goes through on a controller (its
// principal from a certificate or SASL, and the authorization of the quorum's own APIs there), the
// caller's rights for the controller's other APIs, and the TLS and SASL this node's own
// connections to the controllers use. Built from the listener settings of src/network and the
// authorization table of src/broker; read by the metadata log's Raft transport and the controller
// router.
import type { Socket } from 'node:net';
import type { ConnectionOptions, TLSSocket, TlsOptions } from 'node:tls';
import type { BrokerConfig } from '../config/index.js';
import { AclsImage, type MetadataImage } from '../metadata/index.js';
import { authorizerFromConfig, tlsPeerPrincipal, SaslServerSession } from '../security/index.js';
import { SaslLogin, type ClientSasl } from '../client/index.js';
import { ApiKey, decodeRequest, encodeResponseFrame, type RequestHeader } from '../protocol/index.js';
import { isQuorumApi, type InboundGate, type PeerLogin } from '../raft/index.js';
import { brokerLoginOf, clientTlsFor, listenerTlsOf, protocolOf, saslInputs, saslSettingsOf, usesSasl, usesTls } from '../network/index.js';
import { CONTROLLER_LISTENER_RULES, aclHost, authorizeRequest, bindAuthz, type Authz, type RequestContext } from '../broker/index.js';

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

// What a handler sees of the world: the request header, who is asking, and the broker's services.
import type { ApiTypes, RequestHeader } from '../protocol/index.js';
import type { SaslServerSession } from '../security/index.js';

/**
 * The caller's rights, bound to its principal and host (the authorizer's AclCaller). Here rather
 * than in authorization.ts, whose rules read the context: the context is what they both build on.
 */
export interface Authz {
  allowed(operation: number, resourceType: number, resourceName: string): boolean;
  /** Some resource of the type allows the operation (Kafka's authorizeByResourceType). */
  allowedAny(operation: number, resourceType: number): boolean;
}

export interface RequestContext<S = unknown> {
  readonly header: RequestHeader;
  readonly apiVersion: number;
  readonly connectionId: string;
  readonly clientAddress: string;
  readonly listenerName: string;
  readonly securityProtocol: string;
  /** `User:<name>`: the connection's current principal (TLS certificate or SASL), else User:ANONYMOUS. */
  readonly principal: string;
  /** The connection's SASL session on a SASL listener (SaslHandshake and SaslAuthenticate act on it). */
  readonly sasl?: SaslServerSession | undefined;
  readonly nowMs: number;
  readonly services: S;
  /**
   * Memory for bytes that go out in this request's response (fetched record batches): reused for
   * another response once this one has been written to the socket, so nothing may keep it past
   * the response. Absent where there is no socket (handler unit tests): use fresh buffers then.
   */
  readonly responseBytes?: (bytes: number) => Buffer;
  /** The caller's rights when an authorizer is on (set by the router); absent when everything is allowed. */
  readonly authz?: Authz;
  /**
   * Set by an authorization rule that refuses topics in the response (Fetch: a session's
   * partitions are not all in the request): topics it will refuse, which the handler does not read.
   */
  readonly readableTopic?: (topic: string) => boolean;
}

/** The decoded request and the response body of an API, by key (`RequestOf<3>` is MetadataRequest). */
export type RequestOf<K extends keyof ApiTypes> = ApiTypes[K]['request'];
export type ResponseOf<K extends keyof ApiTypes> = ApiTypes[K]['response'];

/** A handler's answer: a response body, or `null` for requests that get none (Produce acks=0). */
export type HandlerResult<K extends keyof ApiTypes = keyof ApiTypes> = ResponseOf<K> | null;

export interface HandlerSpec<S = any, K extends keyof ApiTypes = keyof ApiTypes> {
  readonly apiKey: K;
  /** Versions this handler implements; ApiVersions advertises exactly these. */
  readonly minVersion: number;
  readonly maxVersion: number;
  handle(request: RequestOf<K>, ctx: RequestContext<S>): HandlerResult<K> | Promise<HandlerResult<K>>;
  /**
   * Once `handle` has resolved, nothing refers to the request's bytes any more (produce: the
   * records are in the log), so the network layer may reuse the frame's buffer.
   */
  readonly requestBytesDoneOnResolve?: boolean;
}

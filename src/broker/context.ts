// What a handler sees of the world: the request header, who is asking, and the broker's services.
import type { ApiTypes } from '../protocol/index.js';
import type { NetworkRequestContext } from '../network/index.js';

/**
 * The caller's rights, bound to its principal and host (the authorizer's AclCaller). Here rather
 * than in authorization.ts, whose rules read the context: the context is what they both build on.
 */
export interface Authz {
  allowed(operation: number, resourceType: number, resourceName: string): boolean;
  /** Some resource of the type allows the operation (Kafka's authorizeByResourceType). */
  allowedAny(operation: number, resourceType: number): boolean;
}

/**
 * The network's part (header, connection, principal, SASL session, time, services, response
 * memory; see NetworkRequestContext) and what the router adds.
 */
export interface RequestContext<S = unknown> extends NetworkRequestContext<S> {
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
  /**
   * Handled only once every earlier request on its connection is answered, as Kafka (which reads
   * a connection's next request only then) handles every request: for answers a client acts on as
   * the broker's latest knowledge (Metadata), which must not be computed before the requests ahead
   * of them finish and sent after.
   */
  readonly answersInTurn?: boolean;
  /** ApiVersions lists the API only while this feature is finalized (share.version for KIP-932's APIs, as Kafka gates them). */
  readonly feature?: string;
}

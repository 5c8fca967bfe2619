// The request router: one registered handler per API key, with its version range. ApiVersions is
// computed from these registrations, so it can never advertise what no handler implements.
import { apiInfo, decodeMessage, Reader, ProtocolError, ErrorCode, ApiKey, type RequestHeader } from '../protocol/index.js';
import { assert } from '../util/index.js';
import type { RequestChannel, RouteOutcome } from '../network/index.js';
import type { Authz, HandlerSpec, RequestContext } from './context.js';
import { AUTHORIZATION_RULES, authorizeRequest } from './authorization.js';


/** Observe, delay or answer requests of one API key (fault tests with real clients). */
export type Interceptor = (header: RequestHeader, request: object) => Promise<object | null | undefined> | object | null | undefined;
/** Sees each answered request of one API key with its response (tests that check what clients were sent). */
export type Observer = (header: RequestHeader, request: object, response: object) => void;

export class Router<S = unknown> implements RequestChannel<S> {
  private readonly handlers = new Map<number, HandlerSpec<S>>();
  private readonly interceptors = new Map<number, Interceptor>();
  private readonly observers = new Map<number, Observer>();
  /**
   * The caller's rights when an authorizer is on (null: everything is allowed); every request then
   * passes the table in authorization.ts before its handler runs.
   */
  authorizer: ((ctx: RequestContext<any>) => Authz | null) | null = null;
  /** The table the authorizer applies (the controller listener's differs in its own APIs). */
  authorizationRules = AUTHORIZATION_RULES;

  register(spec: HandlerSpec<S>): this {
    const api = apiInfo(spec.apiKey);
    assert(api !== undefined, `no schema for API ${spec.apiKey}`);
    assert(spec.minVersion >= api.validVersions[0] && spec.maxVersion <= api.validVersions[1],
      `${api.name}: handler versions ${spec.minVersion}-${spec.maxVersion} outside the schema's`);
    assert(!this.handlers.has(spec.apiKey), `${api.name}: registered twice`);
    this.handlers.set(spec.apiKey, spec);
    return this;
  }

  /** Installs (or with `null` removes) an interceptor; returning undefined falls through to the handler. */
  intercept(apiKey: number, interceptor: Interceptor | null): void {
    if (interceptor) this.interceptors.set(apiKey, interceptor);
    else this.interceptors.delete(apiKey);
  }

  /** Installs (or with `null` removes) an observer of the handler's responses to one API key. */
  observe(apiKey: number, observer: Observer | null): void {
    if (observer) this.observers.set(apiKey, observer);
    else this.observers.delete(apiKey);
  }

  /** What ApiVersions lists: every handler, less those whose feature is not finalized in `features` (when given). */
  supportedVersions(features?: ReadonlyMap<string, number>): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...this.handlers.values()]
      .filter((h) => features === undefined || h.feature === undefined || (features.get(h.feature) ?? 0) > 0)
      .map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }))
      .sort((a, b) => a.apiKey - b.apiKey);
  }

  /** Whether requests of `apiKey` wait for the earlier ones on their connection (HandlerSpec.answersInTurn). */
  inTurn(apiKey: number): boolean { return this.handlers.get(apiKey)?.answersInTurn === true; }

  supports(apiKey: number, version: number): boolean {
    const h = this.handlers.get(apiKey);
    return h !== undefined && version >= h.minVersion && version <= h.maxVersion;
  }

  /** Decodes the body and runs the handler. Malformed bodies close the connection, as Kafka does. */
  async route(header: RequestHeader, frame: Buffer, bodyOffset: number, ctx: RequestContext<S>): Promise<RouteOutcome> {
    const { requestApiKey: apiKey, requestApiVersion: version } = header;
    const handler = this.handlers.get(apiKey);
    if (!handler || version < handler.minVersion || version > handler.maxVersion) {
      if (apiKey === 18) {
        // A client newer than us: answer in v0 with the versions we have, so it can retry lower.
        return { kind: 'response', apiKey, version: 0, body: { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: this.supportedVersions(), throttleTimeMs: 0 } };
      }
      return { kind: 'close', reason: `unsupported API ${apiKey} v${version}` };
    }
    let request: object;
    try {
      request = decodeBody(apiKey, version, frame, bodyOffset);
    } catch (err) {
      if (err instanceof ProtocolError) return { kind: 'close', reason: `malformed ${apiInfo(apiKey)!.name} v${version}: ${err.message}` };
      throw err;
    }
    const interceptor = this.interceptors.get(apiKey);
    if (interceptor) {
      const answer = await interceptor(header, request);
      if (answer !== undefined) return answer === null ? { kind: 'none' } : { kind: 'response', apiKey, version, body: answer };
    }
    const az = this.authorizer?.(ctx) ?? null;
    let after: ((response: any) => any) | undefined;
    if (az !== null) {
      const rule = authorizeRequest(apiKey, request, az, ctx, this.authorizationRules);
      if (rule === 'unlisted') return { kind: 'close', reason: `${apiInfo(apiKey)!.name}: refused, and its response has no error code to say so` };
      let readableTopic: ((topic: string) => boolean) | undefined;
      if (rule !== undefined) {
        if ('respond' in rule) return rule.respond === null ? { kind: 'none' } : { kind: 'response', apiKey, version, body: rule.respond };
        request = rule.request;
        after = rule.after;
        readableTopic = rule.readableTopic;
      }
      ctx = readableTopic === undefined ? { ...ctx, authz: az } : { ...ctx, authz: az, readableTopic };
    }
    let body = await handler.handle(request, ctx);
    if (after !== undefined) body = after(body);
    if (body !== null) this.observers.get(apiKey)?.(header, request, body);
    // An interceptor may have kept the request, so only an unintercepted one gives its frame back.
    const frameDone = handler.requestBytesDoneOnResolve === true && interceptor === undefined;
    return body === null ? { kind: 'none', frameDone, request } : { kind: 'response', apiKey, version, body, frameDone, request };
  }
}

function decodeBody(apiKey: number, version: number, frame: Buffer, bodyOffset: number): object {
  const name = apiInfo(apiKey)!.request.name;
  const r = new Reader(frame, bodyOffset);
  const request = decodeMessage(name, version, r);
  if (r.remaining === 0) return request;
  if (isLibrdkafkaAllTopicsMetadata(apiKey, version, frame, bodyOffset, r.remaining)) {
    const shifted = new Reader(frame, bodyOffset + LIBRDKAFKA_NULL_TOPICS_PAD_BYTES);
    const fixed = decodeMessage(name, version, shifted);
    if (shifted.remaining === 0) return fixed;
  }
  throw new ProtocolError(`${r.remaining} trailing bytes`);
}

/**
 * librdkafka (through at least 2.15, issue confluentinc/librdkafka#5049) asks for all topics in
 * Metadata v9+ with a 4-byte zero where the compact array length goes, instead of the 1-byte varint
 * 0 (null). Kafka ignores bytes after the body, so there it reads allowAutoTopicCreation and
 * includeTopicAuthorizedOperations from the padding; we skip the three pad bytes and read what the
 * client meant. Only that exact shape is accepted: four zero bytes, then exactly three left over.
 */
const LIBRDKAFKA_NULL_TOPICS_PAD_BYTES = 3;

function isLibrdkafkaAllTopicsMetadata(apiKey: number, version: number, frame: Buffer, bodyOffset: number, remaining: number): boolean {
  return apiKey === ApiKey.Metadata && version >= 9 && remaining === LIBRDKAFKA_NULL_TOPICS_PAD_BYTES
    && frame.length - bodyOffset >= 4 && frame.readUInt32BE(bodyOffset) === 0;
}

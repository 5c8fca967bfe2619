// Requests and responses as whole frames: API lookup by key, header versions, and the
// size-prefixed frames that cross a socket.
import { messageSchemas } from './generated/messages.js';
import type { ApiTypes } from './generated/types.js';
import { ProtocolError } from './errors.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';
import { decodeMessage, encodeMessage } from './codec.js';
import { inRange, type MessageSchema, type VersionRange } from './schema.js';

export interface ApiInfo {
  readonly apiKey: number;
  /** e.g. "Produce" */
  readonly name: string;
  readonly request: MessageSchema;
  readonly response: MessageSchema;
  readonly validVersions: VersionRange;
  readonly flexibleVersions: VersionRange | null;
}

const apisByKey = new Map<number, ApiInfo>();
for (const schema of Object.values(messageSchemas)) {
  if (schema.kind !== 'request' || schema.apiKey === undefined) continue;
  const name = schema.name.replace(/Request$/, '');
  const response = messageSchemas[`${name}Response`];
  if (!response || !schema.validVersions) throw new ProtocolError(`schema table: ${name} has no response`);
  apisByKey.set(schema.apiKey, {
    apiKey: schema.apiKey, name, request: schema, response,
    validVersions: schema.validVersions, flexibleVersions: schema.flexibleVersions,
  });
}

export function apiInfo(apiKey: number): ApiInfo | undefined { return apisByKey.get(apiKey); }
export function allApis(): ApiInfo[] { return [...apisByKey.values()].sort((a, b) => a.apiKey - b.apiKey); }

export function isFlexible(apiKey: number, version: number): boolean {
  const api = apisByKey.get(apiKey);
  return api !== undefined && inRange(api.flexibleVersions, version);
}

const API_VERSIONS = 18;
const CONTROLLED_SHUTDOWN = 7;

export function requestHeaderVersion(apiKey: number, version: number): number {
  // ControlledShutdown v0 predates client ids in the header.
  if (apiKey === CONTROLLED_SHUTDOWN && version === 0) return 0;
  return isFlexible(apiKey, version) ? 2 : 1;
}

export function responseHeaderVersion(apiKey: number, version: number): number {
  // ApiVersions answers with header v0 always, so a client that sent a version we do not know
  // can still parse the error and the list of versions we do support.
  if (apiKey === API_VERSIONS) return 0;
  return isFlexible(apiKey, version) ? 1 : 0;
}

export interface RequestHeader {
  requestApiKey: number;
  requestApiVersion: number;
  correlationId: number;
  clientId: string | null;
}

export interface DecodedRequestHeader {
  header: RequestHeader;
  /** Where the body starts in the frame. */
  bodyOffset: number;
  /** The API is known and the version is inside its schema's valid range. */
  known: boolean;
}

/**
 * Reads a request header from a frame (without its size prefix). An unknown API key or version
 * still yields the fixed part of the header (key, version, correlation id, client id) so the
 * caller can answer; only a frame too short for that throws.
 */
export function decodeRequestHeader(frame: Buffer): DecodedRequestHeader {
  const r = new Reader(frame);
  const requestApiKey = r.int16();
  const requestApiVersion = r.int16();
  const correlationId = r.int32();
  const api = apisByKey.get(requestApiKey);
  const known = api !== undefined && inRange(api.validVersions, requestApiVersion);
  const headerVersion = known ? requestHeaderVersion(requestApiKey, requestApiVersion) : 1;
  let clientId: string | null = null;
  if (headerVersion >= 1) {
    const n = r.int16();
    if (n < -1) throw new ProtocolError(`invalid client id length ${n}`);
    clientId = n === -1 ? null : r.utf8(n);
  }
  if (headerVersion >= 2) skipTaggedFields(r);
  return { header: { requestApiKey, requestApiVersion, correlationId, clientId }, bodyOffset: r.pos, known };
}

function skipTaggedFields(r: Reader): void {
  const count = r.unsignedVarint();
  if (count > r.remaining) throw new ProtocolError('tagged field count exceeds frame');
  for (let i = 0; i < count; i++) {
    r.unsignedVarint();
    r.slice(r.unsignedVarint());
  }
}

export type RequestOf<K extends keyof ApiTypes> = ApiTypes[K]['request'];
export type ResponseOf<K extends keyof ApiTypes> = ApiTypes[K]['response'];

export interface DecodedRequest {
  header: RequestHeader;
  api: ApiInfo;
  body: Record<string, unknown>;
}

/** Decodes a whole request frame; trailing bytes after the body are an error. */
export function decodeRequest(frame: Buffer): DecodedRequest {
  const { header, bodyOffset, known } = decodeRequestHeader(frame);
  if (!known) throw new ProtocolError(`unsupported api ${header.requestApiKey} v${header.requestApiVersion}`);
  const api = apisByKey.get(header.requestApiKey)!;
  const r = new Reader(frame, bodyOffset);
  const body = decodeMessage(api.request.name, header.requestApiVersion, r);
  if (r.remaining !== 0) throw new ProtocolError(`${api.name} v${header.requestApiVersion}: ${r.remaining} trailing bytes`);
  return { header, api, body };
}

function requireApi(apiKey: number, version: number): ApiInfo {
  const api = apisByKey.get(apiKey);
  if (!api || !inRange(api.validVersions, version)) throw new ProtocolError(`unsupported api ${apiKey} v${version}`);
  return api;
}

function finishFrame(w: Writer, size: Buffer): Buffer[] {
  size.writeInt32BE(w.length - 4, 0);
  return w.chunksOut();
}

/** A request as size-prefixed chunks ready for a socket (large record bytes are not copied). */
export function encodeRequestFrame(apiKey: number, version: number, correlationId: number,
  clientId: string | null, body: object): Buffer[] {
  const api = requireApi(apiKey, version);
  const w = new Writer();
  const size = w.reserve(4);
  const hv = requestHeaderVersion(apiKey, version);
  w.int16(apiKey);
  w.int16(version);
  w.int32(correlationId);
  if (hv >= 1) {
    if (clientId === null) w.int16(-1);
    else { w.int16(Buffer.byteLength(clientId)); w.utf8(clientId); }
  }
  if (hv >= 2) w.unsignedVarint(0);
  encodeMessage(api.request.name, version, body, w);
  return finishFrame(w, size);
}

/** A response as size-prefixed chunks. */
export function encodeResponseFrame(apiKey: number, version: number, correlationId: number, body: object): Buffer[] {
  const api = requireApi(apiKey, version);
  const w = new Writer();
  const size = w.reserve(4);
  w.int32(correlationId);
  if (responseHeaderVersion(apiKey, version) >= 1) w.unsignedVarint(0);
  encodeMessage(api.response.name, version, body, w);
  return finishFrame(w, size);
}

/** Decodes a response frame (without size prefix) for a request we sent with (apiKey, version). */
export function decodeResponse(apiKey: number, version: number, frame: Buffer): { correlationId: number; body: Record<string, unknown> } {
  const api = requireApi(apiKey, version);
  const r = new Reader(frame);
  const correlationId = r.int32();
  if (responseHeaderVersion(apiKey, version) >= 1) skipTaggedFields(r);
  const body = decodeMessage(api.response.name, version, r);
  if (r.remaining !== 0) throw new ProtocolError(`${api.name} response v${version}: ${r.remaining} trailing bytes`);
  return { correlationId, body };
}

/** Correlation id of a response frame, to route it before decoding. */
export function peekCorrelationId(frame: Buffer): number {
  if (frame.length < 4) throw new ProtocolError('response frame shorter than its header');
  return frame.readInt32BE(0);
}

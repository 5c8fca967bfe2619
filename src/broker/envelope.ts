// Envelope (KIP-590) as both ends use it: the broker wraps a client's request for the active
// controller with who sent it, and the controller unwraps it and answers inside.
//
// RequestData is the inner request's header and body exactly as on the wire, without the size
// prefix; ResponseData likewise. RequestPrincipal is Kafka's own serialization of a principal
// (DefaultKafkaPrincipalBuilder): an int16 version (0) and then DefaultPrincipalData v0 (type,
// name, token-authenticated flag), so a `User:alice` reads the same on a Kafka controller.
// ClientHostAddress is the client's IP address as 4 (IPv4) or 16 (IPv6) raw bytes.
import { isIPv4, isIPv6 } from 'node:net';
import type { RequestContext } from './context.js';
import { ApiKey, Reader, Writer, decodeMessage, encodeMessage, encodeRequestFrame } from '../protocol/index.js';

const PRINCIPAL_DATA_VERSION = 0;

/** The caller a broker forwards a change for: the client's principal, client id and address. */
export interface ForwardedFor {
  readonly principal: string;
  readonly clientId: string | null;
  readonly clientAddress: string;
  /** The version the client sent its request at (KIP-599: it decides whether the controller refuses or throttles). */
  readonly apiVersion?: number;
  /**
   * Set by the channel to the throttle_time_ms of the controller's answer: controller_mutation_rate
   * is charged there, once for the whole cluster, and the client must see it.
   */
  throttleTimeMs?: number;
}

/** The client requests a broker forwards in an Envelope (the changes the controller makes for clients). */
export const FORWARDED_APIS: ReadonlySet<number> = new Set([
  ApiKey.CreateTopics, ApiKey.DeleteTopics, ApiKey.CreatePartitions, ApiKey.ElectLeaders, ApiKey.AlterPartitionReassignments,
  ApiKey.ListPartitionReassignments, ApiKey.AlterConfigs, ApiKey.IncrementalAlterConfigs, ApiKey.AlterClientQuotas,
  ApiKey.CreateAcls, ApiKey.DeleteAcls, ApiKey.AlterUserScramCredentials,
]);

/** `User:alice` in Kafka's serialization of a KafkaPrincipal. */
export function encodePrincipal(principal: string): Buffer {
  const i = principal.indexOf(':');
  const w = new Writer();
  w.int16(PRINCIPAL_DATA_VERSION);
  encodeMessage('DefaultPrincipalData', PRINCIPAL_DATA_VERSION, { type: i < 0 ? 'User' : principal.slice(0, i), name: i < 0 ? principal : principal.slice(i + 1), tokenAuthenticated: false }, w);
  return w.toBuffer();
}

/** The principal an Envelope names; throws (a ProtocolError) on bytes that are not one. */
export function decodePrincipal(bytes: Buffer): string {
  const r = new Reader(bytes);
  const version = r.int16();
  if (version !== PRINCIPAL_DATA_VERSION) throw new Error(`principal data v${version} is not understood`);
  const data = decodeMessage<{ type: string; name: string }>('DefaultPrincipalData', version, r);
  if (r.remaining !== 0) throw new Error('trailing bytes after the principal');
  return `${data.type}:${data.name}`;
}

/** The client's address as the Envelope carries it (IPv4-mapped IPv6 as its IPv4 address). */
export function encodeHostAddress(address: string): Buffer {
  const a = address.startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
  if (isIPv4(a)) return Buffer.from(a.split('.').map(Number));
  if (isIPv6(a)) return ipv6Bytes(a);
  return Buffer.alloc(0);
}

/** The client's address from an Envelope, or null when the bytes are not one. */
export function decodeHostAddress(bytes: Buffer): string | null {
  if (bytes.length === 4) return [...bytes].join('.');
  if (bytes.length === 16) {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
    // The compressed form (RFC 5952), as sockets report addresses and ACL hosts are written.
    return new URL(`http://[${groups.join(':')}]`).hostname.slice(1, -1);
  }
  return null;
}

function ipv6Bytes(a: string): Buffer {
  const [head, tail] = a.includes('::') ? a.split('::') as [string, string] : [a, null];
  const parts = (s: string) => s === '' ? [] : s.split(':');
  const h = parts(head);
  const t = tail === null ? [] : parts(tail);
  const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16) & 0xffff, i * 2));
  return out;
}

/** An Envelope's RequestData: the inner request frame without its size prefix. */
export function innerRequestData(apiKey: number, version: number, clientId: string | null, body: object): Buffer {
  return Buffer.concat(encodeRequestFrame(apiKey, version, 0, clientId, body)).subarray(4);
}

/** An EnvelopeResponse's ResponseData: the inner response frame without its size prefix. */
export function innerResponseData(chunks: readonly Buffer[]): Buffer {
  return Buffer.concat(chunks).subarray(4);
}

/** The client of a request, as a broker forwards its change. */
export function forwardedFor(ctx: RequestContext<unknown>): ForwardedFor {
  return { principal: ctx.principal, clientId: ctx.header.clientId, clientAddress: ctx.clientAddress, apiVersion: ctx.apiVersion };
}

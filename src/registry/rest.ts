// The REST door: Confluent Schema Registry's paths, query parameters, bodies, status codes and
// error codes, over the registry service. A route either reads this node's replayed state, or
// names a write (a pure operation); writes run here when this node is the writer, and are
// forwarded to the writer otherwise (the answer waits until this node has replayed the write, so a
// client reading from the node it wrote through sees its write).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ConnectionOptions } from 'node:tls';
import { RegistryCaller, type Access } from './access.js';
import { registryErrors as E, RegistryError } from './errors.js';
import { SCHEMA_TYPES, type ProtobufSchema, type SchemaReference, type SchemaType } from './formats/index.js';
import { deleteConfig, deleteMode, deleteSubject, deleteVersion, register, setConfig, setMode, unchangedRegister } from './operations.js';
import type { RegistryService } from './service.js';
import type { OperationResult, RegistryState, SchemaRequest, VersionView } from './state.js';

export const REGISTRY_CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';
/** Set on a request one node forwards to the writer, so that a writer that just lost its place does not forward it again. */
export const FORWARDED_HEADER = 'x-logline-forwarded';
/** The writer's answer to a forwarded write: the offset after its records, which the forwarding node waits to replay. */
export const OFFSET_HEADER = 'x-logline-schemas-offset';
/** With OFFSET_HEADER: the leader epoch of the writer's batch just below that offset (the forwarding node checks its replica's batch against it). */
export const EPOCH_HEADER = 'x-logline-schemas-epoch';

export interface RestRequest {
  method: string;
  /** The path without the query, still percent-encoded. */
  path: string;
  query: URLSearchParams;
  /** The body as received (null when none). */
  body: Buffer | null;
  headers: Record<string, string | string[] | undefined>;
  /** Who is asking (authenticated by the listener); absent: anyone may do anything. */
  caller?: RegistryCaller;
}
/** `raw`: the body is text sent as is (a schema from a `/schema` path, as Confluent sends it, or JSON serialized already). */
export interface RestResponse { status: number; body: unknown; headers?: Record<string, string>; raw?: boolean }

/** Where to forward a write: the writer's registry URL (http://host:port), or null when unknown. */
export type WriterUrl = (nodeId: number) => string | null;

type Params = Record<string, string>;
interface Ctx { params: Params; query: URLSearchParams; body: () => unknown; state: RegistryState; caller: RegistryCaller }
/** `json`: the read's answer already serialized (sent as is, instead of `read`). */
/**
 * `unchangedHere`: the write's answer when, on this node's copy, it would change nothing (null
 * otherwise, refusals included: a copy that is behind may refuse what the writer accepts). Given
 * here, as a read is (the register of a schema the subject has: what every producer does at
 * start); otherwise the write goes to the writer, which runs it on the whole log.
 */
type Answer = { read: unknown; status?: number; raw?: boolean; json?: string } | { write: (s: RegistryState) => OperationResult<unknown>; unchangedHere?: (s: RegistryState) => unknown };
/**
 * What a route needs the caller to be allowed (README.md, "Who may do what"): `open` nothing;
 * the subject of the path, or the global config, read or written; `id`: reading some subject that
 * holds the schema id; `listed`: nothing, the route shows only the subjects the caller may read.
 */
type Needs = 'open' | 'listed' | 'id' | { subject: Access } | { global: Access };
interface Route { method: string; pattern: string[]; needs: Needs; run: (c: Ctx) => Answer }
const READ_SUBJECT: Needs = { subject: 'read' };
const WRITE_SUBJECT: Needs = { subject: 'write' };

const flag = (q: URLSearchParams, name: string) => q.get(name)?.toLowerCase() === 'true';

/** "latest", -1, or 1..2^31-1 (42202 otherwise). */
function versionParam(text: string): number {
  if (text === 'latest' || text === '-1') return -1;
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > 0x7fffffff) throw E.invalidVersion(text);
  return n;
}

function idParam(text: string): number {
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) throw E.schemaNotFound(`Schema ${text} not found`);
  return n;
}

/** A register/lookup/compatibility body: `schema`, `schemaType` (AVRO when absent), `references`. */
function schemaRequest(body: unknown): SchemaRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw E.unprocessable('Request body must be a JSON object');
  const b = body as Record<string, unknown>;
  if (typeof b.schema !== 'string' || b.schema === '') throw E.invalidSchema('Empty schema');
  const schemaType = (b.schemaType === undefined || b.schemaType === null ? 'AVRO' : b.schemaType) as SchemaType;
  if (!SCHEMA_TYPES.includes(schemaType)) throw E.invalidSchema(`Invalid schema type ${String(b.schemaType)}`);
  const refs = b.references ?? [];
  if (!Array.isArray(refs) || !refs.every((r) => r && typeof r.name === 'string' && typeof r.subject === 'string' && Number.isInteger(r.version))) {
    throw E.invalidSchema('references must be a list of {name, subject, version}');
  }
  const references = (refs as SchemaReference[]).map((r) => ({ name: r.name, subject: r.subject, version: r.version }));
  return {
    schema: b.schema, schemaType, references,
    ...(typeof b.id === 'number' ? { id: b.id } : {}), ...(typeof b.version === 'number' ? { version: b.version } : {}),
  };
}

/**
 * A schema as Confluent shows it: schemaType only when not AVRO, references only when there are
 * some. `format=serialized` gives a Protobuf schema as a base64 FileDescriptorProto (Confluent's
 * Protobuf deserializers ask for it); other formats and types are shown as stored.
 */
function schemaView(s: { schemaType: SchemaType; references: SchemaReference[]; schema: string }, c?: Ctx): Record<string, unknown> {
  const serialized = c !== undefined && s.schemaType === 'PROTOBUF' && c.query.get('format') === 'serialized';
  const text = serialized ? (c.state.parse(s) as ProtobufSchema).serialized() : s.schema;
  return { ...(s.schemaType !== 'AVRO' ? { schemaType: s.schemaType } : {}), ...(s.references.length > 0 ? { references: s.references } : {}), schema: text };
}
const versionView = (v: VersionView, c?: Ctx) => ({ subject: v.subject, version: v.version, id: v.id, ...schemaView(v, c) });

/**
 * `GET /schemas/ids/{id}` is what every consumer asks per new id, so its answer is serialized once
 * per stored content: the state keeps one content object per id for as long as the id lives, so
 * keying on that object can never serve another schema's text, and a forgotten id's entry goes
 * with its content.
 */
const idAnswers = new WeakMap<object, string>();
function schemaByIdAnswer(c: Ctx): Answer {
  const content = c.state.schemaById(idParam(c.params.id!));
  if (content.schemaType === 'PROTOBUF' && c.query.get('format') === 'serialized') return { read: schemaView(content, c) };
  let json = idAnswers.get(content);
  if (json === undefined) idAnswers.set(content, json = JSON.stringify(schemaView(content)));
  return { read: null, json };
}

function field(body: unknown, name: string): unknown {
  if (body === null || typeof body !== 'object') throw E.unprocessable('Request body must be a JSON object');
  return (body as Record<string, unknown>)[name];
}

const ROUTES: Route[] = [
  { method: 'GET', pattern: [], needs: 'open', run: () => ({ read: {} }) },
  { method: 'GET', pattern: ['schemas', 'types'], needs: 'open', run: () => ({ read: SCHEMA_TYPES }) },
  { method: 'GET', pattern: ['schemas', 'ids', ':id'], needs: 'id', run: schemaByIdAnswer },
  { method: 'GET', pattern: ['schemas', 'ids', ':id', 'schema'], needs: 'id', run: (c) => ({ read: c.state.schemaById(idParam(c.params.id!)).schema, raw: true }) },
  { method: 'GET', pattern: ['schemas', 'ids', ':id', 'versions'], needs: 'id', run: (c) => ({ read: c.state.usagesOfId(idParam(c.params.id!), flag(c.query, 'deleted')).filter((u) => c.caller.mayUseSubject(u.subject, 'read')) }) },
  { method: 'GET', pattern: ['schemas', 'ids', ':id', 'subjects'], needs: 'id', run: (c) => ({ read: [...new Set(c.state.usagesOfId(idParam(c.params.id!), flag(c.query, 'deleted')).map((u) => u.subject))].filter((s) => c.caller.mayUseSubject(s, 'read')) }) },
  { method: 'GET', pattern: ['subjects'], needs: 'listed', run: (c) => ({ read: c.state.listSubjects(c.query.get('subjectPrefix') ?? '', flag(c.query, 'deleted')).filter((s) => c.caller.mayUseSubject(s, 'read')) }) },
  { method: 'GET', pattern: ['subjects', ':subject', 'versions'], needs: READ_SUBJECT, run: (c) => ({ read: c.state.versionsOf(c.params.subject!, flag(c.query, 'deleted')).map((v) => v.version) }) },
  {
    method: 'POST', pattern: ['subjects', ':subject', 'versions'], needs: WRITE_SUBJECT, run: (c) => {
      const request = schemaRequest(c.body());
      const normalize = flag(c.query, 'normalize');
      return { write: (s) => register(s, c.params.subject!, request, normalize), unchangedHere: (s) => unchangedRegister(s, c.params.subject!, request, normalize) };
    },
  },
  { method: 'GET', pattern: ['subjects', ':subject', 'versions', ':version'], needs: READ_SUBJECT, run: (c) => ({ read: versionView(c.state.version(c.params.subject!, versionParam(c.params.version!), flag(c.query, 'deleted')), c) }) },
  { method: 'GET', pattern: ['subjects', ':subject', 'versions', ':version', 'schema'], needs: READ_SUBJECT, run: (c) => ({ read: c.state.version(c.params.subject!, versionParam(c.params.version!), flag(c.query, 'deleted')).schema, raw: true }) },
  {
    method: 'GET', pattern: ['subjects', ':subject', 'versions', ':version', 'referencedby'],
    needs: READ_SUBJECT, run: (c) => ({ read: c.state.referencedBy(c.params.subject!, c.state.version(c.params.subject!, versionParam(c.params.version!), true).version) }),
  },
  {
    method: 'DELETE', pattern: ['subjects', ':subject', 'versions', ':version'], needs: WRITE_SUBJECT, run: (c) => {
      const version = versionParam(c.params.version!);
      return { write: (s) => deleteVersion(s, c.params.subject!, version, flag(c.query, 'permanent')) };
    },
  },
  {
    method: 'POST', pattern: ['subjects', ':subject'], needs: READ_SUBJECT, run: (c) => {
      const request = schemaRequest(c.body());
      const subject = c.params.subject!;
      const deleted = flag(c.query, 'deleted');
      c.state.versionsOf(subject, deleted);
      const parsed = c.state.parse(request);
      const found = c.state.findVersion(subject, { schemaType: request.schemaType, schema: c.state.storedText(parsed, flag(c.query, 'normalize')), references: request.references }, deleted);
      if (!found) throw E.schemaNotFound();
      return { read: versionView(found) };
    },
  },
  { method: 'DELETE', pattern: ['subjects', ':subject'], needs: WRITE_SUBJECT, run: (c) => ({ write: (s) => deleteSubject(s, c.params.subject!, flag(c.query, 'permanent')) }) },
  { method: 'POST', pattern: ['compatibility', 'subjects', ':subject', 'versions', ':version'], needs: READ_SUBJECT, run: (c) => compatibilityAnswer(c, versionParam(c.params.version!)) },
  { method: 'POST', pattern: ['compatibility', 'subjects', ':subject', 'versions'], needs: READ_SUBJECT, run: (c) => compatibilityAnswer(c, null) },
  { method: 'GET', pattern: ['config'], needs: { global: 'read' }, run: (c) => ({ read: { compatibilityLevel: c.state.effectiveConfig(null) } }) },
  { method: 'PUT', pattern: ['config'], needs: { global: 'write' }, run: (c) => { const level = field(c.body(), 'compatibility'); return { write: (s) => setConfig(s, null, level) }; } },
  { method: 'DELETE', pattern: ['config'], needs: { global: 'write' }, run: () => ({ write: (s) => deleteConfig(s, null) }) },
  {
    method: 'GET', pattern: ['config', ':subject'], needs: READ_SUBJECT, run: (c) => {
      const own = c.state.config(c.params.subject!);
      if (own === undefined && !flag(c.query, 'defaultToGlobal')) throw E.subjectConfigNotFound(c.params.subject!);
      return { read: { compatibilityLevel: own ?? c.state.effectiveConfig(null) } };
    },
  },
  { method: 'PUT', pattern: ['config', ':subject'], needs: WRITE_SUBJECT, run: (c) => { const level = field(c.body(), 'compatibility'); return { write: (s) => setConfig(s, c.params.subject!, level) }; } },
  { method: 'DELETE', pattern: ['config', ':subject'], needs: WRITE_SUBJECT, run: (c) => ({ write: (s) => deleteConfig(s, c.params.subject!) }) },
  { method: 'GET', pattern: ['mode'], needs: { global: 'read' }, run: (c) => ({ read: { mode: c.state.effectiveMode(null) } }) },
  { method: 'PUT', pattern: ['mode'], needs: { global: 'write' }, run: (c) => { const mode = field(c.body(), 'mode'); return { write: (s) => setMode(s, null, mode, flag(c.query, 'force')) }; } },
  {
    method: 'GET', pattern: ['mode', ':subject'], needs: READ_SUBJECT, run: (c) => {
      const own = c.state.mode(c.params.subject!);
      if (own === undefined && !flag(c.query, 'defaultToGlobal')) throw E.subjectModeNotFound(c.params.subject!);
      return { read: { mode: own ?? c.state.effectiveMode(null) } };
    },
  },
  { method: 'PUT', pattern: ['mode', ':subject'], needs: WRITE_SUBJECT, run: (c) => { const mode = field(c.body(), 'mode'); return { write: (s) => setMode(s, c.params.subject!, mode, flag(c.query, 'force')) }; } },
  { method: 'DELETE', pattern: ['mode', ':subject'], needs: WRITE_SUBJECT, run: (c) => ({ write: (s) => deleteMode(s, c.params.subject!) }) },
];

function compatibilityAnswer(c: Ctx, version: number | null): Answer {
  const request = schemaRequest(c.body());
  const messages = c.state.compatibility(c.params.subject!, request, version);
  return { read: { is_compatible: messages.length === 0, ...(flag(c.query, 'verbose') ? { messages } : {}) } };
}

/** Routes by their number of path segments (match looks only at those). */
const ROUTES_BY_LENGTH = new Map<number, Route[]>();
for (const r of ROUTES) ROUTES_BY_LENGTH.set(r.pattern.length, [...(ROUTES_BY_LENGTH.get(r.pattern.length) ?? []), r]);

function match(path: string): { routes: Route[]; params: Params } | null {
  const decoded: string[] = [];
  for (const p of path.split('/')) {
    if (p === '') continue;
    try {
      decoded.push(p.includes('%') ? decodeURIComponent(p) : p);
    } catch {
      return null;
    }
  }
  const routes = (ROUTES_BY_LENGTH.get(decoded.length) ?? []).filter((r) => r.pattern.every((p, i) => p.startsWith(':') || p === decoded[i]));
  if (routes.length === 0) return null;
  const params: Params = {};
  routes[0]!.pattern.forEach((p, i) => { if (p.startsWith(':')) params[p.slice(1)] = decoded[i]!; });
  return { routes, params };
}

/** Everyone may do everything: no authorizer. */
const ANYONE = new RegistryCaller('User:ANONYMOUS', '', null);

/** 40301 unless `caller` may do what `needs` names on this request. */
function authorize(caller: RegistryCaller, needs: Needs, params: Params, state: RegistryState): void {
  if (needs === 'open' || needs === 'listed' || caller.unrestricted) return;
  if (needs === 'id') {
    // As Karapace: a schema is visible to whoever may read a subject that holds it.
    const id = idParam(params.id!);
    if (!state.usagesOfId(id, true).some((u) => caller.mayUseSubject(u.subject, 'read'))) throw E.forbidden(caller.principal, 'Read', `Schema: ${id}`);
    return;
  }
  if ('global' in needs) {
    if (!caller.mayUseGlobal(needs.global)) throw E.forbidden(caller.principal, needs.global === 'read' ? 'Read' : 'Write', 'Config:');
    return;
  }
  const subject = params.subject!;
  if (!caller.mayUseSubject(subject, needs.subject)) throw E.forbidden(caller.principal, needs.subject === 'read' ? 'Read' : 'Write', `Subject: ${subject}`);
}

/** A request to another node's registry (node:http(s), so that TLS settings can be given). */
function send(url: string, method: string, headers: Record<string, string>, body: Buffer | null, tls: ConnectionOptions | null, timeoutMs: number): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const options = { method, headers: { ...headers, ...(body !== null ? { 'content-length': String(body.length) } : {}) }, timeout: timeoutMs };
    const req = target.protocol === 'https:' ? httpsRequest(target, { ...options, ...(tls ?? {}) }) : httpRequest(target, options);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 500, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

export class RegistryRest {
  /**
   * `forwardTls`: how this node connects to another node's TLS registry listener when it
   * forwards a write (null: only plain HTTP).
   */
  constructor(private readonly service: RegistryService, private readonly writerUrl: WriterUrl, private readonly forwardTls: ConnectionOptions | null = null) {}

  async handle(req: RestRequest): Promise<RestResponse> {
    try {
      return await this.route(req);
    } catch (e) {
      if (e instanceof RegistryError) return { status: e.status, body: e.body() };
      throw e;
    }
  }

  private async route(req: RestRequest): Promise<RestResponse> {
    const found = match(req.path);
    if (!found) throw E.notFound();
    const route = found.routes.find((r) => r.method === req.method);
    if (!route) throw E.methodNotAllowed();
    let parsed: { value: unknown } | null = null;
    const body = () => {
      if (parsed) return parsed.value;
      if (req.body === null || req.body.length === 0) throw E.unprocessable('Request body is missing');
      try {
        parsed = { value: JSON.parse(req.body.toString('utf8')) };
      } catch (e) {
        throw E.badRequest(`Unrecognized JSON: ${e instanceof Error ? e.message : String(e)}`);
      }
      return parsed.value;
    };
    // A node without a replica of `_schemas` has no copy to read: the writer answers for it (and
    // authorizes the caller from the credentials passed along).
    if (!this.service.hasLocalCopy() && req.headers[FORWARDED_HEADER] === undefined) return this.forward(req, await this.service.awaitWriter());
    const caller = req.caller ?? ANYONE;
    authorize(caller, route.needs, found.params, this.service.state);
    const answer = route.run({ params: found.params, query: req.query, body, state: this.service.state, caller });
    if ('read' in answer) {
      if (answer.json !== undefined) return { status: answer.status ?? 200, body: answer.json, raw: true };
      return { status: answer.status ?? 200, body: answer.read, ...(answer.raw ? { raw: true } : {}) };
    }
    const unchanged = answer.unchangedHere?.(this.service.state) ?? null;
    if (unchanged !== null) return { status: 200, body: unchanged };
    return this.write(req, answer.write);
  }

  private async write(req: RestRequest, op: (s: RegistryState) => OperationResult<unknown>): Promise<RestResponse> {
    const writer = await this.service.awaitWriter();
    if (this.service.isWriter()) {
      const { response, offset, epoch } = await this.service.write(op);
      return { status: 200, body: response, headers: { [OFFSET_HEADER]: String(offset), [EPOCH_HEADER]: String(epoch) } };
    }
    if (req.headers[FORWARDED_HEADER] !== undefined) throw E.forwardingError(`node ${writer} leads _schemas now`);
    return this.forward(req, writer);
  }

  /** Sends `req` to the writer's registry and answers with its answer, once this node has replayed what it wrote. */
  private async forward(req: RestRequest, writer: number): Promise<RestResponse> {
    const url = this.writerUrl(writer);
    if (url === null) throw E.forwardingError(`the registry address of node ${writer} is unknown`);
    let res: Awaited<ReturnType<typeof send>>;
    // The writer authenticates and authorizes the caller again, from the same credentials.
    const authorization = req.headers.authorization;
    try {
      const query = req.query.toString();
      res = await send(`${url}${req.path}${query ? `?${query}` : ''}`, req.method, {
        'content-type': REGISTRY_CONTENT_TYPE, [FORWARDED_HEADER]: '1', ...(typeof authorization === 'string' ? { authorization } : {}),
      }, req.body !== null && req.body.length > 0 ? req.body : null, this.forwardTls, this.service.writeTimeoutMs);
    } catch (e) {
      throw E.forwardingError(e instanceof Error ? e.message : String(e));
    }
    let json: unknown;
    try { json = JSON.parse(res.text); } catch { return { status: res.status, body: res.text, raw: true }; }
    const offset = Number(res.headers[OFFSET_HEADER] ?? NaN);
    const epoch = Number(res.headers[EPOCH_HEADER] ?? NaN);
    // Read-your-writes: a node with a replica answers once it has replayed the write; one without
    // reads through the writer too, so the writer's answer is enough.
    if (res.status === 200 && Number.isSafeInteger(offset) && this.service.replaysLocally()
      && !(await this.service.waitForOffset(offset, this.service.writeTimeoutMs, Number.isSafeInteger(epoch) ? epoch : undefined))) {
      throw E.timeout('Timed out waiting for this node to replay the write');
    }
    return { status: res.status, body: json };
  }
}

// `logline schema <verb>`: the schema registry's REST API (Confluent's, served by every node on
// schema.registry.listener) from the command line. Each verb is one or two REST calls; the
// registry decides everything (levels, modes, compatibility), and its refusals are printed with
// their error_code and message (exit 1). `check` exits 1 when the schema is incompatible, so a
// build can gate on it.
//
// Where and how it connects, as Confluent's serializers are told: --registry-url, else
// schema.registry.url of --command-config, else $LOGLINE_SCHEMA_REGISTRY_URL, else
// http://127.0.0.1:8081; HTTP Basic from --basic-auth USER:PASSWORD, else the file's
// basic.auth.user.info (or, with basic.auth.credentials.source=SASL_INHERIT, its SASL user); TLS
// (a private CA, a client certificate for a registry that requires one) from the file's
// schema.registry.ssl.* (command-config.ts, registryTlsFromProperties).
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ConnectionOptions } from 'node:tls';
import { extname } from 'node:path';
import { parseProperties } from '../config/index.js';
import { parseJaasConfig } from '../security/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { registryTlsFromProperties } from './command-config.js';
import { table, toJson } from './output.js';

/** Where `logline schema` connects when neither --registry-url nor --command-config names a registry. */
export const REGISTRY_URL_ENV = 'LOGLINE_SCHEMA_REGISTRY_URL';
const DEFAULT_URL = 'http://127.0.0.1:8081';
/**
 * Confluent's content type, as the registry room's REGISTRY_CONTENT_TYPE: spelled here because that
 * room's door loads the Avro, JSON Schema and Protobuf libraries, half of this command's start-up.
 */
const REGISTRY_CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';
/** A registry that does not answer in this long is reported, not waited on forever. */
const REQUEST_TIMEOUT_MS = 60_000;

const FLAGS: Record<string, FlagSpec> = {
  'registry-url': { type: 'string', help: `the schema registry (default schema.registry.url of --command-config, else $${REGISTRY_URL_ENV}, else ${DEFAULT_URL})` },
  'basic-auth': { type: 'string', help: 'USER:PASSWORD for HTTP Basic (a registry listener secured with SASL_PLAINTEXT or SASL_SSL)' },
  'command-config': { type: 'string', help: 'client properties: schema.registry.url, basic.auth.user.info (or basic.auth.credentials.source=SASL_INHERIT with sasl.jaas.config), schema.registry.ssl.truststore.* and .keystore.* (or ssl.ca.location, ssl.certificate.location, ssl.key.location under schema.registry.)' },
  subject: { type: 'string', help: 'the subject (e.g. orders-value)' },
  file: { type: 'string', help: 'register, check: the schema file (- reads stdin)' },
  schema: { type: 'string', help: 'register, check: the schema text itself, instead of --file' },
  type: { type: 'string', help: 'register, check: AVRO, JSON or PROTOBUF (default PROTOBUF for a .proto file, else AVRO)' },
  reference: { type: 'string', repeatable: true, help: 'register, check: a schema reference, name=subject:version (version a number or latest)' },
  normalize: { type: 'boolean', help: 'register: store the normalized form (Confluent\'s normalize=true)' },
  version: { type: 'string', help: 'get, check, delete: a version number or latest (get and check default to latest)' },
  id: { type: 'number', help: 'get: the schema with this id, and the subjects and versions that use it' },
  compatibility: { type: 'string', help: 'config: set the level (NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE)' },
  mode: { type: 'string', help: 'mode: set the mode (READWRITE, READONLY, READONLY_OVERRIDE, IMPORT)' },
  force: { type: 'boolean', help: 'mode: set IMPORT even though schemas exist' },
  delete: { type: 'boolean', help: 'config, mode: remove the subject\'s own setting (or reset the global one)' },
  deleted: { type: 'boolean', help: 'subjects, versions, get: include soft-deleted subjects and versions' },
  prefix: { type: 'string', help: 'subjects: only subjects starting with this' },
  permanent: { type: 'boolean', help: 'delete: remove for good what was soft-deleted before (Confluent\'s permanent=true)' },
  json: { type: 'boolean', help: 'print JSON instead of text' },
  help: { type: 'boolean', short: 'h', help: 'show this help' },
};

const USAGE = 'logline schema <subjects|register|get|versions|check|config|mode|delete> [options]';
const SUMMARY = [
  'Work with the schema registry every node serves (Confluent\'s REST API): list subjects, register',
  'and fetch schemas, test compatibility, set compatibility levels and modes, delete. `list` is',
  '`subjects` and `compat` is `check`. Exit codes: 0 done (check: compatible), 1 refused by the',
  'registry or unreachable (check: incompatible), 2 usage.',
].join('\n');

/** The registry's refusal: its HTTP status and Confluent's error_code and message. */
class RegistryRefusal extends Error {
  constructor(readonly status: number, readonly errorCode: number, message: string) {
    super(message);
  }
}

/** `tls`: for an https:// registry, its CA and this client's certificate (null: Node's defaults). */
interface Connection { url: string; authorization: string | null; tls: ConnectionOptions | null }

/** --registry-url and --basic-auth, else --command-config's properties, else the environment. */
function connection(flags: Record<string, unknown>): Connection {
  let props = new Map<string, string>();
  const file = flags['command-config'];
  if (typeof file === 'string') {
    try {
      props = parseProperties(readFileSync(file, 'utf8'));
    } catch (e) {
      throw new UsageError(`--command-config ${file}: ${(e as Error).message}`);
    }
  }
  // Confluent's serializers take a comma-separated list; the first is enough for a command.
  const url = ((flags['registry-url'] as string | undefined) ?? props.get('schema.registry.url')?.split(',')[0]?.trim() ?? (process.env[REGISTRY_URL_ENV] || DEFAULT_URL)).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(url)) throw new UsageError(`--registry-url ${url}: expected http://host:port or https://host:port`);
  let userInfo = flags['basic-auth'] as string | undefined;
  if (userInfo === undefined) {
    // confluent-kafka-python spells them with the schema.registry. prefix, the Java serializers without.
    const get = (key: string) => props.get(`schema.registry.${key}`) ?? props.get(key);
    const source = (get('basic.auth.credentials.source') ?? 'USER_INFO').toUpperCase();
    if (source === 'SASL_INHERIT') {
      const jaas = props.get('sasl.jaas.config');
      const options = jaas === undefined ? undefined : parseJaasConfig(jaas).options;
      const user = props.get('sasl.username') ?? options?.get('username');
      const password = props.get('sasl.password') ?? options?.get('password');
      if (user === undefined || password === undefined) throw new UsageError('basic.auth.credentials.source=SASL_INHERIT needs sasl.jaas.config with username and password, or sasl.username and sasl.password');
      userInfo = `${user}:${password}`;
    } else if (source === 'USER_INFO') {
      userInfo = get('basic.auth.user.info');
    } else {
      throw new UsageError(`basic.auth.credentials.source ${source}: expected USER_INFO or SASL_INHERIT`);
    }
  }
  if (userInfo !== undefined && !userInfo.includes(':')) throw new UsageError('--basic-auth: expected USER:PASSWORD');
  return { url, authorization: userInfo === undefined ? null : `Basic ${Buffer.from(userInfo, 'utf8').toString('base64')}`, tls: registryTlsFromProperties(props) };
}

/** One HTTP exchange (node:http(s), so that TLS options can be given); rejects when there is no answer. */
function exchange(conn: Connection, method: string, path: string, body: string | undefined): Promise<{ status: number; statusText: string; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(`${conn.url}${path}`);
    const headers: Record<string, string> = {
      accept: REGISTRY_CONTENT_TYPE,
      ...(body !== undefined ? { 'content-type': REGISTRY_CONTENT_TYPE, 'content-length': String(Buffer.byteLength(body)) } : {}),
      ...(conn.authorization ? { authorization: conn.authorization } : {}),
    };
    // agent: false — one connection per call, closed after it (a command makes one or two).
    const options = { method, headers, agent: false as const, timeout: REQUEST_TIMEOUT_MS };
    const onResponse = (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    };
    const req = url.protocol === 'https:' ? httpsRequest(url, { ...options, ...(conn.tls ?? {}) }, onResponse) : httpRequest(url, options, onResponse);
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer in ${REQUEST_TIMEOUT_MS / 1000} s`), { code: 'TIMEOUT' })));
    req.on('error', reject);
    req.end(body);
  });
}

/** One REST call: the parsed JSON answer, or a RegistryRefusal with the registry's error. */
async function call(conn: Connection, method: string, path: string, body?: unknown): Promise<any> {
  let res: Awaited<ReturnType<typeof exchange>>;
  try {
    res = await exchange(conn, method, path, body === undefined ? undefined : JSON.stringify(body));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const why = err.code === 'TIMEOUT' ? err.message : err.code ?? err.message;
    // A certificate Node does not trust: most often a registry signed by a private CA. A refused
    // handshake after it: a registry that requires a client certificate (ssl.client.auth=required).
    const hint = /CERTIFICATE_REQUIRED|BAD_CERTIFICATE|UNKNOWN_CA|HANDSHAKE_FAILURE/.test(why)
      ? ' (the registry asks for a client certificate: schema.registry.ssl.keystore.location, or schema.registry.ssl.certificate.location and schema.registry.ssl.key.location, in --command-config)'
      : /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(why) ? ' (trust its CA with schema.registry.ssl.truststore.location in --command-config, or NODE_EXTRA_CA_CERTS=ca.pem)' : '';
    throw new RegistryRefusal(0, 0, `cannot reach the schema registry at ${conn.url}: ${why}${hint}`);
  }
  let json: any;
  try {
    json = res.text === '' ? null : JSON.parse(res.text);
  } catch {
    json = res.text;
  }
  if (res.status >= 200 && res.status < 300) return json;
  if (json !== null && typeof json === 'object' && typeof json.error_code === 'number') throw new RegistryRefusal(res.status, json.error_code, String(json.message));
  throw new RegistryRefusal(res.status, res.status, `HTTP ${res.status} ${res.statusText}${typeof json === 'string' && json !== '' ? `: ${json.slice(0, 200)}` : ''}`);
}

const seg = encodeURIComponent;

function need(flags: Record<string, unknown>, name: string, verb: string): string {
  const v = flags[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`schema ${verb} needs --${name}`);
  return v;
}

/** "latest" or a positive integer, as the registry takes it in a path. */
function versionArg(text: string): string {
  if (text === 'latest' || /^[1-9]\d*$/.test(text)) return text;
  throw new UsageError(`--version ${text}: expected a version number or latest`);
}

/** The register/check body from --file or --schema, --type and --reference. */
async function schemaBody(conn: Connection, flags: Record<string, unknown>, verb: string): Promise<{ schema: string; schemaType: string; references: { name: string; subject: string; version: number }[] }> {
  const file = flags.file as string | undefined;
  const inline = flags.schema as string | undefined;
  if ((file === undefined) === (inline === undefined)) throw new UsageError(`schema ${verb} needs the schema: --file FILE or --schema TEXT`);
  let schema: string;
  if (inline !== undefined) schema = inline;
  else {
    try {
      schema = readFileSync(file === '-' ? 0 : file!, 'utf8');
    } catch (e) {
      throw new UsageError(`--file ${file}: ${(e as Error).message}`);
    }
  }
  const type = ((flags.type as string | undefined) ?? (file !== undefined && extname(file) === '.proto' ? 'PROTOBUF' : 'AVRO')).toUpperCase();
  if (!['AVRO', 'JSON', 'PROTOBUF'].includes(type)) throw new UsageError(`--type ${type}: expected AVRO, JSON or PROTOBUF`);
  const references = [];
  for (const ref of (flags.reference as string[] | undefined) ?? []) {
    const m = /^([^=]+)=(.+):([^:]+)$/.exec(ref);
    if (!m) throw new UsageError(`--reference ${ref}: expected name=subject:version`);
    const [, name, subject, v] = m;
    versionArg(v!);
    const version = v === 'latest' ? (await call(conn, 'GET', `/subjects/${seg(subject!)}/versions/latest`)).version as number : Number(v);
    references.push({ name: name!, subject: subject!, version });
  }
  return { schema, schemaType: type, references };
}

/** A schema's text for people: JSON schemas indented, .proto as written. */
function pretty(schemaType: string | undefined, schema: string): string {
  if (schemaType === 'PROTOBUF') return schema.trimEnd();
  try {
    return JSON.stringify(JSON.parse(schema), null, 2);
  } catch {
    return schema;
  }
}

/**
 * Confluent's compatibility messages for people: each reason as `version N: TYPE: description`
 * (the registry lists a version's reasons, then `{oldSchemaVersion: N}`, its text and the level);
 * the old schema's text is left out (`schema get --version N` shows it). --json keeps them as sent.
 */
function readableMessages(messages: readonly string[]): string[] {
  const out: string[] = [];
  let pending: string[] = [];
  for (const m of messages) {
    const version = /^\{oldSchemaVersion: (\d+)\}$/.exec(m);
    if (version) {
      out.push(...pending.map((p) => `version ${version[1]}: ${p}`));
      pending = [];
      continue;
    }
    if (/^\{(oldSchema|compatibility): '[\s\S]*'\}$/.test(m)) continue;
    const reason = /^\{errorType:'([^']*)', description:'([\s\S]*?)'(?:, additionalInfo:'[\s\S]*')?\}$/.exec(m);
    pending.push(reason ? `${reason[1]}: ${reason[2]}` : m);
  }
  return [...out, ...pending].map((line) => `  - ${line}`);
}

const typeOf = (v: { schemaType?: string }) => v.schemaType ?? 'AVRO';
const refsText = (refs: { name: string; subject: string; version: number }[] | undefined) =>
  refs && refs.length > 0 ? `references: ${refs.map((r) => `${r.name}=${r.subject}:${r.version}`).join(', ')}\n` : '';

/** The subject's own setting (config or mode), else the global one; `source` says which. */
async function setting(conn: Connection, kind: 'config' | 'mode', subject: string | undefined): Promise<{ value: string; source: 'subject' | 'global' }> {
  const pick = (r: any) => String(kind === 'config' ? r.compatibilityLevel : r.mode);
  if (subject !== undefined) {
    try {
      return { value: pick(await call(conn, 'GET', `/${kind}/${seg(subject)}`)), source: 'subject' };
    } catch (e) {
      // 40408/40409: no setting of its own, so the global one applies.
      if (!(e instanceof RegistryRefusal) || (e.errorCode !== 40408 && e.errorCode !== 40409)) throw e;
    }
  }
  return { value: pick(await call(conn, 'GET', `/${kind}`)), source: 'global' };
}

export async function schemaCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [verb, ...extra] = positionals;
  if (flags.help || !verb) {
    console.log(helpText(USAGE, SUMMARY, FLAGS));
    return verb || flags.help ? 0 : 2;
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  const conn = connection(flags);
  const json = flags.json === true;
  const out = (value: unknown, text: string) => console.log(json ? toJson(value) : text);
  try {
    return await run(verb === 'list' ? 'subjects' : verb === 'compat' ? 'check' : verb, flags, conn, out);
  } catch (e) {
    if (!(e instanceof RegistryRefusal)) throw e;
    console.error(e.status === 0 ? e.message : `error ${e.errorCode} (HTTP ${e.status}): ${e.message}`);
    return 1;
  }
}

async function run(verb: string, flags: Record<string, unknown>, conn: Connection, out: (value: unknown, text: string) => void): Promise<number> {
  const deleted = flags.deleted === true ? '?deleted=true' : '';
  switch (verb) {
    case 'subjects': {
      const prefix = flags.prefix as string | undefined;
      const query = (extraQuery: string) => `/subjects${extraQuery}${prefix !== undefined ? `${extraQuery ? '&' : '?'}subjectPrefix=${seg(prefix)}` : ''}`;
      const subjects: string[] = await call(conn, 'GET', query(deleted));
      const live = new Set<string>(deleted ? await call(conn, 'GET', query('')) : subjects);
      const rows = [];
      for (const subject of subjects) {
        const latest = await call(conn, 'GET', `/subjects/${seg(subject)}/versions/latest${deleted}`);
        rows.push({ subject, latest: latest.version, id: latest.id, type: typeOf(latest), ...(deleted ? { deleted: !live.has(subject) } : {}) });
      }
      out(rows, table(rows.map((r) => ('deleted' in r ? { ...r, deleted: r.deleted ? 'yes' : 'no' } : r)), ['subject', 'latest', 'id', 'type', ...(deleted ? ['deleted'] : [])]));
      return 0;
    }
    case 'register': {
      const subject = need(flags, 'subject', verb);
      const body = await schemaBody(conn, flags, verb);
      const normalize = flags.normalize === true ? '?normalize=true' : '';
      // The version holding this schema: null when there is none, undefined when the caller may
      // register but not read the subject (its ACLs can say so).
      const lookup = async () => {
        try {
          return await call(conn, 'POST', `/subjects/${seg(subject)}${normalize}`, body);
        } catch (e) {
          if (e instanceof RegistryRefusal && (e.errorCode === 40401 || e.errorCode === 40403)) return null;
          if (e instanceof RegistryRefusal && (e.status === 401 || e.status === 403)) return undefined;
          throw e;
        }
      };
      const before = await lookup();
      let id: number;
      try {
        ({ id } = await call(conn, 'POST', `/subjects/${seg(subject)}/versions${normalize}`, body));
      } catch (e) {
        if (!(e instanceof RegistryRefusal) || e.errorCode !== 409) throw e;
        // The refusal carries its reasons in one long line; the verbose check lists them one a line.
        const check = await call(conn, 'POST', `/compatibility/subjects/${seg(subject)}/versions?verbose=true`, body).catch(() => null);
        const messages: string[] = check?.messages ?? [];
        if (messages.length === 0) throw e;
        throw new RegistryRefusal(e.status, e.errorCode, `${e.message.replace(/, details: \[[\s\S]*$/, '')}:\n${readableMessages(messages).join('\n')}`);
      }
      // The register answer carries only the id; the lookup finds the version (IMPORT mode may have chosen it).
      const found = before ?? await lookup();
      const version = found?.version ?? null;
      const registered = before === null ? true : before === undefined ? null : false;
      out({ subject, version, id, registered }, `${registered === false ? 'already registered' : 'registered'}: subject ${subject} version ${version ?? '?'} id ${id}`);
      return 0;
    }
    case 'get': {
      if (flags.id !== undefined) {
        if (flags.subject !== undefined || flags.version !== undefined) throw new UsageError('schema get takes --id, or --subject [--version]');
        const id = flags.id as number;
        if (!Number.isSafeInteger(id) || id < 0) throw new UsageError(`--id ${id}: expected a schema id`);
        const s = await call(conn, 'GET', `/schemas/ids/${id}`);
        const usages: { subject: string; version: number }[] = await call(conn, 'GET', `/schemas/ids/${id}/versions${deleted}`);
        const used = usages.map((u) => `${u.subject} version ${u.version}`).join(', ') || '(no subject)';
        out({ id, ...s, versions: usages }, `id ${id}  type ${typeOf(s)}  used by ${used}\n${refsText(s.references)}${pretty(s.schemaType, s.schema)}`);
        return 0;
      }
      const subject = need(flags, 'subject', verb);
      const version = versionArg((flags.version as string | undefined) ?? 'latest');
      const v = await call(conn, 'GET', `/subjects/${seg(subject)}/versions/${version}${deleted}`);
      out(v, `subject ${v.subject}  version ${v.version}  id ${v.id}  type ${typeOf(v)}\n${refsText(v.references)}${pretty(v.schemaType, v.schema)}`);
      return 0;
    }
    case 'versions': {
      const subject = need(flags, 'subject', verb);
      const versions: number[] = await call(conn, 'GET', `/subjects/${seg(subject)}/versions${deleted}`);
      const live = new Set<number>(deleted ? await call(conn, 'GET', `/subjects/${seg(subject)}/versions`).catch((e) => {
        // Every version soft-deleted: the subject has no live ones.
        if (e instanceof RegistryRefusal && e.errorCode === 40401) return [];
        throw e;
      }) : versions);
      const rows = [];
      for (const version of versions) {
        const v = await call(conn, 'GET', `/subjects/${seg(subject)}/versions/${version}${deleted}`);
        rows.push({ version, id: v.id, type: typeOf(v), ...(deleted ? { deleted: !live.has(version) } : {}) });
      }
      out(rows, table(rows.map((r) => ('deleted' in r ? { ...r, deleted: r.deleted ? 'yes' : 'no' } : r)), ['version', 'id', 'type', ...(deleted ? ['deleted'] : [])]));
      return 0;
    }
    case 'check': {
      const subject = need(flags, 'subject', verb);
      const body = await schemaBody(conn, flags, verb);
      // Without --version: what a register would check (every version the level names, transitive
      // or not); with one: against that version alone.
      const version = flags.version === undefined ? null : versionArg(flags.version as string);
      const path = `/compatibility/subjects/${seg(subject)}/versions${version === null ? '' : `/${version}`}?verbose=true`;
      const r = await call(conn, 'POST', path, body);
      const messages: string[] = r.messages ?? [];
      // The level checked: named in a refusal's messages; otherwise asked for, if the caller may read it.
      const named = messages.map((m) => /^\{compatibility: '([A-Z_]+)'\}$/.exec(m)?.[1]).find((x) => x !== undefined);
      const level = named ?? (await setting(conn, 'config', subject).catch((e) => {
        if (e instanceof RegistryRefusal && (e.status === 401 || e.status === 403)) return null;
        throw e;
      }))?.value ?? null;
      const against = `${version === null ? `subject ${subject}` : `subject ${subject} version ${version}`}${level === null ? '' : ` (${level})`}`;
      out({ subject, version, compatibility: level, is_compatible: r.is_compatible, messages },
        r.is_compatible ? `compatible with ${against}` : `incompatible with ${against}:\n${readableMessages(messages).join('\n')}`);
      return r.is_compatible ? 0 : 1;
    }
    case 'config':
    case 'mode': {
      const subject = flags.subject as string | undefined;
      const label = verb === 'config' ? 'compatibility' : 'mode';
      const what = subject === undefined ? `global ${label}` : `${label} of subject ${subject}`;
      const path = `/${verb}${subject === undefined ? '' : `/${seg(subject)}`}`;
      const value = flags[label] as string | undefined;
      if (value !== undefined && flags.delete) throw new UsageError(`schema ${verb}: --${label} sets, --delete removes; give one`);
      if (value !== undefined) {
        const body = verb === 'config' ? { compatibility: value.toUpperCase() } : { mode: value.toUpperCase() };
        const r = await call(conn, 'PUT', `${path}${flags.force ? '?force=true' : ''}`, body);
        const set = String(verb === 'config' ? r.compatibility : r.mode);
        out({ subject: subject ?? null, [label]: set }, `${what} set to ${set}`);
        return 0;
      }
      if (flags.delete) {
        await call(conn, 'DELETE', path);
        const now = await setting(conn, verb, subject);
        out({ subject: subject ?? null, [label]: now.value, source: now.source },
          subject === undefined ? `global ${label} reset to ${now.value}` : `${what} removed: the global ${label} (${now.value}) applies`);
        return 0;
      }
      const now = await setting(conn, verb, subject);
      out({ subject: subject ?? null, [label]: now.value, source: now.source },
        `${what}: ${now.value}${subject !== undefined && now.source === 'global' ? ` (the global ${label}: the subject has none of its own)` : ''}`);
      return 0;
    }
    case 'delete': {
      const subject = need(flags, 'subject', verb);
      const permanent = flags.permanent === true;
      const query = permanent ? '?permanent=true' : '';
      const how = permanent ? 'permanently deleted' : 'soft-deleted';
      const hint = permanent ? '' : ' (still readable with --deleted; delete again with --permanent to remove for good)';
      if (flags.version !== undefined) {
        const version = versionArg(flags.version as string);
        const r: number = await call(conn, 'DELETE', `/subjects/${seg(subject)}/versions/${version}${query}`);
        out({ subject, versions: [r], permanent }, `${how} subject ${subject} version ${r}${hint}`);
        return 0;
      }
      const r: number[] = await call(conn, 'DELETE', `/subjects/${seg(subject)}${query}`);
      out({ subject, versions: r, permanent }, `${how} subject ${subject} (versions ${r.join(', ')})${hint}`);
      return 0;
    }
    default:
      throw new UsageError(`unknown schema command "${verb}" (subjects, register, get, versions, check, config, mode, delete)`);
  }
}

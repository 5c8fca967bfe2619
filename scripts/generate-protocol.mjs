#!/usr/bin/env node
// Generates src/protocol/generated/ from Apache Kafka's JSON message schemas (kept outside this
// repository; --schemas DIR names their directory), amended by scripts/protocol-releases.mjs with
// what Kafka's later releases changed: a data table of every message (consumed by the
// generic codec), a TypeScript interface per message and struct, and the error-code table. Output
// is deterministic, so a test can re-run this and compare it with the committed files.
//
//   node scripts/generate-protocol.mjs [--schemas DIR] [--out DIR]

import { readFileSync, readdirSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDED_ERROR_CODES, ADDED_SCHEMAS, applyReleases } from './protocol-releases.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const argValue = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const schemasDir = resolve(argValue('--schemas', join(repo, '..', 'shared', 'kafka-protocol')));
const outDir = resolve(argValue('--out', join(repo, 'src', 'protocol', 'generated')));
const FOLDERS = ['clients', 'metadata', 'group-coordinator', 'transaction-coordinator', 'raft', 'storage'];

if (!existsSync(schemasDir)) {
  console.error(`schemas not found at ${schemasDir}`);
  process.exit(2);
}

/** Kafka's schema files carry // line comments; strip them before JSON.parse. */
function readSchema(path) {
  const text = readFileSync(path, 'utf8').replace(/^\s*\/\/.*$/gm, '');
  return JSON.parse(text);
}

/** "0+" → [0, MAX], "3-5" → [3, 5], "2" → [2, 2], "none" → null. */
function parseVersions(text) {
  if (text === undefined || text === null || text === 'none' || text === '') return null;
  const s = String(text).trim();
  if (s.endsWith('+')) return [Number(s.slice(0, -1)), 0x7fff];
  const dash = s.indexOf('-');
  if (dash > 0) return [Number(s.slice(0, dash)), Number(s.slice(dash + 1))];
  return [Number(s), Number(s)];
}

const camel = (name) => name.charAt(0).toLowerCase() + name.slice(1);
const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64',
  'string', 'bytes', 'records', 'uuid']);

function loadAll() {
  const messages = [];
  for (const folder of FOLDERS) {
    const dir = join(schemasDir, folder);
    if (!existsSync(dir)) continue;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
      messages.push({ folder, schema: applyReleases(readSchema(join(dir, file))) });
    }
  }
  for (const added of ADDED_SCHEMAS) messages.push(structuredClone(added));
  return messages;
}

/** Turns one Kafka field into our descriptor; struct types become named references. */
function convertField(field, ctx) {
  const isArray = field.type.startsWith('[]');
  const base = isArray ? field.type.slice(2) : field.type;
  const versions = parseVersions(field.versions ?? field.taggedVersions);
  const out = { name: camel(field.name), type: field.type };
  out.versions = versions;
  const nullable = parseVersions(field.nullableVersions);
  if (nullable) out.nullable = nullable;
  const tagged = parseVersions(field.taggedVersions);
  if (tagged) {
    out.tagged = tagged;
    out.tag = Number(field.tag);
  }
  if (field.flexibleVersions !== undefined) out.flexible = parseVersions(field.flexibleVersions);
  if (field.default !== undefined) out.default = String(field.default);
  if (field.ignorable) out.ignorable = true;
  if (field.mapKey) out.mapKey = true;
  if (!PRIMITIVES.has(base)) {
    const structName = ctx.prefix + base;
    out.struct = structName;
    if (field.fields) defineStruct(structName, field.fields, ctx);
    else if (!ctx.common.has(base)) throw new Error(`${ctx.prefix}: unknown type ${field.type}`);
    else ctx.usedCommon.add(base);
  }
  return out;
}

function defineStruct(name, fields, ctx) {
  if (ctx.structs.has(name)) return;
  ctx.structs.set(name, null); // reserve, so recursion terminates
  ctx.structs.set(name, fields.map((f) => convertField(f, ctx)));
}

function convertMessage({ folder, schema }) {
  const ctx = { prefix: schema.name, structs: new Map(), common: new Map(), usedCommon: new Set() };
  for (const c of schema.commonStructs ?? []) ctx.common.set(c.name, c.fields);
  const fields = schema.fields.map((f) => convertField(f, ctx));
  // Common structs are defined after use in the files; resolve them until none is left.
  for (let changed = true; changed;) {
    changed = false;
    for (const name of [...ctx.usedCommon]) {
      const full = ctx.prefix + name;
      if (!ctx.structs.has(full)) {
        defineStruct(full, ctx.common.get(name), ctx);
        changed = true;
      }
    }
  }
  const message = {
    name: schema.name,
    kind: schema.type,
    folder,
    validVersions: parseVersions(schema.validVersions),
    flexibleVersions: parseVersions(schema.flexibleVersions),
    fields,
    structs: Object.fromEntries([...ctx.structs.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
  if (schema.apiKey !== undefined) message.apiKey = schema.apiKey;
  if (schema.deprecatedVersions) message.deprecatedVersions = parseVersions(schema.deprecatedVersions);
  if (schema.latestVersionUnstable) message.latestVersionUnstable = true;
  return message;
}

const TS_TYPES = {
  bool: 'boolean', int8: 'number', int16: 'number', uint16: 'number', int32: 'number', uint32: 'number',
  int64: 'bigint', float64: 'number', string: 'string', bytes: 'Buffer', records: 'Buffer', uuid: 'string',
};

function tsType(field) {
  const isArray = field.type.startsWith('[]');
  const base = isArray ? field.type.slice(2) : field.type;
  let t = field.struct ?? TS_TYPES[base];
  if (isArray) t = `${t}[]`;
  if (field.nullable || base === 'records') t = `${t} | null`;
  return t;
}

/**
 * In responses a field that is tagged in every version that has it may be left out: the codec
 * writes an absent tagged field as its default, by not writing it (handlers answer v12 Fetch without
 * building a default CurrentLeader per partition). Decoded messages always have every field.
 */
function tsInterface(name, fields, optionalTagged) {
  const lines = [`export interface ${name} {`];
  for (const f of fields) {
    const v = f.versions ? `v${f.versions[0]}${f.versions[1] === 0x7fff ? '+' : `-${f.versions[1]}`}` : 'never';
    const extra = f.tagged ? `, tag ${f.tag}` : '';
    const optional = optionalTagged && f.tagged && f.versions && f.versions[0] >= f.tagged[0];
    lines.push(`  /** ${v}${extra} */`);
    lines.push(`  ${f.name}${optional ? '?' : ''}: ${tsType(f)};`);
  }
  lines.push('  /** Tagged fields this codec does not know, kept so they survive a re-encode. */');
  lines.push('  unknownTaggedFields?: UnknownTaggedField[];');
  lines.push('}');
  return lines.join('\n');
}

function generate() {
  const messages = loadAll().map(convertMessage);
  messages.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header = '// Generated by scripts/generate-protocol.mjs from Apache Kafka\'s message schemas. Do not edit.\n';

  const data = [header, "import type { MessageSchema } from '../schema.js';", ''];
  data.push('export const messageSchemas: Record<string, MessageSchema> = {');
  for (const m of messages) data.push(`  ${m.name}: ${JSON.stringify(m)},`);
  data.push('};', '');

  const types = [header, "import type { UnknownTaggedField } from '../schema.js';", ''];
  for (const m of messages) {
    const optionalTagged = m.kind === 'response';
    types.push(tsInterface(m.name, m.fields, optionalTagged));
    for (const [name, fields] of Object.entries(m.structs)) types.push(tsInterface(name, fields, optionalTagged));
  }
  const apis = messages.filter((m) => m.kind === 'request').sort((a, b) => a.apiKey - b.apiKey);
  types.push('', '/** Request and response types by API key. */');
  types.push('export interface ApiTypes {');
  for (const m of apis) {
    const base = m.name.replace(/Request$/, '');
    types.push(`  ${m.apiKey}: { request: ${base}Request; response: ${base}Response };`);
  }
  types.push('}', '');
  types.push('export const ApiKey = {');
  for (const m of apis) types.push(`  ${m.name.replace(/Request$/, '')}: ${m.apiKey},`);
  types.push('} as const;', '');

  const errors = [header];
  const tsv = readFileSync(join(schemasDir, 'error-codes.tsv'), 'utf8').trim().split('\n').slice(1);
  const rows = tsv.map((line) => line.split('\t')).map(([code, name, retriable]) => ({ code: Number(code), name, retriable: retriable === 'true' }));
  for (const e of ADDED_ERROR_CODES) if (!rows.some((r) => r.code === e.code)) rows.push(e);
  errors.push('export const ErrorCode = {');
  for (const r of rows) errors.push(`  ${r.name}: ${r.code},`);
  errors.push('} as const;', '');
  errors.push('export type ErrorCodeName = keyof typeof ErrorCode;', '');
  errors.push('/** code → [name, retriable] */');
  errors.push('export const errorTable: ReadonlyMap<number, readonly [ErrorCodeName, boolean]> = new Map([');
  for (const r of rows) errors.push(`  [${r.code}, [${JSON.stringify(r.name)}, ${r.retriable}]],`);
  errors.push(']);', '');

  return {
    'messages.ts': data.join('\n'),
    'types.ts': types.join('\n\n').replace(/\n\n\n+/g, '\n\n'),
    'errors.ts': errors.join('\n'),
  };
}

const files = generate();
mkdirSync(outDir, { recursive: true });
for (const [name, text] of Object.entries(files)) writeFileSync(join(outDir, name), text);
console.error(`wrote ${Object.keys(files).length} files to ${outDir}`);

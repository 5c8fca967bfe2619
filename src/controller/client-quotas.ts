// ClientQuotaControlManager: AlterClientQuotas on the controller. Each entry names an entity (user,
// client-id, or ip; a null name is that type's default) and sets or removes quota keys; the
// answer is one error per entry and ClientQuotaRecords for what changed. Validation is Kafka's:
// entity types and their combinations, keys valid for the entity (user and client-id entities:
// producer_byte_rate, consumer_byte_rate (whole numbers), request_percentage,
// controller_mutation_rate; ip: connection_creation_rate (whole)), duplicate keys and entities.
// Unlike Kafka's, an entry with an invalid key writes nothing (Kafka reports the error and then
// overwrites it with success for the keys that were valid).
import { ErrorCode, type AlterClientQuotasRequestEntryData, type AlterClientQuotasResponseEntryData } from '../protocol/index.js';
import { metadataRecord, quotaEntityKey, type MetadataImage, type MetadataRecord } from '../metadata/index.js';
import type { ControllerResult } from './result.js';

type ValueKind = 'long' | 'double' | 'int';

const USER_CLIENT_KEYS: ReadonlyMap<string, ValueKind> = new Map([
  ['producer_byte_rate', 'long'], ['consumer_byte_rate', 'long'], ['request_percentage', 'double'], ['controller_mutation_rate', 'double'],
]);
const IP_KEYS: ReadonlyMap<string, ValueKind> = new Map([['connection_creation_rate', 'int']]);

const EPSILON = 1e-6;

function invalid(entry: AlterClientQuotasRequestEntryData, errorMessage: string): AlterClientQuotasResponseEntryData {
  return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage, entity: entry.entity.map((e) => ({ ...e })) };
}

function describeEntity(entry: AlterClientQuotasRequestEntryData): string {
  return `ClientQuotaEntity(entries={${entry.entity.map((e) => `${e.entityType}=${e.entityName ?? '<default>'}`).join(', ')}})`;
}

/** The keys valid for the entity, or why the entity is invalid. */
function entityKeys(entry: AlterClientQuotasRequestEntryData): ReadonlyMap<string, ValueKind> | string {
  if (entry.entity.length === 0) return 'Invalid empty client quota entity';
  const types = new Map<string, string | null>();
  for (const e of entry.entity) {
    if (types.has(e.entityType)) return `Invalid empty client quota entity, duplicate entity entry ${e.entityType}`;
    if (e.entityType !== 'user' && e.entityType !== 'client-id' && e.entityType !== 'ip') return `Unhandled client quota entity type: ${e.entityType}`;
    if (e.entityName !== null && e.entityName === '') return `Empty ${e.entityType} not supported`;
    types.set(e.entityType, e.entityName);
  }
  if (types.has('ip')) {
    if (types.size > 1) return 'Invalid empty client quota entity';
    const ip = types.get('ip')!;
    // Kafka resolves host names too (InetAddress.getByName); a controller resolving names would do I/O, so only literals.
    if (ip !== null && !isIpLiteral(ip)) return `${ip} is not a valid IP or resolvable host.`;
    return IP_KEYS;
  }
  return USER_CLIENT_KEYS;
}

function checkValue(keys: ReadonlyMap<string, ValueKind>, key: string, value: number): string | null {
  const kind = keys.get(key);
  if (kind === undefined) return `Invalid configuration key ${key}`;
  if (!Number.isFinite(value)) return `Configuration ${key} must be a finite number`;
  if (kind !== 'double' && Math.abs(Math.trunc(value + EPSILON) - value) > EPSILON) {
    return `Configuration ${key} must be a ${kind === 'long' ? 'Long' : 'Integer'} value`;
  }
  return null;
}

/**
 * AlterClientQuotas (key 49): per entry an error (INVALID_REQUEST with Kafka's message) or NONE;
 * records only for values that change. `validateOnly` checks and writes nothing.
 */
export function alterClientQuotas(image: MetadataImage, entries: readonly AlterClientQuotasRequestEntryData[], validateOnly: boolean):
  ControllerResult<AlterClientQuotasResponseEntryData[]> {
  const records: MetadataRecord[] = [];
  const response: AlterClientQuotasResponseEntryData[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    const key = quotaEntityKey(entry.entity);
    if (seen.has(key)) { response.push(invalid(entry, `Ignoring duplicate entity ${describeEntity(entry)}`)); continue; }
    seen.add(key);
    const keys = entityKeys(entry);
    if (typeof keys === 'string') { response.push(invalid(entry, keys)); continue; }
    const out = entryRecords(image, entry, keys, key);
    if (typeof out === 'string') { response.push(invalid(entry, out)); continue; }
    if (!validateOnly) records.push(...out);
    response.push({ errorCode: ErrorCode.NONE, errorMessage: null, entity: entry.entity.map((e) => ({ ...e })) });
  }
  return { records, response };
}

function entryRecords(image: MetadataImage, entry: AlterClientQuotasRequestEntryData, keys: ReadonlyMap<string, ValueKind>, entityKey: string): MetadataRecord[] | string {
  const current = image.clientQuotas.entities.get(entityKey)?.quotas;
  const ops = new Set<string>();
  const out: MetadataRecord[] = [];
  const entity = () => entry.entity.map((e) => ({ entityType: e.entityType, entityName: e.entityName }));
  for (const op of entry.ops) {
    if (ops.has(op.key)) return `Duplicate quota key ${op.key} not updating quota for this entity ${describeEntity(entry)}`;
    ops.add(op.key);
    if (op.remove) {
      if (current?.has(op.key)) out.push(metadataRecord('ClientQuotaRecord', { entity: entity(), key: op.key, value: 0, remove: true }) as MetadataRecord);
      continue;
    }
    const why = checkValue(keys, op.key, op.value);
    if (why !== null) return why;
    if (current?.get(op.key) !== op.value) out.push(metadataRecord('ClientQuotaRecord', { entity: entity(), key: op.key, value: op.value, remove: false }) as MetadataRecord);
  }
  return out;
}

/** An IPv4 dotted quad or an IPv6 address (this room does no I/O, so node:net's isIP is not at hand). */
function isIpLiteral(s: string): boolean {
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (v4 !== null) return v4.slice(1).every((x) => Number(x) <= 255);
  if (!/^[0-9a-fA-F:.]+$/.test(s) || !s.includes(':')) return false;
  const halves = s.split('::');
  if (halves.length > 2) return false;
  const groups = halves.flatMap((h) => (h === '' ? [] : h.split(':')));
  // A trailing dotted quad (::ffff:10.0.0.1) counts as two groups.
  const last = groups[groups.length - 1] ?? '';
  const count = groups.length + (last.includes('.') ? 1 : 0);
  if (last.includes('.') && !isIpLiteral(last)) return false;
  if (!groups.slice(0, last.includes('.') ? -1 : undefined).every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return false;
  return halves.length === 2 ? count < 8 : count === 8;
}

// fast-check arbitraries for any message at any version, built from the same schema table the
// codec uses. Fields absent from a version carry the schema default, since that is what a decoder
// must give back for them.
import fc from 'fast-check';
import { messageSchemas, inRange, ZERO_UUID, type FieldSchema, type MessageSchema } from '../../src/protocol/index.js';

type Value = unknown;

function fieldDefault(m: MessageSchema, f: FieldSchema, version: number): Value {
  const isArray = f.type.startsWith('[]');
  const base = isArray ? f.type.slice(2) : f.type;
  const d = f.default;
  if (isArray) return d === 'null' ? null : [];
  if (f.struct) return d === 'null' || d === 'None' ? null : structDefault(m, f.struct, version);
  switch (base) {
    case 'bool': return d !== undefined && d.toLowerCase() === 'true';
    case 'int64': return d === undefined ? 0n : BigInt(d);
    case 'string': return d === 'null' && f.nullable !== undefined ? null : (d ?? '');
    case 'bytes': return d === 'null' ? null : Buffer.alloc(0);
    case 'records': return null;
    case 'uuid': return ZERO_UUID;
    default: return d === undefined ? 0 : Number(d);
  }
}

function structDefault(m: MessageSchema, name: string, version: number): Record<string, Value> {
  const out: Record<string, Value> = {};
  for (const f of m.structs[name]!) out[f.name] = fieldDefault(m, f, version);
  return out;
}

const ints: Record<string, fc.Arbitrary<Value>> = {
  bool: fc.boolean(),
  int8: fc.integer({ min: -128, max: 127 }),
  int16: fc.integer({ min: -32768, max: 32767 }),
  uint16: fc.integer({ min: 0, max: 65535 }),
  int32: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  uint32: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
  int64: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  float64: fc.double(),
  uuid: fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => Buffer.from(b).toString('base64url')),
  string: fc.string({ unit: 'grapheme', maxLength: 12 }),
  bytes: fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b)),
  records: fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)),
};

function scalarArb(m: MessageSchema, f: FieldSchema, version: number, depth: number): fc.Arbitrary<Value> {
  const base = f.type.startsWith('[]') ? f.type.slice(2) : f.type;
  if (f.struct) return structArb(m, m.structs[f.struct]!, version, depth + 1);
  return ints[base]!;
}

function fieldArb(m: MessageSchema, f: FieldSchema, version: number, depth: number): fc.Arbitrary<Value> {
  if (!inRange(f.versions, version)) return fc.constant(fieldDefault(m, f, version));
  const isArray = f.type.startsWith('[]');
  const base = isArray ? f.type.slice(2) : f.type;
  let arb = isArray
    ? fc.array(scalarArb(m, f, version, depth), { maxLength: depth > 2 ? 1 : 3 })
    : scalarArb(m, f, version, depth);
  // Records are nullable on the wire in every version.
  if (inRange(f.nullable, version) || base === 'records') arb = fc.option(arb, { nil: null, freq: 4 });
  return arb;
}

function structArb(m: MessageSchema, fields: readonly FieldSchema[], version: number, depth: number): fc.Arbitrary<Value> {
  const shape: Record<string, fc.Arbitrary<Value>> = {};
  for (const f of fields) shape[f.name] = fieldArb(m, f, version, depth);
  return fc.record(shape).map((o) => ({ ...o }));
}

export function messageArb(name: string, version: number): fc.Arbitrary<Record<string, Value>> {
  const m = messageSchemas[name]!;
  return structArb(m, m.fields, version, 0) as fc.Arbitrary<Record<string, Value>>;
}

/** Every (message, version) pair in the table. */
export function allMessageVersions(): { name: string; version: number }[] {
  const out: { name: string; version: number }[] = [];
  for (const m of Object.values(messageSchemas)) {
    if (!m.validVersions) continue;
    for (let v = m.validVersions[0]; v <= m.validVersions[1]; v++) out.push({ name: m.name, version: v });
  }
  return out;
}

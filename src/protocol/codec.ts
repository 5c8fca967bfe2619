// One generic encoder/decoder for every Kafka message, driven by the generated schema table.
// A schema and version compile once into a plan (which fields are present, which are tagged,
// classic or compact encodings, defaults); encode and decode then walk the plan.
import { limits } from '../util/index.js';
import { messageSchemas } from './generated/messages.js';
import { ProtocolError } from './errors.js';
import { Reader } from './reader.js';
import { Writer } from './writer.js';
import { inRange, type FieldSchema, type MessageSchema, type UnknownTaggedField } from './schema.js';

const enum Kind { Bool, Int8, Int16, Uint16, Int32, Uint32, Int64, Float64, String, Bytes, Records, Uuid, Struct }

const KINDS: Record<string, Kind> = {
  bool: Kind.Bool, int8: Kind.Int8, int16: Kind.Int16, uint16: Kind.Uint16, int32: Kind.Int32,
  uint32: Kind.Uint32, int64: Kind.Int64, float64: Kind.Float64, string: Kind.String, bytes: Kind.Bytes,
  records: Kind.Records, uuid: Kind.Uuid,
};

/** Smallest encoding of each kind, used to bound array lengths before allocating. */
const KIND_BYTES_MIN: Record<Kind, number> = {
  [Kind.Bool]: 1, [Kind.Int8]: 1, [Kind.Int16]: 2, [Kind.Uint16]: 2, [Kind.Int32]: 4, [Kind.Uint32]: 4,
  [Kind.Int64]: 8, [Kind.Float64]: 8, [Kind.String]: 1, [Kind.Bytes]: 1, [Kind.Records]: 1, [Kind.Uuid]: 16,
  [Kind.Struct]: 0,
};

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

interface FieldPlan {
  readonly name: string;
  readonly kind: Kind;
  readonly isArray: boolean;
  readonly nullable: boolean;
  /** Compact (varint) lengths: the version is flexible and the field does not opt out. */
  readonly compact: boolean;
  readonly tag: number;
  readonly schema: FieldSchema;
  /** Struct plan for struct kinds (filled lazily to allow recursive references). */
  struct: StructPlan | null;
  /** For arrays: the plan of one element (never null itself: Kafka has no nullable elements). */
  element: FieldPlan | null;
  readonly makeDefault: () => unknown;
}

export interface StructPlan {
  readonly all: readonly FieldPlan[];
  /** For each of `all`: 0 absent (default), 1 regular, 2 tagged. */
  readonly roles: Uint8Array;
  readonly regular: readonly FieldPlan[];
  readonly tagged: readonly FieldPlan[];
  readonly taggedByTag: ReadonlyMap<number, FieldPlan>;
  readonly flexible: boolean;
  bytesMin: number;
}

function defaultFor(f: FieldSchema, kind: Kind, isArray: boolean, nullable: boolean,
  structPlan: () => StructPlan | null): () => unknown {
  const d = f.default;
  if (isArray) return d === 'null' ? () => null : () => [];
  switch (kind) {
    case Kind.Bool: { const v = d !== undefined && d.toLowerCase() === 'true'; return () => v; }
    case Kind.Int8: case Kind.Int16: case Kind.Uint16: case Kind.Int32: case Kind.Uint32: case Kind.Float64: {
      const v = d === undefined ? 0 : Number(d); return () => v;
    }
    case Kind.Int64: { const v = d === undefined ? 0n : BigInt(d); return () => v; }
    case Kind.String: {
      // Kafka allows a null default only where every version of the field is nullable, and a
      // version without the field reads its default: Produce v0-2's transactionalId is null, not
      // the string "null".
      const v = d === 'null' && (nullable || f.nullable !== undefined) ? null : (d ?? ''); return () => v;
    }
    case Kind.Bytes: return d === 'null' ? () => null : () => Buffer.alloc(0);
    case Kind.Records: return () => null;
    case Kind.Uuid: return () => ZERO_UUID;
    case Kind.Struct:
      if (d === 'null' || d === 'None') return () => null;
      return () => decodeDefaults(structPlan()!);
  }
}

function decodeDefaults(plan: StructPlan): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  for (const f of plan.all) obj[f.name] = f.makeDefault();
  return obj;
}

class PlanCache {
  private readonly plans = new Map<string, StructPlan>();
  constructor(readonly message: MessageSchema) {}

  plan(structName: string | null, version: number): StructPlan {
    const key = `${structName ?? ''}@${version}`;
    let plan = this.plans.get(key);
    if (plan) return plan;
    const fields = structName === null ? this.message.fields : this.message.structs[structName];
    if (!fields) throw new ProtocolError(`${this.message.name}: unknown struct ${structName}`);
    const flexible = inRange(this.message.flexibleVersions, version);
    const all: FieldPlan[] = [];
    const roles = new Uint8Array(fields.length);
    const regular: FieldPlan[] = [];
    const tagged: FieldPlan[] = [];
    plan = { all, roles, regular, tagged, taggedByTag: new Map(), flexible, bytesMin: 0 };
    this.plans.set(key, plan); // before recursing: structs may refer to themselves
    fields.forEach((f, i) => {
      const isArray = f.type.startsWith('[]');
      const base = isArray ? f.type.slice(2) : f.type;
      const kind = f.struct !== undefined ? Kind.Struct : KINDS[base];
      if (kind === undefined) throw new ProtocolError(`${this.message.name}.${f.name}: unknown type ${f.type}`);
      const nullable = inRange(f.nullable, version);
      const compact = flexible && (f.flexible === undefined || inRange(f.flexible, version));
      const fp: FieldPlan = {
        name: f.name, kind, isArray, nullable, compact, tag: f.tag ?? -1, schema: f, struct: null, element: null,
        makeDefault: defaultFor(f, kind, isArray, nullable, () => fp.struct),
      };
      if (kind === Kind.Struct) fp.struct = this.plan(f.struct!, version);
      if (isArray) fp.element = { ...fp, isArray: false, nullable: false };
      all.push(fp);
      if (!inRange(f.versions, version)) roles[i] = 0;
      else if (flexible && f.tagged && inRange(f.tagged, version)) { roles[i] = 2; tagged.push(fp); }
      else { roles[i] = 1; regular.push(fp); }
    });
    tagged.sort((a, b) => a.tag - b.tag);
    for (const t of tagged) (plan.taggedByTag as Map<number, FieldPlan>).set(t.tag, t);
    let bytesMin = flexible ? 1 : 0;
    for (const f of regular) {
      bytesMin += f.isArray ? (f.compact ? 1 : 4)
        : f.kind === Kind.Struct ? (f.nullable ? 1 : f.struct!.bytesMin)
        : f.kind === Kind.String && !f.compact ? 2
        : (f.kind === Kind.Bytes || f.kind === Kind.Records) && !f.compact ? 4
        : KIND_BYTES_MIN[f.kind];
    }
    plan.bytesMin = bytesMin;
    return plan;
  }
}

// ---------------------------------------------------------------------------------------------
// Decoding

function readScalar(r: Reader, f: FieldPlan): unknown {
  switch (f.kind) {
    case Kind.Bool: return r.bool();
    case Kind.Int8: return r.int8();
    case Kind.Int16: return r.int16();
    case Kind.Uint16: return r.uint16();
    case Kind.Int32: return r.int32();
    case Kind.Uint32: return r.uint32();
    case Kind.Int64: return r.int64();
    case Kind.Float64: return r.float64();
    case Kind.Uuid: return r.uuid();
    case Kind.String: {
      const n = r.stringLength(f.compact);
      if (n < 0) {
        if (n === -1 && f.nullable) return null;
        throw new ProtocolError(`${f.name}: invalid string length ${n}`);
      }
      return r.utf8(n);
    }
    case Kind.Bytes: case Kind.Records: {
      const n = r.bytesLength(f.compact);
      if (n < 0) {
        if (n === -1 && (f.nullable || f.kind === Kind.Records)) return null;
        throw new ProtocolError(`${f.name}: invalid bytes length ${n}`);
      }
      return r.slice(n);
    }
    case Kind.Struct: {
      if (f.nullable) {
        const marker = r.int8();
        if (marker < 0) return null;
      }
      return readStruct(r, f.struct!);
    }
  }
}

function readField(r: Reader, f: FieldPlan): unknown {
  if (!f.isArray) return readScalar(r, f);
  const n = f.compact ? r.unsignedVarint() - 1 : r.int32();
  if (n < 0) {
    if (n === -1 && f.nullable) return null;
    throw new ProtocolError(`${f.name}: invalid array length ${n}`);
  }
  const elementBytesMin = f.kind === Kind.Struct ? f.struct!.bytesMin : f.kind === Kind.String && !f.compact ? 2
    : (f.kind === Kind.Bytes || f.kind === Kind.Records) && !f.compact ? 4 : KIND_BYTES_MIN[f.kind];
  if (elementBytesMin === 0 ? n > limits.emptyArrayElementsMax : n * elementBytesMin > r.remaining) {
    throw new ProtocolError(`${f.name}: array of ${n} elements cannot fit in ${r.remaining} bytes`);
  }
  const element = f.element!;
  const out = new Array(n);
  for (let i = 0; i < n; i++) out[i] = readScalar(r, element);
  return out;
}

function readTaggedSection(r: Reader, plan: StructPlan, obj: Record<string, unknown>): void {
  const count = r.unsignedVarint();
  if (count > r.remaining) throw new ProtocolError(`${count} tagged fields cannot fit in ${r.remaining} bytes`);
  let lastTag = -1;
  let unknown: UnknownTaggedField[] | undefined;
  for (let i = 0; i < count; i++) {
    const tag = r.unsignedVarint();
    if (tag <= lastTag) throw new ProtocolError(`tagged fields out of order: ${tag} after ${lastTag}`);
    lastTag = tag;
    const size = r.unsignedVarint();
    r.need(size);
    const f = plan.taggedByTag.get(tag);
    if (!f) {
      (unknown ??= []).push({ tag, data: r.slice(size) });
      continue;
    }
    const end = r.pos + size;
    const sub = new Reader(r.buf, r.pos, end);
    obj[f.name] = readField(sub, f);
    if (sub.pos !== end) throw new ProtocolError(`tagged field ${f.name}: ${end - sub.pos} bytes left over`);
    r.pos = end;
  }
  if (unknown) obj.unknownTaggedFields = unknown;
}

export function readStruct(r: Reader, plan: StructPlan): Record<string, unknown> {
  const obj: Record<string, unknown> = {};
  const { all, roles } = plan;
  for (let i = 0; i < all.length; i++) {
    const f = all[i]!;
    obj[f.name] = roles[i] === 1 ? readField(r, f) : f.makeDefault();
  }
  if (plan.flexible) readTaggedSection(r, plan, obj);
  return obj;
}

// ---------------------------------------------------------------------------------------------
// Encoding

function writeLength(w: Writer, n: number, compact: boolean, classicWidth: 2 | 4): void {
  if (compact) w.unsignedVarint(n + 1);
  else if (classicWidth === 2) w.int16(n);
  else w.int32(n);
}

function writeScalar(w: Writer, f: FieldPlan, v: unknown): void {
  switch (f.kind) {
    case Kind.Bool: w.bool(v as boolean); return;
    case Kind.Int8: w.int8(v as number); return;
    case Kind.Int16: w.int16(v as number); return;
    case Kind.Uint16: w.uint16(v as number); return;
    case Kind.Int32: w.int32(v as number); return;
    case Kind.Uint32: w.uint32(v as number); return;
    case Kind.Int64: w.int64(v as bigint); return;
    case Kind.Float64: w.float64(v as number); return;
    case Kind.Uuid: {
      const b = Buffer.from(v as string, 'base64url');
      if (b.length !== 16) throw new ProtocolError(`${f.name}: not a UUID: ${String(v)}`);
      w.bytes(b);
      return;
    }
    case Kind.String: {
      if (v === null || v === undefined) {
        if (!f.nullable) throw new ProtocolError(`${f.name}: null in a non-nullable string`);
        writeLength(w, -1, f.compact, 2);
        return;
      }
      const s = v as string;
      const n = Buffer.byteLength(s, 'utf8');
      if (!f.compact && n > 0x7fff) throw new ProtocolError(`${f.name}: string of ${n} bytes exceeds int16`);
      writeLength(w, n, f.compact, 2);
      w.utf8(s);
      return;
    }
    case Kind.Bytes: case Kind.Records: {
      if (v === null || v === undefined) {
        if (!f.nullable && f.kind !== Kind.Records) throw new ProtocolError(`${f.name}: null in non-nullable bytes`);
        writeLength(w, -1, f.compact, 4);
        return;
      }
      const b = v as Uint8Array;
      writeLength(w, b.length, f.compact, 4);
      w.bytes(b);
      return;
    }
    case Kind.Struct:
      if (f.nullable) {
        if (v === null || v === undefined) { w.int8(-1); return; }
        w.int8(1);
      } else if (v === null || v === undefined) {
        throw new ProtocolError(`${f.name}: null in a non-nullable struct`);
      }
      writeStruct(w, f.struct!, v as Record<string, unknown>);
  }
}

function writeField(w: Writer, f: FieldPlan, v: unknown): void {
  if (!f.isArray) { writeScalar(w, f, v); return; }
  if (v === null || v === undefined) {
    if (!f.nullable) throw new ProtocolError(`${f.name}: null in a non-nullable array`);
    writeLength(w, -1, f.compact, 4);
    return;
  }
  const arr = v as unknown[];
  writeLength(w, arr.length, f.compact, 4);
  const element = f.element!;
  for (let i = 0; i < arr.length; i++) writeScalar(w, element, arr[i]);
}

function isDefaultValue(f: FieldPlan, v: unknown): boolean {
  const d = f.makeDefault();
  if (v === d) return true;
  if (v === null || d === null || v === undefined) return v === d || (v === undefined && d === null);
  if (Array.isArray(v)) return Array.isArray(d) && v.length === 0 && d.length === 0;
  if (Buffer.isBuffer(v)) return Buffer.isBuffer(d) && v.equals(d);
  if (typeof v === 'object') return deepEqual(v, d);
  return false;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  const ka = Object.keys(a as object).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function writeTaggedSection(w: Writer, plan: StructPlan, obj: Record<string, unknown>): void {
  const unknown = obj.unknownTaggedFields as UnknownTaggedField[] | undefined;
  const entries: { tag: number; data: Buffer }[] = [];
  for (const f of plan.tagged) {
    const v = obj[f.name];
    if (v === undefined || isDefaultValue(f, v)) continue;
    const sub = new Writer(64);
    writeField(sub, f, v);
    entries.push({ tag: f.tag, data: sub.toBuffer() });
  }
  if (unknown) {
    for (const u of unknown) {
      if (plan.taggedByTag.has(u.tag)) throw new ProtocolError(`unknown tagged field ${u.tag} is a known tag`);
      entries.push(u);
    }
    entries.sort((a, b) => a.tag - b.tag);
  }
  w.unsignedVarint(entries.length);
  for (const e of entries) {
    w.unsignedVarint(e.tag);
    w.unsignedVarint(e.data.length);
    w.bytes(e.data);
  }
}

export function writeStruct(w: Writer, plan: StructPlan, obj: Record<string, unknown>): void {
  const { regular } = plan;
  for (let i = 0; i < regular.length; i++) {
    const f = regular[i]!;
    let v = obj[f.name];
    // A missing field in a caller's object takes the schema default (handlers fill only what matters).
    if (v === undefined) v = f.makeDefault();
    writeField(w, f, v);
  }
  if (plan.flexible) writeTaggedSection(w, plan, obj);
}

// ---------------------------------------------------------------------------------------------
// Public entry points

const caches = new Map<string, PlanCache>();

export function schemaOf(name: string): MessageSchema {
  const s = messageSchemas[name];
  if (!s) throw new ProtocolError(`unknown message ${name}`);
  return s;
}

export function planFor(name: string, version: number): StructPlan {
  let cache = caches.get(name);
  if (!cache) {
    cache = new PlanCache(schemaOf(name));
    caches.set(name, cache);
  }
  if (!inRange(cache.message.validVersions, version)) {
    throw new ProtocolError(`${name} has no version ${version}`);
  }
  return cache.plan(null, version);
}

/** Decodes one message body at r.pos; the reader is left after it. */
export function decodeMessage<T = Record<string, unknown>>(name: string, version: number, r: Reader): T {
  return readStruct(r, planFor(name, version)) as T;
}

/** Encodes one message body into w. Fields absent from `version` are not written. */
export function encodeMessage(name: string, version: number, value: object, w: Writer): void {
  writeStruct(w, planFor(name, version), value as Record<string, unknown>);
}

/** Convenience: a whole value to one buffer. */
export function encodeToBuffer(name: string, version: number, value: object): Buffer {
  const w = new Writer();
  encodeMessage(name, version, value, w);
  return w.toBuffer();
}

/** Convenience: a whole buffer to a value; trailing bytes are an error. */
export function decodeFromBuffer<T = Record<string, unknown>>(name: string, version: number, buf: Buffer): T {
  const r = new Reader(buf);
  const v = decodeMessage<T>(name, version, r);
  if (r.remaining !== 0) throw new ProtocolError(`${name} v${version}: ${r.remaining} trailing bytes`);
  return v;
}

/** The value a decoder gives for a message whose every field is absent or default. */
export function defaultMessage<T = Record<string, unknown>>(name: string, version: number): T {
  return decodeDefaults(planFor(name, version)) as T;
}

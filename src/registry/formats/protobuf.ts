// PROTOBUF: proto2 and proto3 files parsed by protobufjs, given as .proto text or, as
// confluent-kafka-python's serializer sends them, as a base64 FileDescriptorProto. Either way the
// file is printed back as .proto text, which is the canonical form (comments and layout dropped,
// so two spellings of one file are one schema). Imports are the references: each reference's file
// is parsed into the same root under its import name, so the file's types resolve; the well-known
// google/protobuf/* files need no reference.
//
// Compatibility is Confluent's Protobuf diff: the old file against the new one, message by
// message, field by field number, yielding differences that are compatible (FIELD_ADDED,
// FIELD_REMOVED, FIELD_NAME_CHANGED, ENUM_CONST_*, MESSAGE_ADDED, ONEOF_ADDED, ...) or not
// (FIELD_KIND_CHANGED, FIELD_SCALAR_KIND_CHANGED, FIELD_NAMED_TYPE_CHANGED, REQUIRED_FIELD_*,
// ONEOF_FIELD_REMOVED, MULTIPLE_FIELDS_MOVED_TO_ONEOF, PACKAGE_CHANGED, ...). Scalars are grouped
// by wire encoding as protobuf's own guide does (int32/int64/uint32/uint64/bool/enum are one
// group, sint32/sint64 another, ...). Reserved numbers follow Confluent's ReservedNumbers helper:
// a number the old file reserved may not carry a field in the new one, nor stop being reserved.
import protobuf from 'protobufjs';
import descriptorExt from 'protobufjs/ext/descriptor/index.js';
import { limits } from '../../util/index.js';
import { SchemaParseError, StepBudget, type ParsedSchema, type ResolvedReference } from './schema.js';

type Root = protobuf.Root;
type PType = protobuf.Type;
type PEnum = protobuf.Enum;
type PField = protobuf.Field;

/** protobufjs keeps these on fields without typing them: the label and, for a map, its key type. */
const ruleOf = (f: PField): string | undefined => (f as unknown as { rule?: string }).rule;
const keyTypeOf = (f: PField): string => (f as unknown as { keyType?: string }).keyType ?? '';

export const PROTOBUF_COMPATIBLE_CHANGES: ReadonlySet<string> = new Set([
  'MESSAGE_ADDED', 'MESSAGE_MOVED', 'ENUM_ADDED', 'ENUM_REMOVED', 'ENUM_CONST_ADDED', 'ENUM_CONST_CHANGED', 'ENUM_CONST_REMOVED',
  'FIELD_ADDED', 'FIELD_REMOVED', 'FIELD_NAME_CHANGED', 'FIELD_STRING_OR_BYTES_LABEL_CHANGED', 'ONEOF_ADDED', 'ONEOF_REMOVED', 'ONEOF_FIELD_ADDED',
]);

const SCALAR_KINDS: Record<string, string> = {
  int32: 'GENERAL_NUMBER', int64: 'GENERAL_NUMBER', uint32: 'GENERAL_NUMBER', uint64: 'GENERAL_NUMBER', bool: 'GENERAL_NUMBER',
  sint32: 'SIGNED_NUMBER', sint64: 'SIGNED_NUMBER', string: 'STRING_OR_BYTES', bytes: 'STRING_OR_BYTES',
  fixed32: 'FIXED32', sfixed32: 'FIXED32', fixed64: 'FIXED64', sfixed64: 'FIXED64', float: 'FLOAT', double: 'DOUBLE',
};

/** One parsed .proto file: its package, imports, syntax and its own top-level types (in file order). */
interface ProtoFile { syntax: string; packageName: string; imports: string[]; options: Record<string, unknown>; types: (PType | PEnum)[]; root: Root }

// ---- printing ----------------------------------------------------------------------------------

const optionValue = (v: unknown): string => (typeof v === 'string' ? JSON.stringify(v) : String(v));
const isSyntheticOneof = (o: protobuf.OneOf) => o.fieldsArray.length === 1 && o.fieldsArray[0]!.options?.proto3_optional === true;

function printReserved(reserved: (number[] | string)[] | undefined, indent: string): string[] {
  if (!reserved || reserved.length === 0) return [];
  const numbers = reserved.filter((r): r is number[] => Array.isArray(r)).map(([a, b]) => (a === b ? `${a}` : b === 0x1fffffff || b === 0x7fffffff ? `${a} to max` : `${a} to ${b}`));
  const names = reserved.filter((r): r is string => typeof r === 'string').map((n) => JSON.stringify(n));
  return [...(numbers.length ? [`${indent}reserved ${numbers.join(', ')};`] : []), ...(names.length ? [`${indent}reserved ${names.join(', ')};`] : [])];
}

function printField(f: PField, syntax: string, indent: string, inOneof: boolean): string {
  const opts = Object.entries(f.options ?? {}).filter(([k]) => k !== 'proto3_optional').map(([k, v]) => `${k} = ${optionValue(v)}`);
  const options = opts.length ? ` [${opts.join(', ')}]` : '';
  if (f.map) return `${indent}map<${keyTypeOf(f)}, ${f.type}> ${f.name} = ${f.id}${options};`;
  const label = inOneof ? '' : ruleOf(f) === 'repeated' ? 'repeated ' : ruleOf(f) === 'required' ? 'required '
    : f.options?.proto3_optional === true || (syntax === 'proto2') ? 'optional ' : '';
  return `${indent}${label}${f.type} ${f.name} = ${f.id}${options};`;
}

function printEnum(e: PEnum, indent: string): string[] {
  const inner = `${indent}  `;
  const options = Object.entries(e.options ?? {}).map(([k, v]) => `${inner}option ${k} = ${optionValue(v)};`);
  const values = Object.entries(e.values).map(([name, n]) => `${inner}${name} = ${n};`);
  return [`${indent}enum ${e.name} {`, ...options, ...printReserved(e.reserved as never, inner), ...values, `${indent}}`];
}

function printMessage(t: PType, syntax: string, indent: string, sortFields: boolean): string[] {
  const inner = `${indent}  `;
  const options = Object.entries(t.options ?? {}).map(([k, v]) => `${inner}option ${k} = ${optionValue(v)};`);
  const byNumber = (a: PField, b: PField) => (sortFields ? a.id - b.id : 0);
  const plain = t.fieldsArray.filter((f) => !f.partOf || isSyntheticOneof(f.partOf)).sort(byNumber).map((f) => printField(f, syntax, inner, false));
  const oneofs = t.oneofsArray.filter((o) => !isSyntheticOneof(o)).flatMap((o) => [
    `${inner}oneof ${o.name} {`, ...o.fieldsArray.slice().sort(byNumber).map((f) => printField(f, syntax, `${inner}  `, true)), `${inner}}`,
  ]);
  const nested = t.nestedArray.flatMap((n) => (n instanceof protobuf.Type ? printMessage(n, syntax, inner, sortFields) : n instanceof protobuf.Enum ? printEnum(n, inner) : []));
  return [`${indent}message ${t.name} {`, ...options, ...printReserved(t.reserved as never, inner), ...plain, ...oneofs, ...nested, `${indent}}`];
}

function printFile(file: ProtoFile, normalize: boolean): string {
  const imports = normalize ? [...file.imports].sort() : file.imports;
  const options = Object.entries(file.options).sort(normalize ? ([a], [b]) => (a < b ? -1 : 1) : () => 0);
  const lines = [
    `syntax = "${file.syntax}";`, ...(file.packageName ? [`package ${file.packageName};`] : []),
    ...imports.map((i) => `import ${JSON.stringify(i)};`), ...options.map(([k, v]) => `option ${k} = ${optionValue(v)};`),
    ...file.types.flatMap((t) => (t instanceof protobuf.Type ? printMessage(t, file.syntax, '', normalize) : printEnum(t as PEnum, ''))),
  ];
  return `${lines.join('\n')}\n`;
}

// ---- parsing -----------------------------------------------------------------------------------

const SYNTAX_RE = /^\s*syntax\s*=\s*["'](proto[23])["']\s*;/m;

/** .proto text as is; a base64 FileDescriptorProto (what confluent-kafka-python sends) printed back to text. */
function protoText(text: string): string {
  if (/\b(message|syntax|enum|package|import)\b/.test(text) || !/^[A-Za-z0-9+/=\s]+$/.test(text)) return text;
  let fdp: Record<string, unknown>;
  try {
    fdp = descriptorExt.FileDescriptorProto.decode(Buffer.from(text, 'base64')) as unknown as Record<string, unknown>;
  } catch (e) {
    throw new SchemaParseError(`Invalid schema: neither .proto text nor a FileDescriptorProto (${e instanceof Error ? e.message : String(e)})`);
  }
  const root = (protobuf.Root as unknown as { fromDescriptor(d: object): Root }).fromDescriptor({ file: [fdp] });
  const packageName = typeof fdp.package === 'string' ? fdp.package : '';
  const ns = packageName ? root.lookup(packageName) as protobuf.Namespace | null : root;
  const types = (ns?.nestedArray ?? []).filter((n): n is PType | PEnum => n instanceof protobuf.Type || n instanceof protobuf.Enum);
  const syntax = fdp.syntax === 'proto3' ? 'proto3' : 'proto2';
  return printFile({ syntax, packageName, imports: (fdp.dependency as string[] | undefined) ?? [], options: {}, types, root }, false);
}

function parseInto(root: Root, text: string): ProtoFile {
  const before = new Set<unknown>();
  const source = protoText(text);
  let parsed: protobuf.IParserResult;
  try {
    const pkgBefore = (r: Root, pkg: string) => ((pkg ? r.lookup(pkg) : r) as protobuf.Namespace | null)?.nestedArray ?? [];
    const pkg = /^\s*package\s+([\w.]+)\s*;/m.exec(source)?.[1] ?? '';
    for (const n of pkgBefore(root, pkg)) before.add(n);
    parsed = protobuf.parse(source, root, { keepCase: true });
  } catch (e) {
    throw new SchemaParseError(`Invalid schema: ${e instanceof Error ? e.message : String(e)}`);
  }
  const packageName = parsed.package ?? '';
  const ns = (packageName ? root.lookup(packageName) : root) as protobuf.Namespace | null;
  const types = (ns?.nestedArray ?? []).filter((n): n is PType | PEnum => (n instanceof protobuf.Type || n instanceof protobuf.Enum) && !before.has(n));
  const syntax = SYNTAX_RE.exec(source)?.[1] ?? 'proto2';
  const options = Object.fromEntries(Object.entries((ns === root ? root.options : (root.options ?? ns?.options)) ?? {}));
  return { syntax, packageName, imports: [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])], options, types, root };
}

/** protobufjs's copies of the well-known types (google/protobuf/timestamp.proto, ...), which need no reference. */
function addWellKnown(root: Root, imports: string[]): void {
  for (const name of imports) {
    if (!name.startsWith('google/protobuf/')) continue;
    const json = (protobuf.common as unknown as { get(n: string): { nested?: object } | null }).get(name);
    if (json?.nested) root.addJSON(json.nested as never);
  }
}

// ---- the diff ----------------------------------------------------------------------------------

export interface ProtobufDifference { type: string; path: string }

class Diff {
  readonly differences: ProtobufDifference[] = [];
  private readonly path: string[] = [];
  private readonly visiting = new Set<string>();
  private readonly budget = new StepBudget(limits.registryCompatibilityStepsMax);
  add(type: string): void { this.differences.push({ type, path: `#/${this.path.join('/')}` }); }
  within(part: string, fn: () => void): void { this.path.push(part); try { fn(); } finally { this.path.pop(); } }

  compareTypes(original: (PType | PEnum)[], update: (PType | PEnum)[]): void {
    this.budget.take();
    const messages = (xs: (PType | PEnum)[]) => new Map(xs.filter((x): x is PType => x instanceof protobuf.Type).map((m, i) => [m.name, { m, i }]));
    const enums = (xs: (PType | PEnum)[]) => new Map(xs.filter((x): x is PEnum => x instanceof protobuf.Enum).map((e) => [e.name, e]));
    const om = messages(original);
    const um = messages(update);
    for (const name of new Set([...om.keys(), ...um.keys()])) {
      this.within(name, () => {
        const a = om.get(name);
        const b = um.get(name);
        if (!b) this.add('MESSAGE_REMOVED');
        else if (!a) this.add('MESSAGE_ADDED');
        else {
          this.compareMessages(a.m, b.m);
          if (a.i !== b.i) this.add('MESSAGE_MOVED');
        }
      });
    }
    const oe = enums(original);
    const ue = enums(update);
    for (const name of new Set([...oe.keys(), ...ue.keys()])) {
      this.within(name, () => {
        const a = oe.get(name);
        const b = ue.get(name);
        if (!b) this.add('ENUM_REMOVED');
        else if (!a) this.add('ENUM_ADDED');
        else this.compareEnums(a, b);
      });
    }
  }

  compareEnums(a: PEnum, b: PEnum): void {
    const av = new Map(Object.entries(a.values).map(([k, v]) => [v, k]));
    const bv = new Map(Object.entries(b.values).map(([k, v]) => [v, k]));
    for (const n of new Set([...av.keys(), ...bv.keys()])) {
      this.within(String(n), () => {
        if (!bv.has(n)) this.add('ENUM_CONST_REMOVED');
        else if (!av.has(n)) this.add('ENUM_CONST_ADDED');
        else if (av.get(n) !== bv.get(n)) this.add('ENUM_CONST_CHANGED');
      });
    }
  }

  compareMessages(a: PType, b: PType): void {
    this.budget.take();
    const key = `${a.fullName}|${b.fullName}`;
    if (this.visiting.has(key)) return;
    this.visiting.add(key);
    try {
      this.compareFields(a, b);
      this.compareReserved(a, b);
      this.compareTypes(nestedTypes(a), nestedTypes(b));
    } finally {
      this.visiting.delete(key);
    }
  }

  private compareFields(a: PType, b: PType): void {
    const oneofOf = (f: PField) => (f.partOf && !isSyntheticOneof(f.partOf) ? f.partOf.name : null);
    const topA = new Map(a.fieldsArray.filter((f) => oneofOf(f) === null).map((f) => [f.id, f]));
    const topB = new Map(b.fieldsArray.filter((f) => oneofOf(f) === null).map((f) => [f.id, f]));
    const allA = new Map(a.fieldsArray.map((f) => [f.id, f]));
    const allB = new Map(b.fieldsArray.map((f) => [f.id, f]));
    const oneofsA = new Map(a.oneofsArray.filter((o) => !isSyntheticOneof(o)).map((o) => [o.name, o]));
    const oneofsB = new Map(b.oneofsArray.filter((o) => !isSyntheticOneof(o)).map((o) => [o.name, o]));
    const inOneofA = new Set(a.fieldsArray.filter((f) => oneofOf(f) !== null).map((f) => f.id));
    for (const o of oneofsB.values()) {
      this.within(o.name, () => {
        let moved = 0;
        let existing = 0;
        for (const f of o.fieldsArray) {
          // A top-level field moved into a oneof is not a removed field.
          if (topA.delete(f.id)) moved++;
          else if (inOneofA.has(f.id)) existing++;
        }
        if (moved > 1) this.add('MULTIPLE_FIELDS_MOVED_TO_ONEOF');
        else if (moved === 1 && existing > 0) this.add('FIELD_MOVED_TO_EXISTING_ONEOF');
      });
    }
    for (const name of new Set([...oneofsA.keys(), ...oneofsB.keys()])) {
      this.within(name, () => {
        const x = oneofsA.get(name);
        const y = oneofsB.get(name);
        if (!y) this.add('ONEOF_REMOVED');
        else if (!x) this.add('ONEOF_ADDED');
        else {
          const xs = new Set(x.fieldsArray.map((f) => f.id));
          const ys = new Set(y.fieldsArray.map((f) => f.id));
          for (const id of ys) if (!xs.has(id)) this.within(String(id), () => this.add('ONEOF_FIELD_ADDED'));
          for (const id of xs) if (!ys.has(id)) this.within(String(id), () => this.add('ONEOF_FIELD_REMOVED'));
          for (const f of x.fieldsArray) { const g = y.fieldsArray.find((h) => h.id === f.id); if (g) this.within(String(f.id), () => this.compareField(f, g)); }
        }
      });
    }
    for (const id of new Set([...topA.keys(), ...topB.keys()])) {
      this.within(String(id), () => {
        const f = topA.get(id);
        const g = topB.get(id);
        if (!g) this.add(ruleOf(f!) === 'required' ? 'REQUIRED_FIELD_REMOVED' : 'FIELD_REMOVED');
        else if (!f) this.add(ruleOf(g) === 'required' ? 'REQUIRED_FIELD_ADDED' : 'FIELD_ADDED');
        else this.compareField(f, g);
      });
    }
    // Fields whose oneof changed (moved in or out, or the oneof renamed) are compared by number too.
    for (const id of [...allA.keys()].filter((i) => allB.has(i)).sort((x, y) => x - y)) {
      const f = allA.get(id)!;
      const g = allB.get(id)!;
      const same = (oneofOf(f) === null && oneofOf(g) === null) || (oneofOf(f) !== null && oneofOf(f) === oneofOf(g));
      if (!same) this.within(String(id), () => this.compareField(f, g));
    }
  }

  private compareField(f: PField, g: PField): void {
    if (f.name !== g.name) this.add('FIELD_NAME_CHANGED');
    this.compareFieldTypes(f, g);
    const repeatedF = ruleOf(f) === 'repeated';
    const repeatedG = ruleOf(g) === 'repeated';
    if (repeatedF !== repeatedG && !f.map && !g.map) {
      const kind = SCALAR_KINDS[f.type];
      if (kind === 'STRING_OR_BYTES') this.add('FIELD_STRING_OR_BYTES_LABEL_CHANGED');
      else if (kind !== undefined || f.resolvedType instanceof protobuf.Enum) this.add('FIELD_NUMERIC_LABEL_CHANGED');
    }
  }

  private compareFieldTypes(f: PField, g: PField): void {
    const kind = (x: PField) => (x.map ? 'MAP' : SCALAR_KINDS[x.type] !== undefined || x.resolvedType instanceof protobuf.Enum ? 'SCALAR' : 'MESSAGE');
    if (kind(f) !== kind(g)) { this.add('FIELD_KIND_CHANGED'); return; }
    if (kind(f) === 'MAP') {
      if (keyTypeOf(f) !== keyTypeOf(g) && SCALAR_KINDS[keyTypeOf(f)] !== SCALAR_KINDS[keyTypeOf(g)]) this.add('FIELD_SCALAR_KIND_CHANGED');
    }
    const scalar = (x: PField) => (x.resolvedType instanceof protobuf.Enum ? 'GENERAL_NUMBER' : SCALAR_KINDS[x.type]);
    if (scalar(f) !== undefined || scalar(g) !== undefined) {
      if (scalar(f) !== scalar(g)) this.add(scalar(f) === undefined || scalar(g) === undefined ? 'FIELD_KIND_CHANGED' : 'FIELD_SCALAR_KIND_CHANGED');
      return;
    }
    const a = f.resolvedType;
    const b = g.resolvedType;
    if (!(a instanceof protobuf.Type) || !(b instanceof protobuf.Type)) {
      if (f.type !== g.type) this.add('FIELD_NAMED_TYPE_CHANGED');
      return;
    }
    if (localName(a) !== localName(b)) { this.add('FIELD_NAMED_TYPE_CHANGED'); return; }
    const before = this.differences.length;
    this.compareMessages(a, b);
    if (this.differences.slice(before).some((d) => !PROTOBUF_COMPATIBLE_CHANGES.has(d.type))) this.add('FIELD_NAMED_TYPE_CHANGED');
  }

  private compareReserved(a: PType, b: PType): void {
    const ranges = (t: PType) => ((t.reserved ?? []) as (number[] | string)[]).filter((r): r is number[] => Array.isArray(r));
    const reservedIn = (t: PType, n: number) => ranges(t).some(([x, y]) => n >= x! && n <= y!);
    for (const f of b.fieldsArray) if (reservedIn(a, f.id)) this.within(String(f.id), () => this.add('FIELD_NUMBER_RESERVED_IN_ORIGINAL'));
    for (const [x, y] of ranges(a)) {
      if (!ranges(b).some(([p, q]) => p! <= x! && q! >= y!)) this.within('reserved', () => this.add('RESERVED_NUMBER_REMOVED'));
    }
  }
}

const nestedTypes = (t: PType): (PType | PEnum)[] => t.nestedArray.filter((n): n is PType | PEnum => n instanceof protobuf.Type || n instanceof protobuf.Enum);

/** A message's name within its package (what Confluent compares: moving between packages changes the type). */
function localName(t: PType): string {
  const parts: string[] = [];
  let at: protobuf.ReflectionObject | null = t;
  while (at && at instanceof protobuf.Type) { parts.unshift(at.name); at = at.parent; }
  return parts.join('.');
}

/** protobufjs writes a field's message or enum type relative to its scope; descriptors name it fully (".pkg.Type"). */
function qualifyFieldTypes(m: Record<string, unknown>, t: PType): void {
  for (const f of (m.field ?? []) as Record<string, unknown>[]) {
    const resolved = t.fields[f.name as string]?.resolvedType;
    if (resolved) f.typeName = resolved.fullName.startsWith('.') ? resolved.fullName : `.${resolved.fullName}`;
  }
  for (const n of (m.nestedType ?? []) as Record<string, unknown>[]) {
    const nested = t.nested?.[n.name as string];
    if (nested instanceof protobuf.Type) qualifyFieldTypes(n, nested);
  }
}

// ---- the parsed schema -------------------------------------------------------------------------

export class ProtobufSchema implements ParsedSchema {
  readonly schemaType = 'PROTOBUF' as const;
  readonly canonical: string;
  private constructor(private readonly file: ProtoFile) {
    this.canonical = printFile(file, false);
  }

  static parse(text: string, references: readonly ResolvedReference[] = []): ProtobufSchema {
    const root = new protobuf.Root();
    const loaded = new Set<string>();
    const load = (refs: readonly ResolvedReference[], depth: number) => {
      if (depth > limits.registryReferencesDepthMax) throw new SchemaParseError('Invalid schema: references nest too deep');
      for (const r of refs) {
        if (loaded.has(r.name)) continue;
        loaded.add(r.name);
        load(r.references, depth + 1);
        if (r.schemaType !== 'PROTOBUF') throw new SchemaParseError(`Invalid schema: reference ${r.name} is ${r.schemaType}, not PROTOBUF`);
        const f = parseInto(root, r.schema);
        addWellKnown(root, f.imports);
      }
    };
    load(references, 0);
    const file = parseInto(root, text);
    addWellKnown(root, file.imports);
    const missing = file.imports.filter((i) => !i.startsWith('google/protobuf/') && !loaded.has(i));
    if (missing.length > 0) throw new SchemaParseError(`Invalid schema: import ${missing.map((m) => JSON.stringify(m)).join(', ')} has no reference`);
    try {
      root.resolveAll();
    } catch (e) {
      throw new SchemaParseError(`Invalid schema: ${e instanceof Error ? e.message : String(e)}`);
    }
    return new ProtobufSchema(file);
  }

  normalized(): string {
    return printFile(this.file, true);
  }

  /**
   * Confluent's `format=serialized`: this file as a base64 FileDescriptorProto (what Confluent's
   * Protobuf deserializers read), its type names fully qualified, its imports as dependencies.
   */
  serialized(): string {
    const set = (this.file.root as unknown as { toDescriptor(syntax: string): { file: Record<string, unknown>[] } }).toDescriptor(this.file.syntax);
    const own = new Set(this.file.types.map((t) => t.name));
    const file = set.file.find((f) => (f.package ?? '') === this.file.packageName) ?? { messageType: [], enumType: [] };
    const messages = ((file.messageType ?? []) as Record<string, unknown>[]).filter((m) => own.has(m.name as string));
    const byName = new Map(this.file.types.map((t) => [t.name, t]));
    for (const m of messages) qualifyFieldTypes(m, byName.get(m.name as string) as PType);
    const out = {
      name: `${this.recordName() ?? 'schema'}.proto`, ...(this.file.packageName ? { package: this.file.packageName } : {}),
      dependency: this.file.imports, messageType: messages,
      enumType: ((file.enumType ?? []) as Record<string, unknown>[]).filter((e) => own.has(e.name as string)),
      syntax: this.file.syntax,
    };
    return Buffer.from(descriptorExt.FileDescriptorProto.encode(descriptorExt.FileDescriptorProto.fromObject(out as never)).finish()).toString('base64');
  }

  /**
   * Confluent's framing after the schema id: the message's place in the file as zigzag varints (a
   * count, then an index per nesting level; a count of 0 means the first message), then the
   * message. Shown as Protobuf's JSON mapping does: 64-bit integers and bytes as strings.
   */
  decode(payload: Buffer): unknown {
    const reader = protobuf.Reader.create(payload);
    const count = reader.sint32();
    if (count < 0 || count > limits.registryReferencesDepthMax) throw new Error(`${count} message indexes`);
    const path = count === 0 ? [0] : Array.from({ length: count }, () => reader.sint32());
    let candidates = this.file.types.filter((t): t is PType => t instanceof protobuf.Type);
    let type: PType | undefined;
    for (const index of path) {
      type = candidates[index];
      if (type === undefined) throw new Error(`no message at index ${path.join('.')}`);
      candidates = type.nestedArray.filter((t): t is PType => t instanceof protobuf.Type);
    }
    const message = type!.decode(payload.subarray(reader.pos));
    return type!.toObject(message, { longs: String, enums: String, bytes: String });
  }

  recordName(): string | null {
    const first = this.file.types.find((t): t is PType => t instanceof protobuf.Type);
    return first === undefined ? null : first.fullName.replace(/^\./, '');
  }

  /** Confluent's diff of the old file (original) against this one (update). */
  differencesFrom(previous: ProtobufSchema): ProtobufDifference[] {
    const diff = new Diff();
    if (previous.file.packageName !== this.file.packageName) diff.add('PACKAGE_CHANGED');
    diff.compareTypes(previous.file.types, this.file.types);
    return diff.differences;
  }

  backwardIncompatibilities(previous: ParsedSchema): string[] {
    if (!(previous instanceof ProtobufSchema)) return ['Incompatible because of different schema type'];
    return this.differencesFrom(previous).filter((d) => !PROTOBUF_COMPATIBLE_CHANGES.has(d.type))
      .map((d) => `{errorType:'${d.type}', description:'Found incompatible change: ${d.type} at path '${d.path}''}`);
  }
}

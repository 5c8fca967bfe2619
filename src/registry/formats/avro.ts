// AVRO: the schema is checked by avsc (the Avro library most Node clients use, so what it refuses
// a serializer would refuse too), then read into a small tree of our own with every name resolved.
// The tree gives the canonical form (the compact JSON Avro's Schema.toString writes, which is what
// Confluent's registry stores and compares) and the normalized form (every name fully qualified,
// custom properties in key order), and it is what the reader/writer check walks: the Avro
// specification's schema-resolution rules, reported with the incompatibility types of Avro's
// SchemaCompatibility that Confluent's AvroCompatibilityChecker passes on.
import avro from 'avsc';
import { limits } from '../../util/index.js';
import { SchemaParseError, StepBudget, plainData, type ParsedSchema, type ResolvedReference } from './schema.js';

const PRIMITIVES = new Set(['null', 'boolean', 'int', 'long', 'float', 'double', 'bytes', 'string']);
type Primitive = 'null' | 'boolean' | 'int' | 'long' | 'float' | 'double' | 'bytes' | 'string';

interface Named { name: string; aliases: string[]; doc?: string; props: Record<string, unknown> }
export interface AvroField { name: string; type: AvroNode; aliases: string[]; doc?: string; default?: unknown; hasDefault: boolean; order?: string; props: Record<string, unknown> }
export type AvroNode =
  | { kind: 'primitive'; type: Primitive; props: Record<string, unknown> }
  | ({ kind: 'record'; fields: AvroField[]; recordType: 'record' | 'error' } & Named)
  | ({ kind: 'enum'; symbols: string[]; default?: string } & Named)
  | ({ kind: 'fixed'; size: number } & Named)
  | { kind: 'array'; items: AvroNode; props: Record<string, unknown> }
  | { kind: 'map'; values: AvroNode; props: Record<string, unknown> }
  | { kind: 'union'; branches: AvroNode[] };

const RESERVED: Record<string, Set<string>> = {
  record: new Set(['type', 'name', 'namespace', 'doc', 'fields', 'aliases']),
  enum: new Set(['type', 'name', 'namespace', 'doc', 'symbols', 'aliases', 'default']),
  fixed: new Set(['type', 'name', 'namespace', 'doc', 'size', 'aliases']),
  array: new Set(['type', 'items']),
  map: new Set(['type', 'values']),
  primitive: new Set(['type']),
  field: new Set(['name', 'type', 'doc', 'default', 'order', 'aliases']),
};

function propsOf(json: Record<string, unknown>, reserved: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(json)) if (!reserved.has(k)) out[k] = v;
  return out;
}

const qualify = (name: string, namespace: string): string => (name.includes('.') || namespace === '' ? name : `${namespace}.${name}`);
const namespaceOf = (full: string): string => (full.includes('.') ? full.slice(0, full.lastIndexOf('.')) : '');
const simpleName = (full: string): string => full.slice(full.lastIndexOf('.') + 1);

/** Reads validated Avro JSON into the tree; named types go into `names` (shared with the references). */
class TreeBuilder {
  constructor(private readonly names: Map<string, AvroNode>, private readonly budget: StepBudget) {}

  build(json: unknown, namespace: string): AvroNode {
    this.budget.take();
    if (typeof json === 'string') return this.byName(json, namespace, {});
    if (Array.isArray(json)) return { kind: 'union', branches: json.map((b) => this.build(b, namespace)) };
    if (json === null || typeof json !== 'object') throw new SchemaParseError(`not an Avro schema: ${JSON.stringify(json)}`);
    const o = json as Record<string, unknown>;
    const type = o.type;
    if (typeof type !== 'string') return this.build(type, namespace);
    switch (type) {
      case 'record': case 'error': return this.record(o, type, namespace);
      case 'enum': return this.named(o, namespace, (base) => ({ kind: 'enum', ...base, symbols: o.symbols as string[], ...(typeof o.default === 'string' ? { default: o.default } : {}) }));
      case 'fixed': return this.named(o, namespace, (base) => ({ kind: 'fixed', ...base, size: o.size as number }));
      case 'array': return { kind: 'array', items: this.build(o.items, namespace), props: propsOf(o, RESERVED.array!) };
      case 'map': return { kind: 'map', values: this.build(o.values, namespace), props: propsOf(o, RESERVED.map!) };
      default: return this.byName(type, namespace, propsOf(o, RESERVED.primitive!));
    }
  }

  private byName(name: string, namespace: string, props: Record<string, unknown>): AvroNode {
    if (PRIMITIVES.has(name)) return { kind: 'primitive', type: name as Primitive, props };
    const found = this.names.get(qualify(name, namespace)) ?? this.names.get(name);
    if (!found) throw new SchemaParseError(`undefined Avro type name: ${name}`);
    return found;
  }

  private named<T extends AvroNode>(o: Record<string, unknown>, namespace: string, make: (base: Named) => T): T {
    const ns = typeof o.namespace === 'string' ? o.namespace : namespace;
    const full = qualify(String(o.name), ns);
    const kind = String(o.type) === 'error' ? 'record' : String(o.type);
    const base: Named = {
      name: full, aliases: Array.isArray(o.aliases) ? o.aliases.map((a) => qualify(String(a), namespaceOf(full))) : [],
      ...(typeof o.doc === 'string' ? { doc: o.doc } : {}), props: propsOf(o, RESERVED[kind]!),
    };
    const node = make(base);
    this.names.set(full, node);
    return node;
  }

  private record(o: Record<string, unknown>, recordType: 'record' | 'error', namespace: string): AvroNode {
    // Registered before its fields are read, so a field may refer to the record itself.
    const node = this.named(o, namespace, (base) => ({ kind: 'record' as const, recordType, ...base, fields: [] as AvroField[] }));
    const ns = namespaceOf(node.name);
    for (const f of (o.fields as Record<string, unknown>[])) {
      node.fields.push({
        name: String(f.name), type: this.build(f.type, ns), aliases: Array.isArray(f.aliases) ? f.aliases.map(String) : [],
        ...(typeof f.doc === 'string' ? { doc: f.doc } : {}), hasDefault: 'default' in f, ...('default' in f ? { default: f.default } : {}),
        ...(typeof f.order === 'string' && f.order !== 'ascending' ? { order: f.order } : {}), props: propsOf(f, RESERVED.field!),
      });
    }
    return node;
  }
}

/** Writes the tree as Avro's Schema.toString does (namespaces inherited, each named type spelled out once). */
function render(node: AvroNode, qualified: boolean, referenced: ReadonlySet<string>): string {
  // Types from references are named, never spelled out (as Confluent's registry writes them).
  const written = new Set<string>(referenced);
  const sortProps = (p: Record<string, unknown>) => (qualified ? Object.fromEntries(Object.entries(p).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : p);
  const nameFields = (n: Named, ns: string): Record<string, unknown> => {
    if (qualified) return { name: n.name };
    const own = namespaceOf(n.name);
    return own === ns ? { name: simpleName(n.name) } : { name: simpleName(n.name), namespace: own };
  };
  const walk = (n: AvroNode, ns: string): unknown => {
    switch (n.kind) {
      case 'primitive': return Object.keys(n.props).length === 0 ? n.type : { type: n.type, ...sortProps(n.props) };
      case 'array': return { type: 'array', items: walk(n.items, ns), ...sortProps(n.props) };
      case 'map': return { type: 'map', values: walk(n.values, ns), ...sortProps(n.props) };
      case 'union': return n.branches.map((b) => walk(b, ns));
      default: break;
    }
    if (written.has(n.name)) return qualified || namespaceOf(n.name) !== ns ? n.name : simpleName(n.name);
    written.add(n.name);
    const inner = namespaceOf(n.name);
    const head = { type: n.kind === 'record' ? n.recordType : n.kind, ...nameFields(n, ns), ...(n.doc !== undefined ? { doc: n.doc } : {}) };
    const aliases = n.aliases.length > 0 ? { aliases: qualified ? n.aliases : n.aliases.map((a) => (namespaceOf(a) === inner ? simpleName(a) : a)) } : {};
    if (n.kind === 'enum') return { ...head, symbols: n.symbols, ...(n.default !== undefined ? { default: n.default } : {}), ...sortProps(n.props), ...aliases };
    if (n.kind === 'fixed') return { ...head, size: n.size, ...sortProps(n.props), ...aliases };
    const fields = n.fields.map((f) => ({
      name: f.name, type: walk(f.type, inner), ...(f.doc !== undefined ? { doc: f.doc } : {}), ...(f.hasDefault ? { default: f.default } : {}),
      ...(f.order ? { order: f.order } : {}), ...sortProps(f.props), ...(f.aliases.length > 0 ? { aliases: f.aliases } : {}),
    }));
    return { ...head, fields, ...sortProps(n.props), ...aliases };
  };
  return JSON.stringify(walk(node, ''));
}

// ---- reader/writer compatibility (the Avro specification's schema resolution) -------------------

export interface AvroIncompatibility { type: string; location: string; message: string; reader: AvroNode; writer: AvroNode }

/** Avro's type promotions: what a reader of type `reader` accepts from a writer of another primitive type. */
const PROMOTIONS: Record<string, readonly string[]> = {
  long: ['int'], float: ['int', 'long'], double: ['int', 'long', 'float'], bytes: ['string'], string: ['bytes'],
};

const typeName = (n: AvroNode): string => (n.kind === 'primitive' ? n.type : n.kind);

/** Avro's schemaNameEquals: the same simple name, or the writer's full name among the reader's aliases. */
function nameMatches(reader: Named, writer: Named): boolean {
  return simpleName(reader.name) === simpleName(writer.name) || reader.aliases.includes(writer.name);
}

/** Every way `reader` cannot read what `writer` wrote (empty: it can). Recursive types are followed once per pair. */
export function readerWriterIncompatibilities(reader: AvroNode, writer: AvroNode): AvroIncompatibility[] {
  const out: AvroIncompatibility[] = [];
  const inProgress = new Set<string>();
  const ids = new Map<AvroNode, number>();
  const idOf = (n: AvroNode) => { let i = ids.get(n); if (i === undefined) ids.set(n, i = ids.size); return i; };
  const budget = new StepBudget(limits.registryCompatibilityStepsMax);
  const add = (type: string, location: string, message: string, r: AvroNode, w: AvroNode) => out.push({ type, location, message, reader: r, writer: w });

  const check = (r: AvroNode, w: AvroNode, location: string): void => {
    budget.take();
    const pair = `${idOf(r)}/${idOf(w)}`;
    if (inProgress.has(pair)) return;
    inProgress.add(pair);
    try {
      checkPair(r, w, location);
    } finally {
      inProgress.delete(pair);
    }
  };

  const checkPair = (r: AvroNode, w: AvroNode, location: string): void => {
    if (w.kind === 'union' && r.kind !== 'union') {
      // Every branch the writer may have written must be readable.
      w.branches.forEach((b, i) => check(r, b, `${location}/${i}`));
      return;
    }
    if (r.kind === 'union') {
      const branches = w.kind === 'union' ? w.branches : [w];
      branches.forEach((b, i) => {
        if (!r.branches.some((rb) => quietlyCompatible(rb, b))) {
          add('MISSING_UNION_BRANCH', w.kind === 'union' ? `${location}/${i}` : location, `reader union lacking writer type: ${typeName(b).toUpperCase()}`, r, b);
        }
      });
      return;
    }
    if (r.kind === 'primitive' && w.kind === 'primitive') {
      if (r.type !== w.type && !(PROMOTIONS[r.type] ?? []).includes(w.type)) add('TYPE_MISMATCH', location, `reader type: ${r.type.toUpperCase()} not compatible with writer type: ${w.type.toUpperCase()}`, r, w);
      return;
    }
    if (r.kind !== w.kind) { add('TYPE_MISMATCH', location, `reader type: ${typeName(r).toUpperCase()} not compatible with writer type: ${typeName(w).toUpperCase()}`, r, w); return; }
    switch (r.kind) {
      case 'array': check(r.items, (w as typeof r).items, `${location}/items`); return;
      case 'map': check(r.values, (w as typeof r).values, `${location}/values`); return;
      case 'fixed': {
        const wf = w as typeof r;
        if (!nameMatches(r, wf)) add('NAME_MISMATCH', `${location}/name`, `expected: ${wf.name}`, r, w);
        if (r.size !== wf.size) add('FIXED_SIZE_MISMATCH', `${location}/size`, `expected: ${wf.size}, found: ${r.size}`, r, w);
        return;
      }
      case 'enum': {
        const we = w as typeof r;
        if (!nameMatches(r, we)) add('NAME_MISMATCH', `${location}/name`, `expected: ${we.name}`, r, w);
        const missing = we.symbols.filter((s) => !r.symbols.includes(s));
        if (missing.length > 0 && r.default === undefined) add('MISSING_ENUM_SYMBOLS', `${location}/symbols`, `[${missing.join(', ')}]`, r, w);
        return;
      }
      case 'record': checkRecord(r, w as typeof r, location); return;
      default: return;
    }
  };

  const checkRecord = (r: Extract<AvroNode, { kind: 'record' }>, w: Extract<AvroNode, { kind: 'record' }>, location: string): void => {
    if (!nameMatches(r, w)) add('NAME_MISMATCH', `${location}/name`, `expected: ${w.name}`, r, w);
    r.fields.forEach((rf, i) => {
      // The writer's field of the same name, else one named by an alias of the reader's field.
      const wf = w.fields.find((f) => f.name === rf.name) ?? w.fields.find((f) => rf.aliases.includes(f.name));
      if (wf) check(rf.type, wf.type, `${location}/fields/${i}/type`);
      else if (!rf.hasDefault) add('READER_FIELD_MISSING_DEFAULT_VALUE', `${location}/fields/${i}`, rf.name, r, w);
    });
  };

  const quietlyCompatible = (r: AvroNode, w: AvroNode): boolean => {
    const before = out.length;
    check(r, w, '');
    const ok = out.length === before;
    out.length = before;
    return ok;
  };

  check(reader, writer, '');
  return out;
}

// ---- the parsed schema -------------------------------------------------------------------------

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SchemaParseError(`Invalid schema: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export class AvroSchema implements ParsedSchema {
  readonly schemaType = 'AVRO' as const;
  readonly canonical: string;
  private constructor(readonly root: AvroNode, private readonly referenced: ReadonlySet<string>, private readonly type: avro.Type) {
    this.canonical = render(root, false, referenced);
  }

  recordName(): string | null {
    return this.root.kind === 'record' || this.root.kind === 'enum' || this.root.kind === 'fixed' ? this.root.name : null;
  }

  /** Parses `text` with the named types of `references` (each an Avro schema) in scope. */
  static parse(text: string, references: readonly ResolvedReference[] = []): AvroSchema {
    const registry: Record<string, unknown> = {};
    const names = new Map<string, AvroNode>();
    const budget = new StepBudget(limits.registryCompatibilityStepsMax);
    let type: avro.Type | undefined;
    const load = (schemaText: string) => {
      const json = parseJson(schemaText);
      try {
        type = avro.Type.forSchema(json as avro.Schema, { registry: registry as Record<string, avro.Type> });
      } catch (e) {
        throw new SchemaParseError(`Invalid schema: ${e instanceof Error ? e.message : String(e)}`);
      }
      return new TreeBuilder(names, budget).build(json, '');
    };
    const seen = new Set<string>();
    const loadReferences = (refs: readonly ResolvedReference[]) => {
      for (const r of refs) {
        if (seen.has(r.name)) continue;
        seen.add(r.name);
        loadReferences(r.references);
        if (r.schemaType !== 'AVRO') throw new SchemaParseError(`Invalid schema: reference ${r.name} is ${r.schemaType}, not AVRO`);
        load(r.schema);
      }
    };
    loadReferences(references);
    const referenced = new Set(names.keys());
    const root = load(text);
    return new AvroSchema(root, referenced, type!);
  }

  normalized(): string {
    return render(this.root, true, this.referenced);
  }

  decode(payload: Buffer): unknown {
    return plainData(this.type.fromBuffer(payload));
  }

  backwardIncompatibilities(previous: ParsedSchema): string[] {
    if (!(previous instanceof AvroSchema)) return [`Incompatible because of different schema type`];
    return readerWriterIncompatibilities(this.root, previous.root).map((i) => describe(i));
  }
}

/** Confluent's verbose message for one incompatibility (new schema reads, old schema wrote). */
function describe(i: AvroIncompatibility): string {
  const where = i.location === '' ? '/' : i.location;
  const description: Record<string, string> = {
    READER_FIELD_MISSING_DEFAULT_VALUE: `The field '${i.message}' at path '${where}' in the new schema has no default value and is missing in the old schema`,
    MISSING_UNION_BRANCH: `The new schema is missing a type inside a union field at path '${where}' in the old schema`,
    MISSING_ENUM_SYMBOLS: `The new schema is missing enum symbols '${i.message}' at path '${where}' in the old schema`,
    NAME_MISMATCH: `The type name at path '${where}' in the new schema does not match the old schema (${i.message})`,
    FIXED_SIZE_MISMATCH: `The size of FIXED type field at path '${where}' in the new schema does not match with the old schema (${i.message})`,
    TYPE_MISMATCH: `The type (path '${where}') of a field in the new schema does not match with the old schema (${i.message})`,
  };
  return `{errorType:'${i.type}', description:'${description[i.type] ?? i.message}', additionalInfo:'${i.message}'}`;
}

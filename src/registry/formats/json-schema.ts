// JSON Schema: ajv checks that the text is a valid schema (drafts 4 to 2020-12, by `$schema`;
// draft-07 when it names none, as Confluent's default), and Confluent's JSON Schema diff decides
// compatibility: walking the old schema against the new one yields differences (PROPERTY_ADDED_TO_
// OPEN_CONTENT_MODEL, REQUIRED_ATTRIBUTE_ADDED, TYPE_CHANGED, ...) and a change is compatible when
// every difference is in the compatible set. Open, closed and partially open content models
// (additionalProperties true/absent, false, or a schema; patternProperties) decide whether adding
// or removing a property is safe. The walk classifies raw JSON the way Confluent's parser (everit)
// builds its schema objects, so no third schema model is kept.
import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import AjvDraft4 from 'ajv-draft-04';
import { limits } from '../../util/index.js';
import { SchemaParseError, StepBudget, type ParsedSchema, type ResolvedReference } from './schema.js';

type Json = unknown;
type Obj = Record<string, unknown>;

/** Differences that keep data written with the old schema valid under the new one. */
export const JSON_COMPATIBLE_CHANGES: ReadonlySet<string> = new Set([
  'ID_CHANGED', 'DESCRIPTION_CHANGED', 'TITLE_CHANGED', 'DEFAULT_CHANGED', 'SCHEMA_REMOVED', 'TYPE_EXTENDED',
  'MAX_LENGTH_INCREASED', 'MAX_LENGTH_REMOVED', 'MIN_LENGTH_DECREASED', 'MIN_LENGTH_REMOVED', 'PATTERN_REMOVED',
  'MAXIMUM_INCREASED', 'MAXIMUM_REMOVED', 'MINIMUM_DECREASED', 'MINIMUM_REMOVED', 'EXCLUSIVE_MAXIMUM_INCREASED', 'EXCLUSIVE_MAXIMUM_REMOVED',
  'EXCLUSIVE_MINIMUM_DECREASED', 'EXCLUSIVE_MINIMUM_REMOVED', 'MULTIPLE_OF_REDUCED', 'MULTIPLE_OF_REMOVED',
  'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED', 'REQUIRED_ATTRIBUTE_REMOVED', 'DEPENDENCY_ARRAY_NARROWED', 'DEPENDENCY_ARRAY_REMOVED', 'DEPENDENCY_SCHEMA_REMOVED',
  'MAX_PROPERTIES_INCREASED', 'MAX_PROPERTIES_REMOVED', 'MIN_PROPERTIES_DECREASED', 'MIN_PROPERTIES_REMOVED',
  'ADDITIONAL_PROPERTIES_ADDED', 'ADDITIONAL_PROPERTIES_EXTENDED', 'PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL',
  'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL', 'OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL',
  'PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL', 'PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL',
  'PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL', 'PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
  'MAX_ITEMS_INCREASED', 'MAX_ITEMS_REMOVED', 'MIN_ITEMS_DECREASED', 'MIN_ITEMS_REMOVED', 'UNIQUE_ITEMS_REMOVED',
  'ADDITIONAL_ITEMS_ADDED', 'ADDITIONAL_ITEMS_EXTENDED', 'ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL', 'ITEM_ADDED_TO_CLOSED_CONTENT_MODEL',
  'ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL', 'ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL',
  'ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL', 'ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL',
  'ENUM_ARRAY_EXTENDED', 'COMBINED_TYPE_EXTENDED', 'PRODUCT_TYPE_NARROWED', 'SUM_TYPE_EXTENDED', 'NOT_TYPE_NARROWED',
]);

export interface JsonDifference { type: string; path: string }

/** What kind of schema a JSON value is, as everit's loader would build it. */
type Kind = 'true' | 'false' | 'ref' | 'combined' | 'not' | 'enum' | 'const' | 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';

const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties', 'maxProperties', 'dependencies', 'propertyNames'];
const ARRAY_KEYWORDS = ['items', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'contains', 'prefixItems'];
const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern', 'format'];
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'];

function kindOf(s: Json): Kind {
  if (s === true) return 'true';
  if (s === false) return 'false';
  const o = s as Obj;
  if (typeof o.$ref === 'string') return 'ref';
  if (Array.isArray(o.allOf) || Array.isArray(o.anyOf) || Array.isArray(o.oneOf)) return 'combined';
  if (Array.isArray(o.type) && o.type.length > 1) return 'combined';
  if (o.not !== undefined) return 'not';
  if (Array.isArray(o.enum)) return 'enum';
  if ('const' in o) return 'const';
  const type = Array.isArray(o.type) ? o.type[0] : o.type;
  if (type === 'object' || (type === undefined && OBJECT_KEYWORDS.some((k) => k in o))) return 'object';
  if (type === 'array' || (type === undefined && ARRAY_KEYWORDS.some((k) => k in o))) return 'array';
  if (type === 'string' || (type === undefined && STRING_KEYWORDS.some((k) => k in o))) return 'string';
  if (type === 'number' || type === 'integer' || (type === undefined && NUMBER_KEYWORDS.some((k) => k in o))) return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'null') return 'null';
  return 'true';
}

/** The sub-schemas of a combined schema and its criterion (a list of types is anyOf over each type). */
function combinedOf(o: Obj): { criterion: 'allOf' | 'anyOf' | 'oneOf'; subschemas: Json[] } {
  if (Array.isArray(o.allOf)) return { criterion: 'allOf', subschemas: o.allOf };
  if (Array.isArray(o.anyOf)) return { criterion: 'anyOf', subschemas: o.anyOf };
  if (Array.isArray(o.oneOf)) return { criterion: 'oneOf', subschemas: o.oneOf };
  const { type, ...rest } = o;
  return { criterion: 'anyOf', subschemas: (type as string[]).map((t) => ({ ...rest, type: t })) };
}

/** Where `$ref`s point: JSON pointers into a document, and the documents of the references by name. */
class RefResolver {
  constructor(private readonly root: Json, private readonly documents: Map<string, Json>) {}

  resolve(ref: string): { schema: Json; resolver: RefResolver } | null {
    const hash = ref.indexOf('#');
    const base = hash < 0 ? ref : ref.slice(0, hash);
    const pointer = hash < 0 ? '' : ref.slice(hash + 1);
    let resolver: RefResolver = this;
    if (base !== '') {
      const doc = this.documents.get(base);
      if (doc === undefined) return null;
      resolver = new RefResolver(doc, this.documents);
    }
    let at: Json = resolver.root;
    for (const part of pointer.split('/').filter((p) => p !== '')) {
      if (at === null || typeof at !== 'object') return null;
      at = (at as Obj)[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return at === undefined ? null : { schema: at, resolver };
  }
}

/** One walk: differences with their paths, and the pairs already being compared (recursive schemas). */
class DiffContext {
  readonly differences: JsonDifference[] = [];
  private readonly path: string[];
  constructor(readonly budget: StepBudget, path: string[] = [], private readonly visiting: Set<string> = new Set(), private readonly ids = new Map<Json, number>()) {
    this.path = path;
  }
  add(type: string, sub?: string): void { this.differences.push({ type, path: `#/${[...this.path, ...(sub ? [sub] : [])].join('/')}` }); }
  within<T>(part: string, fn: () => T): T { this.path.push(part); try { return fn(); } finally { this.path.pop(); } }
  sub(): DiffContext { return new DiffContext(this.budget, [...this.path], this.visiting, this.ids); }
  merge(other: DiffContext): void { this.differences.push(...other.differences); }
  get compatible(): boolean { return this.differences.every((d) => JSON_COMPATIBLE_CHANGES.has(d.type)); }
  /** False when this pair is already being compared further up (a recursive schema). */
  enter(a: Json, b: Json): string | null {
    const id = (x: Json) => { let i = this.ids.get(x); if (i === undefined) this.ids.set(x, i = this.ids.size); return i; };
    const key = `${id(a)}/${id(b)}`;
    if (this.visiting.has(key)) return null;
    this.visiting.add(key);
    return key;
  }
  leave(key: string): void { this.visiting.delete(key); }
}

interface Side { schema: Json; resolver: RefResolver }

function deref(side: Side): Side {
  let s = side;
  for (let i = 0; i < limits.registryReferencesDepthMax && s.schema !== null && typeof s.schema === 'object' && typeof (s.schema as Obj).$ref === 'string'; i++) {
    const r = s.resolver.resolve((s.schema as Obj).$ref as string);
    if (r === null) return { schema: true, resolver: s.resolver };
    s = r;
  }
  return s;
}

const at = (side: Side, schema: Json): Side => ({ schema, resolver: side.resolver });
const obj = (s: Json): Obj => (s !== null && typeof s === 'object' && !Array.isArray(s) ? s as Obj : {});
const jsonEquals = (a: Json, b: Json): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Confluent's SchemaDiff.compare(original, update). */
export function compareJsonSchemas(ctx: DiffContext, originalSide: Side | undefined, updateSide: Side | undefined): void {
  ctx.budget.take();
  if (originalSide === undefined && updateSide === undefined) return;
  if (originalSide === undefined) { ctx.add('SCHEMA_ADDED'); return; }
  if (updateSide === undefined) { ctx.add('SCHEMA_REMOVED'); return; }
  const original = deref(originalSide);
  const update = deref(updateSide);
  const ok = kindOf(original.schema);
  const uk = kindOf(update.schema);
  if (ok !== 'combined' && uk === 'combined') {
    const { criterion, subschemas } = combinedOf(obj(update.schema));
    if (subschemas.length === 1 || criterion !== 'allOf') {
      for (const s of subschemas) {
        const sub = ctx.sub();
        compareJsonSchemas(sub, original, at(update, s));
        if (sub.compatible) { ctx.merge(sub); if (subschemas.length > 1) ctx.add('SUM_TYPE_EXTENDED'); return; }
      }
    }
  } else if (ok === 'combined' && uk !== 'combined') {
    const { subschemas } = combinedOf(obj(original.schema));
    if (subschemas.length === 1) {
      const sub = ctx.sub();
      compareJsonSchemas(sub, at(original, subschemas[0]), update);
      if (sub.compatible) { ctx.merge(sub); return; }
    }
  }
  if (ok !== uk) {
    // Anything may be read as an empty schema, and nothing was ever valid under false.
    if (ok === 'false' || uk === 'true') return;
    ctx.add('TYPE_CHANGED');
    return;
  }
  const key = ctx.enter(original.schema, update.schema);
  if (key === null) return;
  try {
    const o = obj(original.schema);
    const u = obj(update.schema);
    if (!jsonEquals(o.$id ?? o.id, u.$id ?? u.id)) ctx.add('ID_CHANGED');
    if (!jsonEquals(o.title, u.title)) ctx.add('TITLE_CHANGED');
    if (!jsonEquals(o.description, u.description)) ctx.add('DESCRIPTION_CHANGED');
    if (!jsonEquals(o.default, u.default)) ctx.add('DEFAULT_CHANGED');
    switch (ok) {
      case 'string': compareString(ctx, o, u); break;
      case 'number': compareNumber(ctx, o, u); break;
      case 'enum': compareEnum(ctx, o, u); break;
      case 'const': if (!jsonEquals(o.const, u.const)) ctx.add('ENUM_ARRAY_CHANGED'); break;
      case 'combined': compareCombined(ctx, original, update); break;
      case 'not': compareJsonSchemas(ctx, at(update, u.not), at(original, o.not)); break;
      case 'object': compareObject(ctx, original, update); break;
      case 'array': compareArray(ctx, original, update); break;
      default: break;
    }
  } finally {
    ctx.leave(key);
  }
}

/** A numeric keyword's change: added, removed, increased or decreased (`name` in Confluent's spelling). */
function bound(ctx: DiffContext, o: Obj, u: Obj, keyword: string, name: string): void {
  const a = typeof o[keyword] === 'number' ? o[keyword] as number : undefined;
  const b = typeof u[keyword] === 'number' ? u[keyword] as number : undefined;
  if (a === b) return;
  if (a === undefined) ctx.add(`${name}_ADDED`, keyword);
  else if (b === undefined) ctx.add(`${name}_REMOVED`, keyword);
  else ctx.add(`${name}_${a < b ? 'INCREASED' : 'DECREASED'}`, keyword);
}

function compareString(ctx: DiffContext, o: Obj, u: Obj): void {
  bound(ctx, o, u, 'maxLength', 'MAX_LENGTH');
  bound(ctx, o, u, 'minLength', 'MIN_LENGTH');
  if (!jsonEquals(o.pattern, u.pattern)) ctx.add(o.pattern === undefined ? 'PATTERN_ADDED' : u.pattern === undefined ? 'PATTERN_REMOVED' : 'PATTERN_CHANGED', 'pattern');
}

function compareNumber(ctx: DiffContext, o: Obj, u: Obj): void {
  bound(ctx, o, u, 'maximum', 'MAXIMUM');
  bound(ctx, o, u, 'minimum', 'MINIMUM');
  bound(ctx, o, u, 'exclusiveMaximum', 'EXCLUSIVE_MAXIMUM');
  bound(ctx, o, u, 'exclusiveMinimum', 'EXCLUSIVE_MINIMUM');
  const a = o.multipleOf as number | undefined;
  const b = u.multipleOf as number | undefined;
  if (a !== b) {
    if (a === undefined) ctx.add('MULTIPLE_OF_ADDED', 'multipleOf');
    else if (b === undefined) ctx.add('MULTIPLE_OF_REMOVED', 'multipleOf');
    else if (a % b === 0) ctx.add('MULTIPLE_OF_REDUCED', 'multipleOf');
    else if (b % a === 0) ctx.add('MULTIPLE_OF_EXPANDED', 'multipleOf');
    else ctx.add('MULTIPLE_OF_CHANGED', 'multipleOf');
  }
  const oi = o.type === 'integer';
  const ui = u.type === 'integer';
  if (oi && !ui) ctx.add('TYPE_EXTENDED');
  else if (!oi && ui) ctx.add('TYPE_NARROWED');
}

function compareEnum(ctx: DiffContext, o: Obj, u: Obj): void {
  const a = (o.enum as Json[]).map((x) => JSON.stringify(x));
  const b = new Set((u.enum as Json[]).map((x) => JSON.stringify(x)));
  if (a.length === b.size && a.every((x) => b.has(x))) return;
  if (a.every((x) => b.has(x))) ctx.add('ENUM_ARRAY_EXTENDED', 'enum');
  else if ([...b].every((x) => a.includes(x))) ctx.add('ENUM_ARRAY_NARROWED', 'enum');
  else ctx.add('ENUM_ARRAY_CHANGED', 'enum');
}

function compareCombined(ctx: DiffContext, original: Side, update: Side): void {
  const o = combinedOf(obj(original.schema));
  const u = combinedOf(obj(update.schema));
  if (o.criterion !== u.criterion) {
    const extended = u.criterion === 'anyOf' || (u.criterion === 'oneOf' && o.subschemas.length === 1)
      || (u.criterion === 'allOf' && o.subschemas.length === 1 && u.subschemas.length === 1);
    if (!extended) { ctx.add('COMBINED_TYPE_CHANGED'); return; }
    ctx.add('COMBINED_TYPE_EXTENDED');
  }
  const dedupe = (xs: Json[]) => [...new Map(xs.map((x) => [JSON.stringify(x), x])).values()];
  const os = dedupe(o.subschemas);
  const us = dedupe(u.subschemas);
  if (os.length < us.length) ctx.add(u.criterion === 'allOf' ? 'PRODUCT_TYPE_EXTENDED' : 'SUM_TYPE_EXTENDED');
  else if (os.length > us.length) ctx.add(u.criterion === 'allOf' ? 'PRODUCT_TYPE_NARROWED' : 'SUM_TYPE_NARROWED');
  // Which old sub-schema each new one can stand for: a maximum bipartite matching (augmenting paths).
  const edges = os.map((os1, i) => us.map((us1) => ctx.within(`${o.criterion}/${i}`, () => {
    const sub = ctx.sub();
    compareJsonSchemas(sub, at(original, os1), at(update, us1));
    return sub.compatible ? sub : null;
  })));
  const matchOfUpdate = new Array<number>(us.length).fill(-1);
  const augment = (i: number, seen: boolean[]): boolean => {
    for (let j = 0; j < us.length; j++) {
      if (edges[i]![j] === null || seen[j]) continue;
      seen[j] = true;
      if (matchOfUpdate[j]! < 0 || augment(matchOfUpdate[j]!, seen)) { matchOfUpdate[j] = i; return true; }
    }
    return false;
  };
  let matched = 0;
  for (let i = 0; i < os.length; i++) if (augment(i, new Array<boolean>(us.length).fill(false))) matched++;
  matchOfUpdate.forEach((i, j) => { if (i >= 0) ctx.merge(edges[i]![j]!); });
  if (matched < Math.min(os.length, us.length)) ctx.add('COMBINED_TYPE_SUBSCHEMAS_CHANGED');
}

/** additionalProperties absent or true, and no patternProperties: any extra property is allowed. */
function isOpenObject(o: Obj): boolean {
  return Object.keys(obj(o.patternProperties)).length === 0 && (o.additionalProperties === undefined || o.additionalProperties === true);
}

/** The schema an undeclared property `key` gets under a partially open model (patternProperties, additionalProperties: {...}). */
function partialSchemaFor(o: Obj, key: string): Json | undefined {
  for (const [pattern, schema] of Object.entries(obj(o.patternProperties))) {
    try { if (new RegExp(pattern, 'u').test(key)) return schema; } catch { /* a pattern JavaScript cannot read covers nothing */ }
  }
  const ap = o.additionalProperties;
  return ap !== undefined && typeof ap === 'object' ? ap : undefined;
}

function compareObject(ctx: DiffContext, original: Side, update: Side): void {
  const o = obj(original.schema);
  const u = obj(update.schema);
  const op = obj(o.properties);
  const up = obj(u.properties);
  const oreq = new Set(Array.isArray(o.required) ? o.required as string[] : []);
  const ureq = new Set(Array.isArray(u.required) ? u.required as string[] : []);
  const hasDefault = (s: Json) => s !== null && typeof s === 'object' && 'default' in (s as Obj);
  ctx.within('required', () => {
    for (const key of Object.keys(op)) {
      if (!(key in up)) continue;
      if (oreq.has(key) && !ureq.has(key)) ctx.add('REQUIRED_ATTRIBUTE_REMOVED', key);
      else if (!oreq.has(key) && ureq.has(key)) ctx.add(hasDefault(up[key]) ? 'REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED' : 'REQUIRED_ATTRIBUTE_ADDED', key);
    }
  });
  ctx.within('properties', () => {
    for (const key of new Set([...Object.keys(op), ...Object.keys(up)])) {
      ctx.within(key, () => {
        if (!(key in up)) {
          // Only the new model matters: a property may go only where the new schema still accepts it.
          if (isOpenObject(u)) { ctx.add('PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL'); return; }
          const partial = partialSchemaFor(u, key);
          if (partial !== undefined) {
            const sub = ctx.sub();
            compareJsonSchemas(sub, at(original, op[key]), at(update, partial));
            ctx.merge(sub);
            ctx.add(sub.compatible ? 'PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL' : 'PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL');
          } else ctx.add(op[key] === false ? 'PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL' : 'PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL');
        } else if (!(key in op)) {
          // Only the old model matters: old data may already hold this property with any value.
          if (isOpenObject(o)) { ctx.add(kindOf(deref(at(update, up[key])).schema) === 'true' ? 'PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL' : 'PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL'); return; }
          const partial = partialSchemaFor(o, key);
          if (partial !== undefined) {
            const sub = ctx.sub();
            compareJsonSchemas(sub, at(original, partial), at(update, up[key]));
            ctx.merge(sub);
            ctx.add(sub.compatible ? 'PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL' : 'PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL');
          }
          if (ureq.has(key)) ctx.add(hasDefault(up[key]) ? 'REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL' : 'REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL');
          else ctx.add('OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL');
        } else compareJsonSchemas(ctx, at(original, op[key]), at(update, up[key]));
      });
    }
  });
  ctx.within('additionalProperties', () => {
    const permits = (s: Obj) => s.additionalProperties !== false;
    const schemaOf = (s: Obj) => (s.additionalProperties !== undefined && typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (permits(o) !== permits(u)) ctx.add(permits(u) ? 'ADDITIONAL_PROPERTIES_ADDED' : 'ADDITIONAL_PROPERTIES_REMOVED');
    else if (schemaOf(o) === undefined && schemaOf(u) !== undefined) ctx.add('ADDITIONAL_PROPERTIES_NARROWED');
    else if (schemaOf(o) !== undefined && schemaOf(u) === undefined) ctx.add('ADDITIONAL_PROPERTIES_EXTENDED');
    else if (schemaOf(o) !== undefined) compareJsonSchemas(ctx, at(original, schemaOf(o)), at(update, schemaOf(u)));
  });
  bound(ctx, o, u, 'maxProperties', 'MAX_PROPERTIES');
  bound(ctx, o, u, 'minProperties', 'MIN_PROPERTIES');
}

function compareArray(ctx: DiffContext, original: Side, update: Side): void {
  const o = obj(original.schema);
  const u = obj(update.schema);
  const single = (s: Obj) => (Array.isArray(s.items) ? undefined : s.items);
  const tuple = (s: Obj): Json[] => (Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []);
  ctx.within('items', () => {
    const a = single(o);
    const b = single(u);
    if (a !== undefined || b !== undefined) compareJsonSchemas(ctx, a === undefined ? undefined : at(original, a), b === undefined ? undefined : at(update, b));
  });
  const ot = tuple(o);
  const ut = tuple(u);
  const extra = (s: Obj) => (Array.isArray(s.prefixItems) ? s.items : s.additionalItems);
  const open = (s: Obj) => extra(s) === undefined || extra(s) === true;
  const partial = (s: Obj) => { const e = extra(s); return e !== undefined && typeof e === 'object' ? e : undefined; };
  for (let i = 0; i < Math.max(ot.length, ut.length); i++) {
    ctx.within(`items/${i}`, () => {
      if (i < ot.length && i < ut.length) { compareJsonSchemas(ctx, at(original, ot[i]), at(update, ut[i])); return; }
      if (i < ot.length) {
        if (open(u)) { ctx.add('ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL'); return; }
        const p = partial(u);
        if (p !== undefined) {
          const sub = ctx.sub();
          compareJsonSchemas(sub, at(original, ot[i]), at(update, p));
          ctx.merge(sub);
          ctx.add(sub.compatible ? 'ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL' : 'ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL');
        } else ctx.add(ot[i] === false ? 'ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL' : 'ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL');
        return;
      }
      if (open(o)) { ctx.add(kindOf(ut[i]) === 'true' ? 'ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL' : 'ITEM_ADDED_TO_OPEN_CONTENT_MODEL'); return; }
      const p = partial(o);
      if (p !== undefined) {
        const sub = ctx.sub();
        compareJsonSchemas(sub, at(original, p), at(update, ut[i]));
        ctx.merge(sub);
        ctx.add(sub.compatible ? 'ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL' : 'ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL');
      } else ctx.add('ITEM_ADDED_TO_CLOSED_CONTENT_MODEL');
    });
  }
  bound(ctx, o, u, 'maxItems', 'MAX_ITEMS');
  bound(ctx, o, u, 'minItems', 'MIN_ITEMS');
  if (Boolean(o.uniqueItems) !== Boolean(u.uniqueItems)) ctx.add(o.uniqueItems ? 'UNIQUE_ITEMS_REMOVED' : 'UNIQUE_ITEMS_ADDED', 'uniqueItems');
}

// ---- parsing -----------------------------------------------------------------------------------

/** An ajv instance for the draft `$schema` names (draft-07 when none). */
function validatorFor(schema: Json): Ajv {
  const uri = typeof obj(schema).$schema === 'string' ? obj(schema).$schema as string : '';
  const options = { strict: false, validateFormats: false, allErrors: false } as const;
  if (uri.includes('2020-12')) return new Ajv2020(options);
  if (uri.includes('2019-09')) return new Ajv2019(options);
  if (uri.includes('draft-04')) return new (AjvDraft4 as unknown as new (o: object) => Ajv)(options);
  return new Ajv(options);
}

/** Keys in a stable order, so two spellings of the same schema compare equal when normalized. */
function sortKeys(v: Json): Json {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v as Obj).sort().map((k) => [k, sortKeys((v as Obj)[k])]));
}

export class JsonSchema implements ParsedSchema {
  readonly schemaType = 'JSON' as const;
  readonly canonical: string;
  private constructor(readonly root: Json, private readonly documents: Map<string, Json>) {
    this.canonical = JSON.stringify(root);
  }

  recordName(): string | null {
    const title = typeof this.root === 'object' && this.root !== null ? (this.root as Record<string, unknown>).title : undefined;
    return typeof title === 'string' ? title : null;
  }

  static parse(text: string, references: readonly ResolvedReference[] = []): JsonSchema {
    let root: Json;
    try {
      root = JSON.parse(text);
    } catch (e) {
      throw new SchemaParseError(`Invalid schema: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (typeof root !== 'boolean' && (root === null || typeof root !== 'object' || Array.isArray(root))) throw new SchemaParseError('Invalid schema: a JSON Schema is an object or a boolean');
    const documents = new Map<string, Json>();
    const collect = (refs: readonly ResolvedReference[], depth: number) => {
      if (depth > limits.registryReferencesDepthMax) throw new SchemaParseError('Invalid schema: references nest too deep');
      for (const r of refs) {
        if (documents.has(r.name)) continue;
        if (r.schemaType !== 'JSON') throw new SchemaParseError(`Invalid schema: reference ${r.name} is ${r.schemaType}, not JSON`);
        try { documents.set(r.name, JSON.parse(r.schema)); } catch { throw new SchemaParseError(`Invalid schema: reference ${r.name} is not JSON`); }
        collect(r.references, depth + 1);
      }
    };
    collect(references, 0);
    const ajv = validatorFor(root);
    try {
      for (const [name, doc] of documents) if (typeof doc === 'object' && doc !== null) ajv.addSchema(doc as object, name);
      ajv.compile(root as object);
    } catch (e) {
      throw new SchemaParseError(`Invalid schema: ${e instanceof Error ? e.message : String(e)}`);
    }
    return new JsonSchema(root, documents);
  }

  normalized(): string {
    return JSON.stringify(sortKeys(this.root));
  }

  decode(payload: Buffer): unknown {
    return JSON.parse(payload.toString('utf8'));
  }

  /** Confluent's diff of the old schema (original) against this one (update). */
  differencesFrom(previous: JsonSchema): JsonDifference[] {
    const ctx = new DiffContext(new StepBudget(limits.registryCompatibilityStepsMax));
    compareJsonSchemas(ctx, { schema: previous.root, resolver: new RefResolver(previous.root, previous.documents) },
      { schema: this.root, resolver: new RefResolver(this.root, this.documents) });
    return ctx.differences;
  }

  backwardIncompatibilities(previous: ParsedSchema): string[] {
    if (!(previous instanceof JsonSchema)) return ['Incompatible because of different schema type'];
    return this.differencesFrom(previous).filter((d) => !JSON_COMPATIBLE_CHANGES.has(d.type))
      .map((d) => `{errorType:'${d.type}', description:'Found incompatible change: ${d.type} at path '${d.path}''}`);
  }
}

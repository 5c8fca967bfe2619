// Client quotas by entity (a set of entity type → name pairs, e.g. user=alice,client-id=app).
import type { ClientQuotaRecord } from '../protocol/index.js';

export interface QuotaEntityPart {
  readonly entityType: string;
  /** null is the default entity of that type. */
  readonly entityName: string | null;
}

export interface ClientQuotaEntry {
  /** Parts sorted by entity type. */
  readonly entity: readonly QuotaEntityPart[];
  readonly quotas: ReadonlyMap<string, number>;
}

function sortedEntity(parts: readonly QuotaEntityPart[]): readonly QuotaEntityPart[] {
  return Object.freeze([...parts]
    .map((p) => Object.freeze({ entityType: p.entityType, entityName: p.entityName }))
    .sort((a, b) => (a.entityType < b.entityType ? -1 : a.entityType > b.entityType ? 1 : 0)));
}

/** A canonical key for an entity: independent of part order; null names are distinct from "". */
export function quotaEntityKey(parts: readonly QuotaEntityPart[]): string {
  return JSON.stringify(sortedEntity(parts).map((p) => [p.entityType, p.entityName]));
}

export class ClientQuotasImage {
  static readonly EMPTY = new ClientQuotasImage(new Map());

  /** Entries by `quotaEntityKey(entity)`. */
  constructor(readonly entities: ReadonlyMap<string, ClientQuotaEntry>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.entities.size === 0; }

  quotas(entity: readonly QuotaEntityPart[]): ReadonlyMap<string, number> | undefined {
    return this.entities.get(quotaEntityKey(entity))?.quotas;
  }
}

export class ClientQuotasDelta {
  private readonly touched = new Map<string, { entity: readonly QuotaEntityPart[]; quotas: Map<string, number> }>();

  constructor(readonly image: ClientQuotasImage) {}

  changedEntities(): string[] { return [...this.touched.keys()]; }

  replay(r: ClientQuotaRecord): void {
    const key = quotaEntityKey(r.entity);
    let w = this.touched.get(key);
    if (w === undefined) {
      w = { entity: sortedEntity(r.entity), quotas: new Map(this.image.entities.get(key)?.quotas ?? []) };
      this.touched.set(key, w);
    }
    if (r.remove) w.quotas.delete(r.key);
    else w.quotas.set(r.key, r.value);
  }

  apply(): ClientQuotasImage {
    if (this.touched.size === 0) return this.image;
    const entities = new Map(this.image.entities);
    for (const [key, w] of this.touched) {
      if (w.quotas.size === 0) entities.delete(key);
      else entities.set(key, Object.freeze({ entity: w.entity, quotas: w.quotas }));
    }
    return new ClientQuotasImage(entities);
  }
}

/** DescribeClientQuotas match types. */
export const QuotaMatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

export interface QuotaFilterComponent { entityType: string; matchType: number; match: string | null }

export type DescribedQuotas =
  | { errorCode: 0; entries: { entity: QuotaEntityPart[]; values: { key: string; value: number }[] }[] }
  | { errorCode: number; errorMessage: string };

const QUOTA_ENTITY_TYPES: ReadonlySet<string> = new Set(['user', 'client-id', 'ip']);

/**
 * DescribeClientQuotas as Kafka's ClientQuotasImage answers it: each component names an entity
 * type and matches a name (EXACT), the default entity (DEFAULT) or any entity of that type
 * (SPECIFIED). Non-strict: entities having at least the filtered types; strict: exactly them.
 * No components and not strict: everything. Errors are INVALID_REQUEST (42), or
 * UNSUPPORTED_VERSION (35) for an unknown entity type.
 */
export function describeClientQuotas(image: ClientQuotasImage, components: readonly QuotaFilterComponent[], strict: boolean): DescribedQuotas {
  const exact = new Map<string, string | null>();
  const typed = new Set<string>();
  const invalid = (errorMessage: string): DescribedQuotas => ({ errorCode: 42, errorMessage });
  for (const c of components) {
    if (c.entityType === '') return invalid('Invalid empty entity type.');
    if (exact.has(c.entityType) || typed.has(c.entityType)) return invalid(`Entity type ${c.entityType} cannot appear more than once in the filter.`);
    if (!QUOTA_ENTITY_TYPES.has(c.entityType)) return { errorCode: 35, errorMessage: `Unsupported entity type ${c.entityType}` };
    if (c.matchType === QuotaMatchType.EXACT) {
      if (c.match === null) return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.');
      exact.set(c.entityType, c.match);
    } else if (c.matchType === QuotaMatchType.DEFAULT) {
      if (c.match !== null) return invalid('Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
      exact.set(c.entityType, null);
    } else if (c.matchType === QuotaMatchType.SPECIFIED) {
      if (c.match !== null) return invalid('Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
      typed.add(c.entityType);
    } else {
      return invalid(`Unknown match type ${c.matchType}`);
    }
  }
  const has = (t: string) => exact.has(t) || typed.has(t);
  if (has('ip') && (has('user') || has('client-id'))) {
    return invalid('Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
  }
  const entries: { entity: QuotaEntityPart[]; values: { key: string; value: number }[] }[] = [];
  // Strict with no components asks for entities of no type: there are none.
  if (components.length === 0 && strict) return { errorCode: 0, entries };
  for (const e of image.entities.values()) {
    const names = new Map(e.entity.map((p) => [p.entityType, p.entityName]));
    let ok = true;
    for (const [t, name] of exact) if (!names.has(t) || names.get(t) !== name) ok = false;
    for (const t of typed) if (!names.has(t)) ok = false;
    if (ok && strict && names.size !== exact.size + typed.size) ok = false;
    if (!ok) continue;
    entries.push({ entity: e.entity.map((p) => ({ ...p })), values: [...e.quotas].map(([key, value]) => ({ key, value })) });
  }
  return { errorCode: 0, entries };
}

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

// Finalized feature levels (metadata.version among them) and the producer-id block cursor.
import type { FeatureLevelRecord, ProducerIdsRecord } from '../protocol/index.js';

export const METADATA_VERSION_FEATURE = 'metadata.version';

export class FeaturesImage {
  static readonly EMPTY = new FeaturesImage(new Map());

  /** Finalized levels by feature name; a level of 0 is "not finalized" and is never stored. */
  constructor(readonly finalizedVersions: ReadonlyMap<string, number>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.finalizedVersions.size === 0; }

  /** The finalized metadata.version level, or undefined before the cluster has written one. */
  get metadataVersion(): number | undefined { return this.finalizedVersions.get(METADATA_VERSION_FEATURE); }
}

export class FeaturesDelta {
  /** Level by name; 0 removes the feature (Kafka's FeaturesDelta does the same). */
  readonly changes = new Map<string, number>();

  constructor(readonly image: FeaturesImage) {}

  replay(r: FeatureLevelRecord): void {
    this.changes.set(r.name, r.featureLevel);
  }

  apply(): FeaturesImage {
    if (this.changes.size === 0) return this.image;
    const levels = new Map(this.image.finalizedVersions);
    for (const [name, level] of this.changes) {
      if (level === 0) levels.delete(name);
      else levels.set(name, level);
    }
    return new FeaturesImage(levels);
  }
}

export class ProducerIdsImage {
  static readonly EMPTY = new ProducerIdsImage(-1n);

  /** The first producer id not yet handed out in a block; -1 before any block. */
  constructor(readonly nextProducerId: bigint) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.nextProducerId === -1n; }
}

export class ProducerIdsDelta {
  nextProducerId: bigint;
  /** The broker and epoch that took the latest block, for logs and tests. */
  lastBlockOwner: { brokerId: number; brokerEpoch: bigint } | null = null;

  constructor(readonly image: ProducerIdsImage) {
    this.nextProducerId = image.nextProducerId;
  }

  replay(r: ProducerIdsRecord): void {
    this.nextProducerId = r.nextProducerId;
    this.lastBlockOwner = { brokerId: r.brokerId, brokerEpoch: r.brokerEpoch };
  }

  apply(): ProducerIdsImage {
    return this.nextProducerId === this.image.nextProducerId ? this.image : new ProducerIdsImage(this.nextProducerId);
  }
}

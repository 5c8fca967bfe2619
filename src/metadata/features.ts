// Finalized feature levels (metadata.version among them), the features this software supports,
// and the producer-id block cursor.
import type { FeatureLevelRecord, ProducerIdsRecord } from '../protocol/index.js';

export const METADATA_VERSION_FEATURE = 'metadata.version';
/** KIP-890 part 2: at level 2 clients end every transaction with an epoch bump (EndTxn v5, Produce v12, TxnOffsetCommit v5). */
export const TRANSACTION_VERSION_FEATURE = 'transaction.version';

/** KIP-932: at level 1 the share-group APIs are served and advertised (Kafka 4.2 finalizes it in a new cluster). */
export const SHARE_VERSION_FEATURE = 'share.version';

/**
 * KIP-966: at level 1 the controller keeps eligible leader replicas (ELR) and may elect a leader from
 * them when the ISR is empty, and a leader advances the high watermark only while its ISR has
 * min.insync.replicas members. Kafka 4.1 finalizes it in a new cluster.
 */
export const ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE = 'eligible.leader.replicas.version';

/** A feature this software can run at: the levels it supports, and the level a new cluster finalizes. */
export interface FeatureSupport { name: string; minVersion: number; maxVersion: number; bootstrapLevel: number }

/**
 * What ApiVersions lists as supported. Kafka 4.0 formats a new cluster with transaction.version 2
 * (and a cluster upgraded from older software keeps the level it had, 0 when it never recorded one),
 * which is what a client reads to choose transaction version 2 (Java's producer: finalized level
 * >= 2 and the broker offers EndTxn v5). Kafka 4.2 formats a new cluster with share.version 1
 * (share groups on); Kafka 4.1 eligible.leader.replicas.version 1. metadata.version is not listed: nothing here reads it yet.
 */
export const SUPPORTED_FEATURES: readonly FeatureSupport[] = [
  { name: TRANSACTION_VERSION_FEATURE, minVersion: 0, maxVersion: 2, bootstrapLevel: 2 },
  { name: SHARE_VERSION_FEATURE, minVersion: 0, maxVersion: 1, bootstrapLevel: 1 },
  { name: ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE, minVersion: 0, maxVersion: 1, bootstrapLevel: 1 },
];

/** The FeatureLevelRecords that begin a new cluster's metadata (Kafka's bootstrap metadata), level 0 ones left out. */
export function bootstrapFeatureLevels(): FeatureLevelRecord[] {
  return SUPPORTED_FEATURES.filter((f) => f.bootstrapLevel > 0).map((f) => ({ name: f.name, featureLevel: f.bootstrapLevel }));
}

export class FeaturesImage {
  static readonly EMPTY = new FeaturesImage(new Map());

  /** Finalized levels by feature name; a level of 0 is "not finalized" and is never stored. */
  constructor(readonly finalizedVersions: ReadonlyMap<string, number>) {
    Object.freeze(this);
  }

  get isEmpty(): boolean { return this.finalizedVersions.size === 0; }

  /** The finalized metadata.version level, or undefined before the cluster has written one. */
  get metadataVersion(): number | undefined { return this.finalizedVersions.get(METADATA_VERSION_FEATURE); }

  /** The finalized share.version; 0 (no share groups) when none was recorded. */
  get shareVersion(): number { return this.finalizedVersions.get(SHARE_VERSION_FEATURE) ?? 0; }

  /** Whether eligible leader replicas are on (eligible.leader.replicas.version >= 1; KIP-966). */
  get elrEnabled(): boolean { return (this.finalizedVersions.get(ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE) ?? 0) >= 1; }

  /** The finalized transaction.version; 0 (transaction version 1 semantics) when none was recorded. */
  get transactionVersion(): number { return this.finalizedVersions.get(TRANSACTION_VERSION_FEATURE) ?? 0; }
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

// FeatureControlManager: the feature levels a new cluster finalizes (FeatureLevelRecords at the
// start of the metadata log) and the check that a registering broker supports every finalized
// level. The finalized levels themselves live in the metadata image (features sub-image).
import { ErrorCode } from '../protocol/index.js';
import {
  ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE, METADATA_VERSION_FEATURE, SHARE_VERSION_FEATURE, SUPPORTED_FEATURES, TRANSACTION_VERSION_FEATURE, metadataRecord,
  type FeatureSupport, type MetadataImage, type MetadataRecordOf,
} from '../metadata/index.js';

export const KRAFT_VERSION_FEATURE = 'kraft.version';
export const GROUP_VERSION_FEATURE = 'group.version';

/**
 * metadata.version levels (Kafka's MetadataVersion feature levels): 7 is 3.3-IV3, the oldest a
 * KRaft cluster of Kafka 4 runs at; 25 is 4.0-IV3, what Kafka 4.0 formats a new cluster with.
 */
export const METADATA_VERSION_MINIMUM = 7;
export const METADATA_VERSION_LATEST = 25;

/**
 * Every feature the controller knows: the broker-visible ones from the metadata room, plus
 * metadata.version, group.version (KIP-848, level 1 in Kafka 4.0) and kraft.version (KIP-853).
 * kraft.version is the Raft room's: Kafka keeps it in a KRaftVersionRecord control record, never in
 * a FeatureLevelRecord, so its bootstrap level here is 0 and the controller writes no record for it.
 */
export const CONTROLLER_FEATURES: readonly FeatureSupport[] = [
  { name: METADATA_VERSION_FEATURE, minVersion: METADATA_VERSION_MINIMUM, maxVersion: METADATA_VERSION_LATEST, bootstrapLevel: METADATA_VERSION_LATEST },
  { name: KRAFT_VERSION_FEATURE, minVersion: 0, maxVersion: 1, bootstrapLevel: 0 },
  { name: GROUP_VERSION_FEATURE, minVersion: 0, maxVersion: 1, bootstrapLevel: 1 },
  ...SUPPORTED_FEATURES.filter((f) => f.name !== METADATA_VERSION_FEATURE && f.name !== GROUP_VERSION_FEATURE),
];

/** Kafka's metadata.version names in level order, from METADATA_VERSION_MINIMUM (3.3-IV3) to METADATA_VERSION_LATEST (4.0-IV3). */
const METADATA_VERSION_NAMES: readonly string[] = [
  '3.3-IV3', '3.4-IV0', '3.5-IV0', '3.5-IV1', '3.5-IV2', '3.6-IV0', '3.6-IV1', '3.6-IV2', '3.7-IV0', '3.7-IV1',
  '3.7-IV2', '3.7-IV3', '3.7-IV4', '3.8-IV0', '3.9-IV0', '4.0-IV0', '4.0-IV1', '4.0-IV2', '4.0-IV3',
];

/**
 * The metadata.version level of a release version as `kafka-storage format --release-version` takes
 * it: "3.9-IV0", or a bare release ("3.9"), which is its last IV. Undefined outside 3.3-IV3..4.0-IV3.
 */
export function metadataVersionLevel(release: string): number | undefined {
  let i = METADATA_VERSION_NAMES.indexOf(release);
  if (i < 0) METADATA_VERSION_NAMES.forEach((n, j) => { if (n.startsWith(`${release}-IV`)) i = j; });
  return i < 0 ? undefined : METADATA_VERSION_MINIMUM + i;
}

/** "4.0-IV3" for level 25; the bare level for one without a name here. */
export function metadataVersionName(level: number): string {
  return METADATA_VERSION_NAMES[level - METADATA_VERSION_MINIMUM] ?? String(level);
}

/**
 * The level a cluster formatted at metadata.version `metadataVersion` starts a feature at (Kafka's
 * FeatureVersion bootstrap versions: group.version 1 from 4.0-IV0, transaction.version 2 from
 * 4.0-IV2, share.version 1 at the latest); kraft.version is the quorum's to say.
 */
export function defaultFeatureLevel(name: string, metadataVersion: number): number {
  switch (name) {
    case METADATA_VERSION_FEATURE: return metadataVersion;
    case GROUP_VERSION_FEATURE: return metadataVersion >= 22 ? 1 : 0;
    case TRANSACTION_VERSION_FEATURE: return metadataVersion >= 24 ? 2 : 0;
    // Kafka ties share.version 1 to 4.1's metadata versions; the latest level known here stands for them.
    case SHARE_VERSION_FEATURE: return metadataVersion >= METADATA_VERSION_LATEST ? 1 : 0;
    // Kafka 4.1 turns eligible leader replicas on in a new cluster; the same stand-in as share.version.
    case ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE: return metadataVersion >= METADATA_VERSION_LATEST ? 1 : 0;
    default: return 0;
  }
}

export interface FeatureRange {
  readonly name: string;
  readonly minSupportedVersion: number;
  readonly maxSupportedVersion: number;
}

/** UpdateFeatures' upgradeType values (v1+); v0's allowDowngrade maps to SAFE_DOWNGRADE. */
export const FeatureUpgradeType = { UPGRADE: 1, SAFE_DOWNGRADE: 2, UNSAFE_DOWNGRADE: 3 } as const;

export interface FeatureUpdate { readonly feature: string; readonly level: number; readonly upgradeType: number }

export class FeatureControlManager {
  constructor(readonly supported: readonly FeatureSupport[] = CONTROLLER_FEATURES) {}

  /**
   * Kafka's FeatureControlManager.updateFeatures, for the features other than metadata.version and
   * kraft.version (their changes need more than a record here): the FeatureLevelRecord of each update,
   * or why it is refused: a level this software or a registered broker does not support
   * (INVALID_UPDATE_VERSION), a downgrade asked as an upgrade (INVALID_UPDATE_VERSION). Level 0
   * removes the feature.
   */
  updateFeature(image: MetadataImage, u: FeatureUpdate): { record: MetadataRecordOf<'FeatureLevelRecord'> } | { errorCode: number; message: string } {
    const f = this.supported.find((x) => x.name === u.feature);
    const refuse = (message: string) => ({ errorCode: ErrorCode.INVALID_UPDATE_VERSION, message });
    if (f === undefined || u.feature === METADATA_VERSION_FEATURE || u.feature === KRAFT_VERSION_FEATURE) {
      return refuse(`Feature ${u.feature} cannot be updated here: the features that can are ${this.supported.filter((x) => x.name !== METADATA_VERSION_FEATURE && x.name !== KRAFT_VERSION_FEATURE).map((x) => x.name).join(', ')}.`);
    }
    if (u.level < 0 || (u.level !== 0 && u.level < f.minVersion) || u.level > f.maxVersion) {
      return refuse(`Invalid update version ${u.level} for feature ${u.feature}: supported levels are ${f.minVersion}-${f.maxVersion}.`);
    }
    const current = image.features.finalizedVersions.get(u.feature) ?? 0;
    if (u.level < current && u.upgradeType === FeatureUpgradeType.UPGRADE) {
      return refuse(`Can't downgrade the version of ${u.feature} from ${current} to ${u.level} without setting the upgrade type to safe or unsafe downgrade.`);
    }
    for (const b of image.cluster.brokers.values()) {
      const range = b.features.find((x) => x.name === u.feature);
      const [min, max] = range === undefined ? [0, 0] : [range.minSupportedVersion, range.maxSupportedVersion];
      if (u.level !== 0 && (u.level < min || u.level > max)) return refuse(`Invalid update version ${u.level} for feature ${u.feature}: broker ${b.id} supports ${min}-${max}.`);
    }
    return { record: metadataRecord('FeatureLevelRecord', { name: u.feature, featureLevel: u.level }) };
  }

  /** The FeatureLevelRecords that open a new cluster's log, metadata.version first; none once it has one. */
  bootstrapRecords(image: MetadataImage): MetadataRecordOf<'FeatureLevelRecord'>[] {
    if (image.features.metadataVersion !== undefined) return [];
    return this.supported
      .filter((f) => f.bootstrapLevel > 0 && f.name !== KRAFT_VERSION_FEATURE)
      .map((f) => metadataRecord('FeatureLevelRecord', { name: f.name, featureLevel: f.bootstrapLevel }));
  }

  /**
   * Why a broker with these supported ranges may not register, or null. A broker that does not
   * list metadata.version is taken to support only the oldest one; any other feature it does not
   * list is taken as [0, 0], so it cannot join a cluster that finalized that feature (Kafka 4).
   */
  registrationError(image: MetadataImage, features: readonly FeatureRange[]): { errorCode: number; message: string } | null {
    for (const [name, level] of image.features.finalizedVersions) {
      const range = features.find((f) => f.name === name)
        ?? (name === METADATA_VERSION_FEATURE
          ? { name, minSupportedVersion: METADATA_VERSION_MINIMUM, maxSupportedVersion: METADATA_VERSION_MINIMUM }
          : { name, minSupportedVersion: 0, maxSupportedVersion: 0 });
      if (level < range.minSupportedVersion || level > range.maxSupportedVersion) {
        return {
          errorCode: ErrorCode.UNSUPPORTED_VERSION,
          message: `Unable to register because the broker does not support finalized version ${level} of ${name}. The broker wants a version between ${range.minSupportedVersion} and ${range.maxSupportedVersion}, inclusive.`,
        };
      }
    }
    return null;
  }
}

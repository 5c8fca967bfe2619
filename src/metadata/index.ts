// The metadata room's door: metadata record serde, the immutable MetadataImage and its
// sub-images, MetadataDelta, snapshots (image ↔ records) and the loader that feeds publishers.
export { MetadataError, type MetadataErrorKind } from './errors.js';
export {
  METADATA_FRAME_VERSION, MetadataRecordType, metadataRecord, metadataRecordName, latestVersion,
  serializeMetadataRecord, deserializeMetadataRecord,
  type MetadataRecord, type MetadataRecordOf, type MetadataRecordName, type MetadataRecordDataByName,
  type DecodedMetadataRecord,
} from './records.js';
export {
  MetadataImage, MetadataDelta, EMPTY_PROVENANCE, provenance,
  type MetadataProvenance, type MetadataImageParts,
} from './image.js';
export {
  ClusterImage, ClusterDelta, BrokerFencingChange, BrokerInControlledShutdownChange,
  type BrokerRegistration, type ControllerRegistration, type Endpoint, type SupportedFeature,
} from './cluster.js';
export {
  TopicsImage, TopicImage, TopicsDelta, TopicDelta, mergePartitionChange, partitionFromRecord,
  NO_LEADER, NO_LEADER_CHANGE, NO_LEADER_RECOVERY_CHANGE, LeaderRecoveryState, DIRECTORY_MIGRATING,
  type PartitionRegistration, type LocalReplicaChanges, type LocalPartitionChange, type TopicPartitionRef,
} from './topics.js';
export {
  ConfigurationsImage, ConfigurationsDelta, ConfigResourceType, configResourceKey, type ConfigResource,
} from './configs.js';
export {
  FeaturesImage, FeaturesDelta, ProducerIdsImage, ProducerIdsDelta, METADATA_VERSION_FEATURE, TRANSACTION_VERSION_FEATURE, SHARE_VERSION_FEATURE, ELIGIBLE_LEADER_REPLICAS_VERSION_FEATURE, SUPPORTED_FEATURES,
  bootstrapFeatureLevels, type FeatureSupport,
} from './features.js';
export {
  AclsImage, AclsDelta, ScramImage, ScramDelta, ScramMechanism, DelegationTokensImage, DelegationTokensDelta,
  scramCredentialFromSaltedPassword, type StandardAcl, type ScramCredential, type DelegationToken,
} from './security.js';
export {
  ResourceType, PatternType, AclOperation, AclPermissionType, CLUSTER_RESOURCE_NAME, WILDCARD_RESOURCE, WILDCARD_PRINCIPAL, WILDCARD_HOST,
  invalidBinding, invalidFilter, filterMatches, type AclBindingFilter,
} from './acls.js';
export {
  ClientQuotasImage, ClientQuotasDelta, quotaEntityKey, describeClientQuotas, QuotaMatchType, type ClientQuotaEntry, type QuotaEntityPart, type QuotaFilterComponent, type DescribedQuotas,
} from './quotas.js';
export { imageToRecords } from './snapshot.js';
export {
  MetadataLoader, loadSnapshot, type MetadataBatch, type MetadataPublisher, type LoaderManifest,
} from './loader.js';

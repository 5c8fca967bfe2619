// The client room's door: connections to brokers, and a cluster-aware client on top
// (used between brokers, by the CLI and by the tests).
export { BrokerConnection, ClientError, type ConnectionOptions, type SendOptions } from './connection.js';
export { SaslLogin, type ClientSasl, type SaslLoginRequest, type SaslLoginStep } from './sasl-login.js';
export { murmur2, partitionForKey } from './partitioner.js';
export { ClusterClient, KafkaError, parseHostPort, type ClusterClientOptions, type TopicInfo, type PartitionInfo, type BrokerAddress } from './cluster.js';
export { coordinatorFor, describeGroup, committedOffsets, listOffsets, decodeAssignment, type PartitionRef, type GroupMember, type GroupDescription } from './groups.js';
export { describeShareGroup, shareGroupLag, type ShareGroupMember } from './share-groups.js';
export { describeTopicConfigs, type TopicConfig } from './configs.js';
export { clientSecurityFromProperties, ClientConfigError, type ClientSecurity } from './security-properties.js';
export { InterBrokerConnections, type InterBrokerEndpoint, type InterBrokerOptions } from './inter-broker.js';
export {
  Cluster, Producer, Outcome, fetchCommitted, committedPositions, commitPositions,
  type ProducerOptions, type TopicPartitions, type FetchedRecord, type FetchedPartition, type FetchedRun, type FetchOptions,
} from './producer.js';
export { ConsumerGroupMember, type GroupMemberOptions, type HeartbeatResult } from './consumer-group-member.js';

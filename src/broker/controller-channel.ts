// The broker's port to the active controller: one method per operation that changes cluster
// state, each answering with the operation's response once its records are committed. The single
// node runs the controller in-process (ControllerService); a broker that is not the active
// controller will put a forwarding implementation behind the same port (the request goes to the
// controller's listener). Every method answers NOT_CONTROLLER (in its response) when the
// controller it reached is not active, so a caller can retry elsewhere.
import type {
  AllocateProducerIdsRequest, AllocateProducerIdsResponse, BrokerHeartbeatRequest, BrokerHeartbeatResponse,
  BrokerRegistrationRequest, BrokerRegistrationResponse, CreatePartitionsRequestCreatePartitionsTopic,
  CreatePartitionsResponseCreatePartitionsTopicResult, CreateTopicsRequest, CreateTopicsResponseCreatableTopicResult,
  DeleteTopicsResponseDeletableTopicResult, ElectLeadersRequest, ElectLeadersResponseReplicaElectionResult,
} from '../protocol/index.js';

/** One resource's config change, as AlterConfigs (`replace`: the set replaces every dynamic config) or IncrementalAlterConfigs send it. */
export interface ConfigChange {
  resourceType: number;
  resourceName: string;
  ops: { name: string; configOperation: number; value: string | null }[];
  replace: boolean;
  validateOnly: boolean;
}

export interface ResourceResult { errorCode: number; errorMessage: string | null }

export interface ControllerChannel {
  createTopics(request: CreateTopicsRequest): Promise<CreateTopicsResponseCreatableTopicResult[]>;
  deleteTopics(targets: { name: string | null; topicId: string }[]): Promise<DeleteTopicsResponseDeletableTopicResult[]>;
  createPartitions(topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean):
    Promise<CreatePartitionsResponseCreatePartitionsTopicResult[]>;
  /** ElectLeaders: the per-partition results; a top-level error (NOT_CONTROLLER) in `errorCode`. */
  electLeaders(request: ElectLeadersRequest): Promise<{ errorCode: number; results: ElectLeadersResponseReplicaElectionResult[] }>;
  alterConfigs(change: ConfigChange): Promise<ResourceResult>;
  allocateProducerIds(request: AllocateProducerIdsRequest): Promise<AllocateProducerIdsResponse>;
  registerBroker(request: BrokerRegistrationRequest): Promise<BrokerRegistrationResponse>;
  brokerHeartbeat(request: BrokerHeartbeatRequest): Promise<BrokerHeartbeatResponse>;
}

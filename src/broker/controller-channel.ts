// The broker's port to the active controller: one method per operation that changes cluster
// state, each answering with the operation's response once its records are committed. The
// controller runs in the process whose Raft voter leads the metadata quorum (ControllerService);
// every broker uses ForwardingControllerChannel, which calls that service when it is local and
// active and otherwise forwards the operation to the active controller's node. Every method
// answers NOT_CONTROLLER (in its response) when no active controller was reached, so a caller can
// retry.
import type {
  AllocateProducerIdsRequest, AllocateProducerIdsResponse, AlterPartitionRequest, AlterPartitionResponse, BrokerHeartbeatRequest, BrokerHeartbeatResponse,
  BrokerRegistrationRequest, BrokerRegistrationResponse, CreatePartitionsRequestCreatePartitionsTopic,
  CreatePartitionsResponseCreatePartitionsTopicResult, CreateTopicsRequest, CreateTopicsResponseCreatableTopicResult,
  DeleteTopicsResponseDeletableTopicResult, ElectLeadersRequest, ElectLeadersResponseReplicaElectionResult,
  AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
  AlterClientQuotasRequest, AlterClientQuotasResponseEntryData,
  CreateAclsRequestAclCreation, CreateAclsResponseAclCreationResult, DeleteAclsRequestDeleteAclsFilter, DeleteAclsResponseDeleteAclsFilterResult,
  AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, UpdateFeaturesRequest, UpdateFeaturesResponse,
} from '../protocol/index.js';
import type { ForwardedFor } from './envelope.js';

/** One resource's config change, as AlterConfigs (`replace`: the set replaces every dynamic config) or IncrementalAlterConfigs send it. */
export interface ConfigChange {
  resourceType: number;
  resourceName: string;
  ops: { name: string; configOperation: number; value: string | null }[];
  replace: boolean;
  validateOnly: boolean;
}

export interface ResourceResult { errorCode: number; errorMessage: string | null }

/**
 * The client-facing changes take `caller`, the client a broker asks for: forwarded to a remote
 * controller, the request goes in an Envelope with the client's principal, so the controller
 * authorizes it and charges controller_mutation_rate as that client (without it, as the broker).
 */
export interface ControllerChannel {
  createTopics(request: CreateTopicsRequest, caller?: ForwardedFor): Promise<CreateTopicsResponseCreatableTopicResult[]>;
  deleteTopics(targets: { name: string | null; topicId: string }[], caller?: ForwardedFor): Promise<DeleteTopicsResponseDeletableTopicResult[]>;
  createPartitions(topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean, caller?: ForwardedFor):
    Promise<CreatePartitionsResponseCreatePartitionsTopicResult[]>;
  /** ElectLeaders: the per-partition results; a top-level error (NOT_CONTROLLER) in `errorCode`. */
  electLeaders(request: ElectLeadersRequest, caller?: ForwardedFor): Promise<{ errorCode: number; results: ElectLeadersResponseReplicaElectionResult[] }>;
  alterConfigs(change: ConfigChange, caller?: ForwardedFor): Promise<ResourceResult>;
  /** AlterPartitionReassignments: per-partition results; NOT_CONTROLLER at the top level when none was reached. */
  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest, caller?: ForwardedFor): Promise<AlterPartitionReassignmentsResponse>;
  /** ListPartitionReassignments, as the active controller sees them. */
  listPartitionReassignments(request: ListPartitionReassignmentsRequest, caller?: ForwardedFor): Promise<ListPartitionReassignmentsResponse>;
  /** UpdateFeatures with upgradeType set (v1's form); absent where no controller takes it. */
  updateFeatures?(request: UpdateFeaturesRequest, caller?: ForwardedFor): Promise<UpdateFeaturesResponse>;
  /** AlterClientQuotas: an error per entry (NOT_CONTROLLER on each when none was reached). */
  alterClientQuotas(request: AlterClientQuotasRequest, caller?: ForwardedFor): Promise<AlterClientQuotasResponseEntryData[]>;
  /** CreateAcls: one result per creation (NOT_CONTROLLER in each when none was reached). */
  createAcls(creations: CreateAclsRequestAclCreation[], caller?: ForwardedFor): Promise<CreateAclsResponseAclCreationResult[]>;
  /** DeleteAcls: one result per filter with the ACLs it removed. */
  deleteAcls(filters: DeleteAclsRequestDeleteAclsFilter[], caller?: ForwardedFor): Promise<DeleteAclsResponseDeleteAclsFilterResult[]>;
  allocateProducerIds(request: AllocateProducerIdsRequest): Promise<AllocateProducerIdsResponse>;
  /** AlterUserScramCredentials: per-user results; NOT_CONTROLLER for every user when none was reached. */
  alterUserScramCredentials(request: AlterUserScramCredentialsRequest, caller?: ForwardedFor): Promise<AlterUserScramCredentialsResponse>;
  registerBroker(request: BrokerRegistrationRequest): Promise<BrokerRegistrationResponse>;
  brokerHeartbeat(request: BrokerHeartbeatRequest): Promise<BrokerHeartbeatResponse>;
  /**
   * AlterPartition: a partition leader's ISR change, answered once committed (the sender applies
   * it when its metadata shows it). `version` (default 3) picks the errors the sender understands.
   */
  alterPartition(request: AlterPartitionRequest, version?: number): Promise<AlterPartitionResponse>;
}

/**
 * The operation reached a node that is not (or no longer) the active controller: Kafka's
 * NOT_CONTROLLER, retriable. The one error for it, whether the metadata log or the controller
 * driver refuses.
 */
export class NotControllerError extends Error {
  override name = 'NotControllerError';
}

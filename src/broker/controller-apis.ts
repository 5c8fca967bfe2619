// The controller's APIs on the controller listener (Kafka's ControllerApis): what brokers send to
// the active controller — registrations, heartbeats, producer-id blocks, ISR changes — and the cluster changes
// they forward for their clients (CreateTopics, DeleteTopics, CreatePartitions, ElectLeaders,
// AlterPartitionReassignments, ListPartitionReassignments, AlterConfigs, IncrementalAlterConfigs, AlterClientQuotas, CreateAcls, DeleteAcls). Each is answered by the ControllerService in this process:
// NOT_CONTROLLER unless it is active, so the sender looks again. The quorum's own RPCs and
// DescribeQuorum share the listener and are answered by the Raft transport.
//
// This is what makes a controller-only node (process.roles=controller) reachable: it has no broker
// listener, and every broker finds the active controller's CONTROLLER endpoint in the voter set.
import { encodeResponseFrame } from '../protocol/index.js';
import type { OtherRequests } from '../raft/index.js';
import type { BrokerConfig } from '../config/index.js';
import { ConfigAdmin } from './config-admin.js';
import type { ControllerService } from './controller-service.js';
import type { LogMetadata } from './metadata-log.js';
import type { RequestContext } from './context.js';
import { Router } from './router.js';
import type { ControllerServices, TopicAdmin } from './services.js';
import { apiVersionsHandler } from './handlers/18-api-versions.js';
import { createTopicsHandler } from './handlers/19-create-topics.js';
import { deleteTopicsHandler } from './handlers/20-delete-topics.js';
import { alterConfigsHandler } from './handlers/33-alter-configs.js';
import { createPartitionsHandler } from './handlers/37-create-partitions.js';
import { electLeadersHandler } from './handlers/43-elect-leaders.js';
import { alterPartitionReassignmentsHandler } from './handlers/45-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from './handlers/46-list-partition-reassignments.js';
import { incrementalAlterConfigsHandler } from './handlers/44-incremental-alter-configs.js';
import { brokerRegistrationHandler } from './handlers/62-broker-registration.js';
import { brokerHeartbeatHandler } from './handlers/63-broker-heartbeat.js';
import { allocateProducerIdsHandler } from './handlers/67-allocate-producer-ids.js';
import { alterPartitionHandler } from './handlers/56-alter-partition.js';
import { alterClientQuotasHandler } from './handlers/49-alter-client-quotas.js';
import { createAclsHandler } from './handlers/30-create-acls.js';
import { deleteAclsHandler } from './handlers/31-delete-acls.js';
import { alterUserScramCredentialsHandler } from './handlers/51-alter-user-scram-credentials.js';

export interface ControllerApisOptions {
  readonly nodeId: number;
  readonly controller: ControllerService;
  readonly metadata: LogMetadata;
  readonly brokerConfig: BrokerConfig;
  readonly nowMs: () => number;
}

/** The router of the controller listener and the request handler the Raft transport calls with what is not its own. */
export function controllerApis(o: ControllerApisOptions): { router: Router<any>; serve: OtherRequests } {
  const c = o.controller;
  const router = new Router<any>();
  router.register(apiVersionsHandler(() => router.supportedVersions(), () => o.metadata.view().features()));
  for (const h of [createTopicsHandler, deleteTopicsHandler, createPartitionsHandler, electLeadersHandler, alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler, alterConfigsHandler, incrementalAlterConfigsHandler, alterClientQuotasHandler, alterUserScramCredentialsHandler,
    brokerRegistrationHandler, brokerHeartbeatHandler, allocateProducerIdsHandler, alterPartitionHandler, createAclsHandler, deleteAclsHandler]) router.register(h);
  const topicAdmin: TopicAdmin = {
    createTopics: (request) => c.createTopics(request),
    deleteTopics: (targets) => c.deleteTopics(targets),
    createPartitions: (topics, validateOnly) => c.createPartitions(topics, validateOnly),
  };
  const services = {
    topicAdmin, controller: c,
    configAdmin: new ConfigAdmin(() => o.metadata.view(), () => o.brokerConfig, () => o.nodeId, () => c, true),
    localController: c,
    // Brokers forward ACL changes only after checking the client's rights, so the controller takes them as they come.
    aclAdmin: { enabled: true, acls: () => o.metadata.image.acls },
  } satisfies ControllerServices & Record<string, unknown>;
  const serve: OtherRequests = async (header, frame, bodyOffset, clientAddress) => {
    const ctx: RequestContext<typeof services> = {
      header, apiVersion: header.requestApiVersion, connectionId: `controller:${clientAddress}`, clientAddress,
      listenerName: 'CONTROLLER', securityProtocol: 'PLAINTEXT', principal: 'User:ANONYMOUS', nowMs: o.nowMs(), services,
    };
    const outcome = await router.route(header, frame, bodyOffset, ctx);
    if (outcome.kind === 'close') return null;
    if (outcome.kind === 'none') return [];
    return encodeResponseFrame(outcome.apiKey, outcome.version, header.correlationId, outcome.body);
  };
  return { router, serve };
}

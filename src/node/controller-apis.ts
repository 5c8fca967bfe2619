// The controller's APIs on the controller listener (Kafka's ControllerApis): what brokers send to
// the active controller — registrations, heartbeats, producer-id blocks, ISR changes — and the
// changes they forward for their clients (CreateTopics, DeleteTopics, CreatePartitions,
// ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments, AlterConfigs,
// IncrementalAlterConfigs, AlterClientQuotas, CreateAcls, DeleteAcls, AlterUserScramCredentials),
// wrapped in an Envelope with the client's principal or, from older brokers, as they are. Each is
// answered by the ControllerService in this process: NOT_CONTROLLER unless it is active, so the
// sender looks again. The quorum's own RPCs and DescribeQuorum share the listener and are answered
// by the Raft transport.
//
// Who is asking is the connection's principal (client certificate, SASL; controller-listener.ts),
// or for an Envelope's inner request the client's. With an authorizer configured every request is
// checked (CONTROLLER_LISTENER_RULES), and controller_mutation_rate is charged here, per client.
//
// This is what makes a controller-only node (process.roles=controller) reachable: it has no broker
// listener, and every broker finds the active controller's CONTROLLER endpoint in the voter set.
import { decodeRequestHeader, encodeResponseFrame, type RequestHeader } from '../protocol/index.js';
import type { OtherRequests } from '../raft/index.js';
import type { BrokerConfig } from '../config/index.js';
import {
  ConfigAdmin, Router, apiVersionsHandler, createTopicsHandler, deleteTopicsHandler, alterConfigsHandler, createPartitionsHandler, electLeadersHandler,
  alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler, incrementalAlterConfigsHandler, brokerRegistrationHandler, brokerHeartbeatHandler,
  allocateProducerIdsHandler, alterPartitionHandler, alterClientQuotasHandler, updateFeaturesHandler, createAclsHandler, deleteAclsHandler, alterUserScramCredentialsHandler, envelopeHandler,
  CONTROLLER_LISTENER_RULES, FORWARDED_APIS, innerResponseData, type RequestContext, type ControllerServices, type TopicAdmin, type EnvelopeServices,
  type ClientQuotaManager,
} from '../broker/index.js';
import type { ControllerService } from './controller-service.js';
import type { LogMetadata } from './metadata-log.js';
import { controllerAuthz } from './controller-listener.js';

export interface ControllerApisOptions {
  readonly nodeId: number;
  readonly controller: ControllerService;
  readonly metadata: LogMetadata;
  readonly brokerConfig: BrokerConfig;
  readonly nowMs: () => number;
  /** controller_mutation_rate: the active controller's quotas (undefined while this controller is not active). */
  readonly mutationQuotas?: () => ClientQuotaManager | undefined;
  /** num.partitions, for counting what a CreateTopics without a partition count costs. */
  readonly defaultNumPartitions?: number;
}

/** The router of the controller listener and the request handler the Raft transport calls with what is not its own. */
export function controllerApis(o: ControllerApisOptions): { router: Router<any>; serve: OtherRequests } {
  const c = o.controller;
  const router = new Router<any>();
  router.register(apiVersionsHandler(() => router.supportedVersions(), () => o.metadata.view().features()));
  for (const h of [createTopicsHandler, deleteTopicsHandler, createPartitionsHandler, electLeadersHandler, alterPartitionReassignmentsHandler, listPartitionReassignmentsHandler, alterConfigsHandler, incrementalAlterConfigsHandler, alterClientQuotasHandler, updateFeaturesHandler, alterUserScramCredentialsHandler,
    brokerRegistrationHandler, brokerHeartbeatHandler, allocateProducerIdsHandler, alterPartitionHandler, createAclsHandler, deleteAclsHandler, envelopeHandler]) router.register(h);
  const authz = controllerAuthz(o.brokerConfig, () => o.metadata.image.acls);
  if (authz !== null) {
    router.authorizer = (ctx) => authz(ctx.principal, ctx.clientAddress);
    router.authorizationRules = CONTROLLER_LISTENER_RULES;
  }
  const listener = o.brokerConfig.controllerListenerNames[0] ?? 'CONTROLLER';
  const securityProtocol = o.brokerConfig.securityProtocolMap.get(listener.toUpperCase()) ?? 'PLAINTEXT';
  const topicAdmin: TopicAdmin = {
    createTopics: (request) => c.createTopics(request),
    deleteTopics: (targets) => c.deleteTopics(targets),
    createPartitions: (topics, validateOnly) => c.createPartitions(topics, validateOnly),
  };
  // controller_mutation_rate is charged for clients' changes, which come in Envelopes: not for what
  // brokers send as themselves (internal topics they create; older brokers charged their clients).
  const contextOf = (header: RequestHeader, clientAddress: string, principal: string, forwarded: boolean): RequestContext<typeof services> => ({
    header, apiVersion: header.requestApiVersion, connectionId: `controller:${clientAddress}`, clientAddress,
    listenerName: listener, securityProtocol, principal, nowMs: o.nowMs(), services: forwarded ? forwardedServices : services,
  });
  const services = {
    topicAdmin, controller: c,
    deleteTopicEnable: o.brokerConfig.get('delete.topic.enable') as boolean,
    configAdmin: new ConfigAdmin(() => o.metadata.view(), () => o.brokerConfig, () => o.nodeId, () => c, true),
    localController: c,
    metadata: () => o.metadata.view(),
    ...(o.defaultNumPartitions !== undefined ? { defaultNumPartitions: o.defaultNumPartitions } : {}),
    // Brokers answer SECURITY_DISABLED themselves; what they forward is checked here (CLUSTER ALTER) when this controller has an authorizer.
    aclAdmin: { enabled: true, acls: () => o.metadata.image.acls },
    /** An Envelope's inner request, run as the client it names (src/broker/handlers/58-envelope.ts). */
    forwarded: async (requestData: Buffer, principal: string, clientAddress: string): Promise<Buffer | null> => {
      let peeked: ReturnType<typeof decodeRequestHeader>;
      try {
        peeked = decodeRequestHeader(requestData);
      } catch {
        return null;
      }
      if (!peeked.known || !FORWARDED_APIS.has(peeked.header.requestApiKey)) return null;
      const outcome = await router.route(peeked.header, requestData, peeked.bodyOffset, contextOf(peeked.header, clientAddress, principal, true));
      if (outcome.kind !== 'response') return null;
      return innerResponseData(encodeResponseFrame(outcome.apiKey, outcome.version, peeked.header.correlationId, outcome.body));
    },
  } satisfies ControllerServices & EnvelopeServices & Record<string, unknown>;
  const forwardedServices = o.mutationQuotas ? { ...services, mutationQuotas: o.mutationQuotas } : services;
  const serve: OtherRequests = async (header, frame, bodyOffset, clientAddress, principal) => {
    const outcome = await router.route(header, frame, bodyOffset, contextOf(header, clientAddress, principal, false));
    if (outcome.kind === 'close') return null;
    if (outcome.kind === 'none') return [];
    return encodeResponseFrame(outcome.apiKey, outcome.version, header.correlationId, outcome.body);
  };
  return { router, serve };
}

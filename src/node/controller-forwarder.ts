// The ControllerChannel every broker uses: the ControllerService in this process when it is the
// active controller, else the operation forwarded to the active controller (Kafka's forwarding
// manager): a client's change goes in an Envelope naming the client (src/broker/envelope.ts), so the
// controller authorizes it and charges its controller_mutation_rate as that client; the broker's
// own requests (registration, heartbeats, ISR changes, internal topics) go as they are.
//
// Where the controller is: its node id is the Raft leader of `__cluster_metadata`; its address is
// that voter's CONTROLLER endpoint (controller.quorum.voters, or the voter set of KIP-853), where
// the controller listener serves the controller's APIs (controller-apis.ts). So a controller-only
// node (process.roles=controller) is reached the same way as a combined one.
//
// A forwarded change is answered once this node's image holds it, so a client that creates a
// topic through broker 2 and then asks broker 2 for Metadata sees it. During an election an
// operation waits up to ROUTE_WAIT_MS for a controller to be known and reachable, then answers
// NOT_CONTROLLER (retriable); so does a forwarded request whose answer never came (the change
// may have been made, as with Kafka), or one still waiting on a node that the metadata quorum has
// since replaced as leader. An Envelope the controller refuses (this broker's principal lacks
// CLUSTER_ACTION there) answers UNKNOWN_SERVER_ERROR, as Kafka's forwarding does: retrying cannot
// help. Nothing here throws out of a handler.
import { BrokerConnection, type ClientSasl } from '../client/index.js';
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from '../util/index.js';
import {
  ApiKey, ErrorCode, ZERO_UUID, decodeResponse, type EnvelopeResponse,
  type AllocateProducerIdsRequest, type AllocateProducerIdsResponse, type AlterPartitionRequest, type AlterPartitionResponse,
  type BrokerHeartbeatRequest, type BrokerHeartbeatResponse,
  type BrokerRegistrationRequest, type BrokerRegistrationResponse, type CreatePartitionsRequestCreatePartitionsTopic,
  type CreatePartitionsResponseCreatePartitionsTopicResult, type CreateTopicsRequest, type CreateTopicsResponseCreatableTopicResult,
  type AlterPartitionReassignmentsRequest, type AlterPartitionReassignmentsResponse, type ListPartitionReassignmentsRequest, type ListPartitionReassignmentsResponse,
  type AlterClientQuotasRequest, type AlterClientQuotasResponse, type AlterClientQuotasResponseEntryData, type UpdateFeaturesRequest, type UpdateFeaturesResponse,
  type CreateAclsRequestAclCreation, type CreateAclsResponseAclCreationResult, type DeleteAclsRequestDeleteAclsFilter, type DeleteAclsResponseDeleteAclsFilterResult,
  type AlterUserScramCredentialsRequest, type AlterUserScramCredentialsResponse,
  type DeleteTopicsResponseDeletableTopicResult, type DescribeQuorumRequest, type DescribeQuorumResponse, type ElectLeadersRequest, type ElectLeadersResponseReplicaElectionResult,
} from '../protocol/index.js';
import {
  encodeHostAddress, encodePrincipal, innerRequestData, STRICT_MUTATION_QUOTA_SINCE, type ConfigChange, type ControllerChannel, type ResourceResult, type ForwardedFor,
  type MetadataView,
} from '../broker/index.js';
import { scramNotController, type ControllerService } from './controller-service.js';
import type { LogMetadata } from './metadata-log.js';

/** How long an operation waits for a controller to be known and reachable (an election takes about one election timeout). */
const ROUTE_WAIT_MS = 5_000;
/** How long a forwarded change waits for this node's image to show it, at most (then it answers anyway). */
const CATCH_UP_WAIT_MS = 30_000;
const ROUTE_RETRY_MS = 20;
/** How often a forwarded request in flight checks that its node still leads the metadata quorum. */
const LEADER_WATCH_MS = 100;

const NOT_CONTROLLER_MESSAGE = 'This is not the active controller, and none could be reached; retry.';

export interface ForwardingOptions {
  readonly nodeId: number;
  readonly requestTimeoutMs: number;
  readonly logger: Logger;
  /** TLS towards the controller listener (security protocol SSL). */
  readonly tls?: ConnectionOptions;
  /** SASL towards the controller listener (SASL_PLAINTEXT, SASL_SSL). */
  readonly sasl?: ClientSasl;
}

type Route = { kind: 'local' } | { kind: 'remote'; conn: BrokerConnection; nodeId: number };

/**
 * KIP-599: the controller refuses a topic mutation over controller_mutation_rate
 * (THROTTLING_QUOTA_EXCEEDED) only from `strictSinceVersion` on, and throttles older clients
 * instead; it tells them apart by the forwarded request's version, as Kafka forwards the client's
 * own. A client below that version has its change forwarded at the version just below it.
 */
function throttledNotRefused(caller: ForwardedFor | undefined, strictSinceVersion: number): boolean {
  return caller?.apiVersion !== undefined && caller.apiVersion < strictSinceVersion;
}

export class ForwardingControllerChannel implements ControllerChannel {
  private connection: { nodeId: number; host: string; port: number; conn: Promise<BrokerConnection> } | null = null;
  private readonly waiters = new Set<() => void>();
  private closed = false;

  constructor(private readonly md: LogMetadata, private readonly local: ControllerService, private readonly o: ForwardingOptions) {
    md.onChange(() => { for (const w of [...this.waiters]) w(); });
  }

  close(): void {
    this.closed = true;
    void this.connection?.conn.then((c) => c.close(), () => {});
    this.connection = null;
    for (const w of [...this.waiters]) w();
  }

  // ---- ControllerChannel ---------------------------------------------------------------------

  createTopics(request: CreateTopicsRequest, caller?: ForwardedFor): Promise<CreateTopicsResponseCreatableTopicResult[]> {
    return this.route((c) => c.createTopics(request), async (conn) => {
      const version = throttledNotRefused(caller, STRICT_MUTATION_QUOTA_SINCE.createTopics) ? STRICT_MUTATION_QUOTA_SINCE.createTopics - 1 : 7;
      const r = await this.forward<{ topics: CreateTopicsResponseCreatableTopicResult[] }>(conn, caller, ApiKey.CreateTopics, version, request);
      const made = request.validateOnly ? [] : r.topics.filter((t) => t.errorCode === 0);
      // Before v7 the answer names no topic id.
      await this.waitFor((v) => made.every((t) => (t.topicId === ZERO_UUID ? v.topic(t.name) !== undefined : v.topic(t.name)?.id === t.topicId)));
      return r.topics;
    }, (errorCode, errorMessage) => request.topics.map((t) => ({
      name: t.name, topicId: ZERO_UUID, errorCode, errorMessage, topicConfigErrorCode: 0,
      numPartitions: -1, replicationFactor: -1, configs: null,
    })));
  }

  deleteTopics(targets: { name: string | null; topicId: string }[], caller?: ForwardedFor): Promise<DeleteTopicsResponseDeletableTopicResult[]> {
    return this.route((c) => c.deleteTopics(targets), async (conn) => {
      // An older client names its topics (ids came with v6).
      const byName = throttledNotRefused(caller, STRICT_MUTATION_QUOTA_SINCE.deleteTopics);
      const r = await this.forward<{ responses: DeleteTopicsResponseDeletableTopicResult[] }>(conn, caller, ApiKey.DeleteTopics, byName ? STRICT_MUTATION_QUOTA_SINCE.deleteTopics - 1 : 6,
        byName ? { topics: [], topicNames: targets.map((t) => t.name ?? ''), timeoutMs: 30_000 } : { topics: targets, topicNames: [], timeoutMs: 30_000 });
      const gone = r.responses.filter((t) => t.errorCode === 0);
      await this.waitFor((v) => gone.every((t) => v.topicById(t.topicId) === undefined && (t.name === null || v.topic(t.name) === undefined)));
      return r.responses;
    }, (errorCode, errorMessage) => targets.map((t) => ({ name: t.name, topicId: t.topicId, errorCode, errorMessage })));
  }

  createPartitions(topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean, caller?: ForwardedFor): Promise<CreatePartitionsResponseCreatePartitionsTopicResult[]> {
    return this.route((c) => c.createPartitions(topics, validateOnly), async (conn) => {
      const version = throttledNotRefused(caller, STRICT_MUTATION_QUOTA_SINCE.createPartitions) ? STRICT_MUTATION_QUOTA_SINCE.createPartitions - 1 : 3;
      const r = await this.forward<{ results: CreatePartitionsResponseCreatePartitionsTopicResult[] }>(conn, caller, ApiKey.CreatePartitions, version, { topics, timeoutMs: 30_000, validateOnly });
      const count = new Map(topics.map((t) => [t.name, t.count]));
      const grown = validateOnly ? [] : r.results.filter((t) => t.errorCode === 0);
      await this.waitFor((v) => grown.every((t) => (v.topic(t.name)?.partitions.length ?? 0) >= (count.get(t.name) ?? 0)));
      return r.results;
    }, (errorCode, errorMessage) => topics.map((t) => ({ name: t.name, errorCode, errorMessage })));
  }

  /** Forwarded without waiting for this node's image: the leaders it reports are the controller's answer. */
  electLeaders(request: ElectLeadersRequest, caller?: ForwardedFor): Promise<{ errorCode: number; results: ElectLeadersResponseReplicaElectionResult[] }> {
    return this.route((c) => c.electLeaders(request), async (conn) => {
      const r = await this.forward<{ errorCode: number; replicaElectionResults: ElectLeadersResponseReplicaElectionResult[] }>(conn, caller, ApiKey.ElectLeaders, 2, request);
      return { errorCode: r.errorCode, results: r.replicaElectionResults };
    }, (errorCode) => ({ errorCode, results: [] }));
  }

  /**
   * Answered once this node's image shows each accepted change: a started reassignment (the
   * replicas begin with the target, and the removed ones follow or are gone) or a cancelled one.
   */
  alterPartitionReassignments(request: AlterPartitionReassignmentsRequest, caller?: ForwardedFor): Promise<AlterPartitionReassignmentsResponse> {
    return this.route((c) => c.alterPartitionReassignments(request), async (conn) => {
      const r = await this.forward<AlterPartitionReassignmentsResponse>(conn, caller, ApiKey.AlterPartitionReassignments, 0, request);
      const accepted = request.topics.flatMap((t) => t.partitions
        .filter((p) => r.responses.find((x) => x.name === t.name)?.partitions.find((x) => x.partitionIndex === p.partitionIndex)?.errorCode === ErrorCode.NONE)
        .map((p) => ({ topic: t.name, partition: p.partitionIndex, target: p.replicas })));
      await this.waitFor(() => accepted.every((a) => {
        const p = this.md.image.topics.getTopic(a.topic)?.partitions.get(a.partition);
        if (p === undefined) return true;
        if (a.target === null) return p.addingReplicas.length === 0 && p.removingReplicas.length === 0;
        return a.target.every((id, i) => p.replicas[i] === id) && (p.replicas.length === a.target.length || p.removingReplicas.length > 0);
      }));
      return r;
    },
      (errorCode, errorMessage) => ({ throttleTimeMs: 0, errorCode, errorMessage, responses: [] }));
  }

  /** Answered once this node's image shows each accepted user's credentials as altered. */
  alterUserScramCredentials(request: AlterUserScramCredentialsRequest, caller?: ForwardedFor): Promise<AlterUserScramCredentialsResponse> {
    return this.route((c) => c.alterUserScramCredentials(request), async (conn) => {
      const r = await this.forward<AlterUserScramCredentialsResponse>(conn, caller, ApiKey.AlterUserScramCredentials, 0, request);
      const ok = new Set(r.results.filter((x) => x.errorCode === ErrorCode.NONE).map((x) => x.user));
      await this.waitFor(() => {
        const scram = this.md.image.scram;
        return request.deletions.every((d) => !ok.has(d.name) || scram.credential(d.name, d.mechanism) === undefined)
          && request.upsertions.every((u) => !ok.has(u.name) || scram.credential(u.name, u.mechanism)?.salt.equals(u.salt) === true);
      });
      return r;
    }, (errorCode, errorMessage) => scramNotController(request, errorMessage, errorCode));
  }

  /** Answered once this node's image holds the new levels. */
  updateFeatures(request: UpdateFeaturesRequest, caller?: ForwardedFor): Promise<UpdateFeaturesResponse> {
    return this.route((c) => c.updateFeatures(request), async (conn) => {
      const r = await this.forward<UpdateFeaturesResponse>(conn, caller, ApiKey.UpdateFeatures, 1, request);
      if (r.errorCode === ErrorCode.NONE && !request.validateOnly) {
        await this.waitFor(() => request.featureUpdates.every((u) => (this.md.image.features.finalizedVersions.get(u.feature) ?? 0) === u.maxVersionLevel));
      }
      return r;
    }, (errorCode, errorMessage) => ({ throttleTimeMs: 0, errorCode, errorMessage, results: request.featureUpdates.map((u) => ({ feature: u.feature, errorCode, errorMessage })) }));
  }

  listPartitionReassignments(request: ListPartitionReassignmentsRequest, caller?: ForwardedFor): Promise<ListPartitionReassignmentsResponse> {
    return this.route((c) => c.listPartitionReassignments(request),
      (conn) => this.forward<ListPartitionReassignmentsResponse>(conn, caller, ApiKey.ListPartitionReassignments, 0, request),
      (errorCode, errorMessage) => ({ throttleTimeMs: 0, errorCode, errorMessage, topics: [] }));
  }

  /**
   * A config change, as IncrementalAlterConfigs (or AlterConfigs when the set replaces every
   * dynamic config). A broker resource was checked by the broker it names (ConfigAdmin) before it
   * got here; the controller takes it for any broker id.
   */
  alterConfigs(change: ConfigChange, caller?: ForwardedFor): Promise<ResourceResult> {
    const refused = (errorCode: number = ErrorCode.NOT_CONTROLLER, errorMessage: string = NOT_CONTROLLER_MESSAGE): ResourceResult => ({ errorCode, errorMessage });
    return this.route((c) => c.alterConfigs(change), async (conn) => {
      const resource = { resourceType: change.resourceType, resourceName: change.resourceName };
      const r = change.replace
        ? await this.forward<{ responses: ResourceResult[] }>(conn, caller, ApiKey.AlterConfigs, 2, {
          resources: [{ ...resource, configs: change.ops.filter((x) => x.configOperation === 0).map((x) => ({ name: x.name, value: x.value })) }], validateOnly: change.validateOnly,
        })
        : await this.forward<{ responses: ResourceResult[] }>(conn, caller, ApiKey.IncrementalAlterConfigs, 1, { resources: [{ ...resource, configs: change.ops }], validateOnly: change.validateOnly });
      const out = r.responses[0];
      if (out === undefined) return refused();
      if (out.errorCode === 0 && !change.validateOnly) {
        await this.waitFor((v) => {
          const now = v.configs(change.resourceType, change.resourceName);
          return change.ops.every((x) => x.configOperation === 0 ? now.get(x.name) === x.value : x.configOperation === 1 ? !now.has(x.name) : true);
        });
      }
      return { errorCode: out.errorCode, errorMessage: out.errorMessage };
    }, refused);
  }

  /** Answered once this node's image holds every accepted entry's values. */
  alterClientQuotas(request: AlterClientQuotasRequest, caller?: ForwardedFor): Promise<AlterClientQuotasResponseEntryData[]> {
    return this.route((c) => c.alterClientQuotas(request), async (conn) => {
      const r = await this.forward<AlterClientQuotasResponse>(conn, caller, ApiKey.AlterClientQuotas, 1, request);
      if (!request.validateOnly) {
        const accepted = request.entries.filter((_, i) => r.entries[i]?.errorCode === ErrorCode.NONE);
        await this.waitFor(() => accepted.every((e) => {
          const now = this.md.image.clientQuotas.quotas(e.entity);
          return e.ops.every((op) => op.remove ? now?.has(op.key) !== true : now?.get(op.key) === op.value);
        }));
      }
      return r.entries;
    }, (errorCode, errorMessage) => request.entries.map((e) => ({ errorCode, errorMessage, entity: e.entity.map((x) => ({ ...x })) })));
  }

  /** Answered once this node's image holds the ACLs (so the client's next request here is checked against them). */
  createAcls(creations: CreateAclsRequestAclCreation[], caller?: ForwardedFor): Promise<CreateAclsResponseAclCreationResult[]> {
    return this.route((c) => c.createAcls(creations), async (conn) => {
      const r = await this.forward<{ results: CreateAclsResponseAclCreationResult[] }>(conn, caller, ApiKey.CreateAcls, 3, { creations });
      const made = creations.filter((_, i) => r.results[i]?.errorCode === ErrorCode.NONE);
      await this.waitFor(() => made.every((c) => [...this.md.image.acls.acls.values()].some((a) => a.resourceType === c.resourceType
        && a.resourceName === c.resourceName && a.patternType === c.resourcePatternType && a.principal === c.principal && a.host === c.host
        && a.operation === c.operation && a.permissionType === c.permissionType)));
      return r.results;
    }, (errorCode, errorMessage) => creations.map(() => ({ errorCode, errorMessage })));
  }

  deleteAcls(filters: DeleteAclsRequestDeleteAclsFilter[], caller?: ForwardedFor): Promise<DeleteAclsResponseDeleteAclsFilterResult[]> {
    return this.route((c) => c.deleteAcls(filters), async (conn) => {
      const r = await this.forward<{ filterResults: DeleteAclsResponseDeleteAclsFilterResult[] }>(conn, caller, ApiKey.DeleteAcls, 3, { filters });
      const gone = r.filterResults.flatMap((f) => f.matchingAcls);
      await this.waitFor(() => !gone.some((g) => [...this.md.image.acls.acls.values()].some((a) => a.resourceType === g.resourceType
        && a.resourceName === g.resourceName && a.patternType === g.patternType && a.principal === g.principal && a.host === g.host
        && a.operation === g.operation && a.permissionType === g.permissionType)));
      return r.filterResults;
    }, (errorCode, errorMessage) => filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })));
  }

  allocateProducerIds(request: AllocateProducerIdsRequest): Promise<AllocateProducerIdsResponse> {
    return this.route((c) => c.allocateProducerIds(request), (conn) => conn.send<AllocateProducerIdsResponse>(ApiKey.AllocateProducerIds, 0, request),
      () => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, producerIdStart: -1n, producerIdLen: 0 }));
  }

  /** The broker's lifecycle waits for its registration to reach its image itself (the broker epoch is its offset). */
  registerBroker(request: BrokerRegistrationRequest): Promise<BrokerRegistrationResponse> {
    return this.route((c) => c.registerBroker(request), (conn) => conn.send<BrokerRegistrationResponse>(ApiKey.BrokerRegistration, 4, request),
      () => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, brokerEpoch: -1n }));
  }

  brokerHeartbeat(request: BrokerHeartbeatRequest): Promise<BrokerHeartbeatResponse> {
    return this.route((c) => c.brokerHeartbeat(request), (conn) => conn.send<BrokerHeartbeatResponse>(ApiKey.BrokerHeartbeat, 1, request),
      () => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, isCaughtUp: false, isFenced: true, shouldShutDown: false }));
  }

  /** Forwarded without waiting for this node's image: the partition applies the change when its metadata shows it. */
  alterPartition(request: AlterPartitionRequest, version = 3): Promise<AlterPartitionResponse> {
    return this.route((c) => c.alterPartition(request, version), (conn) => conn.send<AlterPartitionResponse>(ApiKey.AlterPartition, version, request),
      () => ({ throttleTimeMs: 0, errorCode: ErrorCode.NOT_CONTROLLER, topics: [] }));
  }

  /**
   * DescribeQuorum as the Raft leader answers it: `own()` when this node leads (or none can be
   * reached), else forwarded to the leader's controller listener.
   */
  describeQuorum(request: DescribeQuorumRequest, own: () => DescribeQuorumResponse): Promise<DescribeQuorumResponse> {
    const leader = this.md.leaderId;
    if (leader === undefined || leader === this.o.nodeId) return Promise.resolve(own());
    return this.route(async () => own(), (conn) => conn.send<DescribeQuorumResponse>(ApiKey.DescribeQuorum, 2, request), own);
  }

  /**
   * A client's change sent to the controller: in an Envelope naming the client when there is one
   * (the controller answers inside; its throttle_time_ms is handed to the caller), else as it is.
   * An Envelope the controller refuses (CLUSTER_AUTHORIZATION_FAILED: this broker's principal may not
   * forward) throws EnvelopeRefusedError.
   */
  private async forward<R>(conn: BrokerConnection, caller: ForwardedFor | undefined, apiKey: number, version: number, body: object): Promise<R> {
    if (caller === undefined) return conn.send<R>(apiKey, version, body);
    const envelope = await conn.send<EnvelopeResponse>(ApiKey.Envelope, 0, {
      requestData: innerRequestData(apiKey, version, caller.clientId, body),
      requestPrincipal: encodePrincipal(caller.principal),
      clientHostAddress: encodeHostAddress(caller.clientAddress),
    });
    if (envelope.errorCode !== ErrorCode.NONE || envelope.responseData === null) throw new EnvelopeRefusedError(envelope.errorCode);
    const inner = decodeResponse(apiKey, version, envelope.responseData).body as R & { throttleTimeMs?: number };
    if (typeof inner.throttleTimeMs === 'number') caller.throttleTimeMs = Math.max(caller.throttleTimeMs ?? 0, inner.throttleTimeMs);
    return inner;
  }

  // ---- routing -------------------------------------------------------------------------------

  /**
   * The local controller when it is active (it answers NOT_CONTROLLER itself if it loses the
   * leadership meanwhile), else the forwarded request; waits up to ROUTE_WAIT_MS for either.
   */
  private async route<R>(local: (c: ControllerService) => Promise<R>, remote: (conn: BrokerConnection) => Promise<R>,
    refused: (errorCode: number, errorMessage: string) => R): Promise<R> {
    const deadline = Date.now() + ROUTE_WAIT_MS;
    for (;;) {
      const r = await this.findRoute();
      if (r?.kind === 'local') return local(this.local);
      if (r?.kind === 'remote') {
        // The quorum moving on from that node fails the request now (NOT_CONTROLLER, retried by the
        // caller on the new controller): a controller cut off from the quorum never answers, and a
        // heartbeat left waiting on it until the request timeout gets this broker fenced by the new
        // controller meanwhile. (Polled: a leader change commits no data entry to be told by.)
        const watch = setInterval(() => { if (this.md.leaderId !== r.nodeId) this.drop(r.nodeId); }, LEADER_WATCH_MS);
        watch.unref();
        try {
          return await remote(r.conn);
        } catch (e) {
          // The controller would not take this broker's Envelope (its principal lacks
          // CLUSTER_ACTION there): a misconfigured cluster, which the client cannot fix by retrying
          // (Kafka's forwarding answers UNKNOWN_SERVER_ERROR too).
          if (e instanceof EnvelopeRefusedError) {
            this.o.logger.warn(`node ${r.nodeId} refused this broker's Envelope: ${e.message}`);
            return refused(ErrorCode.UNKNOWN_SERVER_ERROR, e.message);
          }
          // Sent, and no answer (the controller died under it, or a timeout): the client decides.
          this.drop(r.nodeId);
          this.o.logger.warn(`controller request forwarded to node ${r.nodeId} failed: ${(e as Error).message}`);
          return refused(ErrorCode.NOT_CONTROLLER, NOT_CONTROLLER_MESSAGE);
        } finally {
          clearInterval(watch);
        }
      }
      if (this.closed || Date.now() >= deadline) return refused(ErrorCode.NOT_CONTROLLER, NOT_CONTROLLER_MESSAGE);
      await new Promise((resolve) => setTimeout(resolve, ROUTE_RETRY_MS));
    }
  }

  /** Null while no controller is known or reachable. */
  private async findRoute(): Promise<Route | null> {
    if (this.closed) return null;
    if (this.local.isActive) return { kind: 'local' };
    const leader = this.md.leaderId;
    // This node leads but its controller is not active yet (its log is being applied): wait.
    if (leader === undefined || leader === this.o.nodeId) return null;
    const e = this.md.controllerEndpoint(leader);
    if (e === undefined || e.port === 0) return null;
    const c = this.connection;
    if (c === null || c.nodeId !== leader || c.host !== e.host || c.port !== e.port) {
      if (c !== null) void c.conn.then((x) => x.close(), () => {});
      this.connection = {
        nodeId: leader, host: e.host, port: e.port,
        conn: BrokerConnection.open({
          host: e.host, port: e.port, clientId: `logline-broker-${this.o.nodeId}-to-controller`, requestTimeoutMs: this.o.requestTimeoutMs, connectTimeoutMs: 5000,
          ...(this.o.tls ? { tls: this.o.tls } : {}),
          ...(this.o.sasl ? { sasl: this.o.sasl } : {}),
        }),
      };
    }
    try {
      return { kind: 'remote', conn: await this.connection!.conn, nodeId: leader };
    } catch {
      this.drop(leader);
      return null;
    }
  }

  /** The connection to `nodeId` is broken or its node moved: the next request opens a new one. */
  private drop(nodeId: number): void {
    const c = this.connection;
    if (c === null || c.nodeId !== nodeId) return;
    this.connection = null;
    void c.conn.then((x) => x.close(), () => {});
  }

  /** Resolves once `done(view)` holds (checked at every applied change), or after CATCH_UP_WAIT_MS. */
  private waitFor(done: (view: MetadataView) => boolean): Promise<void> {
    if (done(this.md.view())) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => { clearTimeout(timer); this.waiters.delete(check); resolve(); };
      const check = () => { if (this.closed || done(this.md.view())) finish(); };
      const timer = setTimeout(finish, CATCH_UP_WAIT_MS);
      timer.unref();
      this.waiters.add(check);
    });
  }
}

/** The active controller refused the Envelope itself (not the request inside): `errorCode` says why. */
export class EnvelopeRefusedError extends Error {
  override name = 'EnvelopeRefusedError';
  constructor(readonly errorCode: number) {
    super(`the controller refused the Envelope with error ${errorCode}`);
  }
}

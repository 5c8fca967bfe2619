// Cluster state changes asked of a node that is not the active controller. Only the Raft leader of
// `__cluster_metadata` may commit; another node hands the client's admin request to the port
// below (today: the leader's broker listener, through the project's client; later: the
// controller, when brokers forward to it) and answers once its own image holds the result, so a
// client that creates a topic through broker 2 and then asks broker 2 for Metadata sees it. Where
// there is no route (no leader known, the leader unreachable, a change during an election), the
// answer is NOT_CONTROLLER, which clients retry. A change never throws out of a handler.
import { BrokerConnection } from '../client/index.js';
import {
  ErrorCode, ZERO_UUID, type CreatePartitionsRequestCreatePartitionsTopic, type CreatePartitionsResponseCreatePartitionsTopicResult, type CreateTopicsRequest,
  type CreateTopicsResponseCreatableTopicResult, type DeleteTopicsResponseDeletableTopicResult,
} from '../protocol/index.js';
import { RaftError } from '../raft/index.js';
import { ResourceType, type ConfigAdmin, type ResourceResult } from './config-admin.js';
import { NotControllerError, type LogMetadata } from './metadata-log.js';
import type { MetadataView, TopicAdmin } from './services.js';

const CREATE_TOPICS = 19;
const DELETE_TOPICS = 20;
const CREATE_PARTITIONS = 37;
const INCREMENTAL_ALTER_CONFIGS = 44;
const FIND_COORDINATOR = 10;
const INIT_PRODUCER_ID = 22;
/** How long a forwarded change waits for this node's image to show it, at most. */
const CATCH_UP_WAIT_MS = 30_000;

/** How long a change waits for a controller to be known and reachable before NOT_CONTROLLER (an election takes about one election timeout). */
const ROUTE_WAIT_MS = 5_000;

/** A forwarded request whose answer never came (the controller died under it): it may or may not have been applied. */
export class ForwardLostError extends Error {
  override name = 'ForwardLostError';
}

/** The controller is known but this node has no way to reach it (its broker listener is unknown here). */
export class NoRouteError extends Error {
  override name = 'NoRouteError';
}

/**
 * The port: sends a client's admin request to the active controller. Null when it was not sent
 * and may be soon (no controller known yet, or not reachable now); ForwardLostError when it was
 * sent and no answer came; NoRouteError when it cannot be sent at all.
 */
export interface ControllerForwarder {
  forward<T>(apiKey: number, version: number, body: object): Promise<T | null>;
  close(): void;
}

/** Today's forwarder: the Raft leader's broker listener, from the metadata view's broker list. */
export class LeaderBrokerForwarder implements ControllerForwarder {
  private connection: { nodeId: number; host: string; port: number; conn: Promise<BrokerConnection> } | null = null;
  private closed = false;

  constructor(private readonly metadata: LogMetadata, private readonly requestTimeoutMs = 30_000) {}

  async forward<T>(apiKey: number, version: number, body: object): Promise<T | null> {
    const leader = this.metadata.leaderId;
    if (this.closed || leader === undefined || leader === this.metadata.endpoint.nodeId) return null;
    const broker = this.metadata.view().brokers('').find((b) => b.nodeId === leader);
    if (broker === undefined || broker.port === 0) throw new NoRouteError(`no broker listener known for node ${leader}`);
    const c = this.connection;
    if (c === null || c.nodeId !== leader || c.host !== broker.host || c.port !== broker.port) {
      if (c !== null) void c.conn.then((x) => x.close(), () => {});
      this.connection = {
        nodeId: leader, host: broker.host, port: broker.port,
        conn: BrokerConnection.open({ host: broker.host, port: broker.port, clientId: `logline-forward-${this.metadata.endpoint.nodeId}`, requestTimeoutMs: this.requestTimeoutMs, connectTimeoutMs: 5000 }),
      };
    }
    const current = this.connection!;
    const drop = () => {
      // The leader died or moved: the next request opens a new connection.
      if (this.connection === current) this.connection = null;
      void current.conn.then((x) => x.close(), () => {});
    };
    let conn: BrokerConnection;
    try {
      conn = await current.conn;
    } catch {
      drop();
      return null;
    }
    try {
      return await conn.send<T>(apiKey, version, body);
    } catch (e) {
      drop();
      throw new ForwardLostError(`forwarded request ${apiKey} to node ${leader}: ${(e as Error).message}`);
    }
  }

  close(): void {
    this.closed = true;
    void this.connection?.conn.then((x) => x.close(), () => {});
    this.connection = null;
  }
}

const notController = (leaderId: number | undefined): { errorCode: number; errorMessage: string } => ({
  errorCode: ErrorCode.NOT_CONTROLLER,
  errorMessage: `this broker is not the active controller${leaderId === undefined ? ' (none is known)' : ` (node ${leaderId} is)`}; retry`,
});

/** A change refused because leadership moved while it ran (the record may still commit: a retry sees it). */
function isLeadershipError(e: unknown): boolean {
  return e instanceof NotControllerError || (e instanceof RaftError && (e.kind === 'NOT_LEADER' || e.kind === 'TIMEOUT' || e.kind === 'SHUTDOWN'));
}

export class ClusterAdmin {
  private readonly waiters = new Set<() => void>();

  constructor(private readonly metadata: LogMetadata, private readonly forwarder: ControllerForwarder) {
    metadata.onChange(() => { for (const w of [...this.waiters]) w(); });
  }

  /** Resolves once `done(view)` holds (checked at every applied change), or after `timeoutMs`. */
  private waitFor(done: (view: MetadataView) => boolean, timeoutMs: number): Promise<boolean> {
    if (done(this.metadata.view())) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (!done(this.metadata.view())) return;
        finish(true);
      };
      const finish = (ok: boolean) => { clearTimeout(timer); this.waiters.delete(check); resolve(ok); };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.waiters.add(check);
    });
  }

  /**
   * Runs `local` when this node is the active controller, else `remote` (null: not sent). During an
   * election neither may be possible: it waits up to ROUTE_WAIT_MS for one, as Kafka's forwarding
   * queues requests until a controller is known. Leadership lost under a change, or a forwarded
   * request without an answer, is `refused()` (NOT_CONTROLLER: the client retries; the change may
   * have been made, as with Kafka).
   */
  private async route<R>(local: () => Promise<R>, remote: () => Promise<R | null>, refused: () => R): Promise<R> {
    const deadline = Date.now() + ROUTE_WAIT_MS;
    for (;;) {
      if (this.metadata.isActiveController()) {
        try {
          return await local();
        } catch (e) {
          if (isLeadershipError(e)) return refused();
          throw e;
        }
      }
      let answer: R | null;
      try {
        answer = await remote();
      } catch (e) {
        if (e instanceof ForwardLostError || e instanceof NoRouteError) return refused();
        throw e;
      }
      if (answer !== null) return answer;
      if (Date.now() >= deadline) return refused();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  topicAdmin(local: TopicAdmin): TopicAdmin {
    return {
      createTopics: (request: CreateTopicsRequest, apiVersion: number) => this.route(
        () => local.createTopics(request, apiVersion),
        async () => {
          const r = await this.forwarder.forward<{ topics: CreateTopicsResponseCreatableTopicResult[] }>(CREATE_TOPICS, 7, { ...request, topics: request.topics });
          if (r === null) return null;
          if (!request.validateOnly) {
            const made = r.topics.filter((t) => t.errorCode === 0);
            await this.waitFor((v) => made.every((t) => v.topic(t.name)?.id === t.topicId), Math.min(CATCH_UP_WAIT_MS, Math.max(request.timeoutMs, 1000)));
          }
          return r.topics;
        },
        () => request.topics.map((t): CreateTopicsResponseCreatableTopicResult => ({
          name: t.name, topicId: ZERO_UUID, ...notController(this.metadata.leaderId), numPartitions: -1, replicationFactor: -1, configs: [],
        })),
      ),
      deleteTopics: (targets) => this.route(
        () => local.deleteTopics(targets),
        async () => {
          const r = await this.forwarder.forward<{ responses: DeleteTopicsResponseDeletableTopicResult[] }>(DELETE_TOPICS, 6, { topics: targets, topicNames: [], timeoutMs: 30_000 });
          if (r === null) return null;
          const gone = r.responses.filter((t) => t.errorCode === 0);
          await this.waitFor((v) => gone.every((t) => v.topicById(t.topicId) === undefined && (t.name === null || v.topic(t.name) === undefined)), CATCH_UP_WAIT_MS);
          return r.responses;
        },
        () => targets.map((t): DeleteTopicsResponseDeletableTopicResult => ({ name: t.name, topicId: t.topicId, ...notController(this.metadata.leaderId) })),
      ),
      createPartitions: (topics: CreatePartitionsRequestCreatePartitionsTopic[], validateOnly: boolean) => this.route(
        () => local.createPartitions(topics, validateOnly),
        async () => {
          const r = await this.forwarder.forward<{ results: CreatePartitionsResponseCreatePartitionsTopicResult[] }>(CREATE_PARTITIONS, 3, { topics, timeoutMs: 30_000, validateOnly });
          if (r === null) return null;
          if (!validateOnly) {
            const grown = new Map(topics.map((t) => [t.name, t.count]));
            const ok = r.results.filter((t) => t.errorCode === 0);
            await this.waitFor((v) => ok.every((t) => (v.topic(t.name)?.partitions.length ?? 0) >= (grown.get(t.name) ?? 0)), CATCH_UP_WAIT_MS);
          }
          return r.results;
        },
        () => topics.map((t): CreatePartitionsResponseCreatePartitionsTopicResult => ({ name: t.name, ...notController(this.metadata.leaderId) })),
      ),
    };
  }

  /**
   * Config changes: topic configs are forwarded (IncrementalAlterConfigs); a broker's own
   * configs are this node's to change, so away from the controller they answer NOT_CONTROLLER.
   */
  configAdmin(local: ConfigAdmin): ConfigAdmin {
    const wrapped = Object.create(local) as ConfigAdmin;
    type Op = { name: string; configOperation: number; value: string | null };
    wrapped.incrementalAlter = (resourceType: number, name: string, ops: Op[], validateOnly: boolean) => this.route<ResourceResult>(
      () => local.incrementalAlter(resourceType, name, ops, validateOnly),
      async () => {
        if (resourceType !== ResourceType.Topic) return notController(this.metadata.leaderId);
        const r = await this.forwarder.forward<{ responses: (ResourceResult & { resourceType: number; resourceName: string })[] }>(INCREMENTAL_ALTER_CONFIGS, 1, {
          resources: [{ resourceType, resourceName: name, configs: ops }], validateOnly,
        });
        const out = r?.responses[0];
        if (out === undefined) return null;
        if (out.errorCode === 0 && !validateOnly) {
          const sets = ops.filter((o) => o.configOperation === 0);
          await this.waitFor((v) => sets.every((o) => v.configs(ResourceType.Topic, name).get(o.name) === o.value), CATCH_UP_WAIT_MS);
        }
        return { errorCode: out.errorCode, errorMessage: out.errorMessage };
      },
      () => notController(this.metadata.leaderId),
    );
    wrapped.alter = (resourceType: number, name: string, configs: { name: string; value: string | null }[], validateOnly: boolean) => this.route<ResourceResult>(
      () => local.alter(resourceType, name, configs, validateOnly),
      async () => notController(this.metadata.leaderId),
      () => notController(this.metadata.leaderId),
    );
    return wrapped;
  }

  /**
   * An internal topic (`__consumer_offsets`, `__transaction_state`) created on first use: away from
   * the controller, a FindCoordinator of that key type to the controller's broker makes it create
   * the topic as it would for a client (one code path for the topic's settings), then this node
   * waits for its image to hold it. No route: COORDINATOR_NOT_AVAILABLE, which clients retry.
   */
  ensureInternalTopic(local: () => Promise<number>, topic: string, keyType: 0 | 1): () => Promise<number> {
    return async () => {
      if (this.metadata.view().topic(topic) !== undefined || this.metadata.isActiveController()) {
        try {
          return await local();
        } catch (e) {
          if (isLeadershipError(e)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
          throw e;
        }
      }
      const r = await this.forwarder.forward<{ errorCode: number }>(FIND_COORDINATOR, 3, { key: 'logline-internal-topic', keyType, coordinatorKeys: [] }).catch(() => null);
      if (r !== null) await this.waitFor((v) => v.topic(topic) !== undefined, CATCH_UP_WAIT_MS);
      return this.metadata.view().topic(topic) !== undefined ? 0 : ErrorCode.COORDINATOR_NOT_AVAILABLE;
    };
  }

  /**
   * Producer ids for idempotent producers: from this node's block while it lasts; a new block is
   * the controller's to record, so away from it the controller's broker hands out the id (its
   * block is in the metadata too, so ids never repeat). No route: retried for a while, then the
   * request fails (the client reconnects and asks again).
   */
  generateProducerId(local: () => Promise<bigint>): () => Promise<bigint> {
    return async () => {
      const deadline = Date.now() + CATCH_UP_WAIT_MS;
      for (;;) {
        try {
          return await local();
        } catch (e) {
          if (!isLeadershipError(e)) throw e;
        }
        // A lost answer only wastes an id: ask again.
        const r = await this.forwarder.forward<{ errorCode: number; producerId: bigint }>(INIT_PRODUCER_ID, 4, {
          transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1,
        }).catch(() => null);
        if (r !== null && r.errorCode === 0) return r.producerId;
        if (Date.now() > deadline) throw new NotControllerError(this.metadata.leaderId);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
  }

  close(): void {
    this.forwarder.close();
  }
}

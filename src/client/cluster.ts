// A client for a whole cluster: bootstrap, metadata cache, a connection per broker, and the
// requests the CLI, the tests and (later) brokers need. Retriable errors are retried with
// exponential backoff, a bounded number of times.
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { ApiKey, ErrorCode, isRetriable, errorName, ZERO_UUID } from '../protocol/index.js';
import { partitionName } from '../util/index.js';
import { BrokerConnection, ClientError, type ClientSasl } from './connection.js';

export class KafkaError extends Error {
  override name = 'KafkaError';
  constructor(readonly errorCode: number, message?: string | null) {
    super(`${errorName(errorCode)}${message ? `: ${message}` : ''}`);
  }
  get retriable(): boolean { return isRetriable(this.errorCode); }
}

export interface ClusterClientOptions {
  bootstrap: string; // host:port[,host:port]
  clientId?: string;
  requestTimeoutMs?: number;
  retries?: number;
  retryBackoffMs?: number;
  /** Connect with TLS (the brokers' listener is SSL or SASL_SSL). */
  tls?: TlsConnectionOptions;
  /** Authenticate with SASL (the brokers' listener is SASL_PLAINTEXT or SASL_SSL). */
  sasl?: ClientSasl;
}

export interface BrokerAddress { nodeId: number; host: string; port: number; rack: string | null }
export interface PartitionInfo { partition: number; leader: number; leaderEpoch: number; replicas: number[]; isr: number[]; offlineReplicas: number[]; errorCode: number }
export interface TopicInfo { name: string; topicId: string; isInternal: boolean; errorCode: number; partitions: PartitionInfo[] }

export function parseHostPort(text: string, defaultPort = 9092): { host: string; port: number } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+)(?::(\d+))?$/.exec(text);
  if (!m) throw new ClientError(`invalid address "${text}"`);
  return { host: m[1]!, port: m[2] ? Number(m[2]) : defaultPort };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ClusterClient {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  private bootstrapConn: BrokerConnection | null = null;
  brokers = new Map<number, BrokerAddress>();
  clusterId: string | null = null;
  controllerId = -1;

  constructor(readonly options: ClusterClientOptions) {}

  private async open(host: string, port: number): Promise<BrokerConnection> {
    const c = await BrokerConnection.open({
      host, port, clientId: this.options.clientId ?? 'logline-cli', requestTimeoutMs: this.options.requestTimeoutMs ?? 30_000,
      ...(this.options.tls ? { tls: this.options.tls } : {}),
      ...(this.options.sasl ? { sasl: this.options.sasl } : {}),
    });
    await c.negotiate();
    return c;
  }

  /** A connection to any broker (the first bootstrap address that answers). */
  async any(): Promise<BrokerConnection> {
    if (this.bootstrapConn && !this.bootstrapConn.closed) return this.bootstrapConn;
    let last: unknown;
    for (const addr of this.options.bootstrap.split(',')) {
      try {
        const { host, port } = parseHostPort(addr.trim());
        this.bootstrapConn = await this.open(host, port);
        return this.bootstrapConn;
      } catch (err) { last = err; }
    }
    throw last instanceof Error ? last : new ClientError(`no bootstrap broker reachable at ${this.options.bootstrap}`);
  }

  async broker(nodeId: number): Promise<BrokerConnection> {
    let p = this.connections.get(nodeId);
    if (p) {
      const c = await p.catch(() => null);
      if (c && !c.closed) return c;
    }
    const addr = this.brokers.get(nodeId);
    if (!addr) {
      await this.metadata([]);
      if (!this.brokers.has(nodeId)) throw new ClientError(`broker ${nodeId} is not in the cluster metadata`);
    }
    const a = this.brokers.get(nodeId)!;
    p = this.open(a.host, a.port);
    this.connections.set(nodeId, p);
    return p;
  }

  /** Runs `fn` again on retriable Kafka errors and lost connections, with backoff. */
  async retrying<T>(fn: () => Promise<T>): Promise<T> {
    const retries = this.options.retries ?? 5;
    let backoff = this.options.retryBackoffMs ?? 100;
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        const retriable = (err instanceof KafkaError && err.retriable) || (err instanceof ClientError && err.code === 'CONNECTION');
        if (!retriable || attempt >= retries) throw err;
        await sleep(backoff);
        backoff = Math.min(backoff * 2, 1000);
      }
    }
  }

  /** Topic metadata; `null` means every topic. Updates the broker map. */
  async metadata(topics: string[] | null, allowAutoTopicCreation = false): Promise<TopicInfo[]> {
    const c = await this.any();
    const version = c.version(ApiKey.Metadata, 12);
    const r = await c.send(ApiKey.Metadata, version, {
      topics: topics === null ? null : topics.map((name) => ({ name, topicId: ZERO_UUID })),
      allowAutoTopicCreation, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false,
    });
    this.brokers = new Map(r.brokers.map((b: any) => [b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack }]));
    this.clusterId = r.clusterId;
    this.controllerId = r.controllerId;
    return r.topics.map((t: any) => ({
      name: t.name, topicId: t.topicId, isInternal: t.isInternal, errorCode: t.errorCode,
      partitions: t.partitions.map((p: any) => ({ partition: p.partitionIndex, leader: p.leaderId, leaderEpoch: p.leaderEpoch, replicas: p.replicaNodes, isr: p.isrNodes, offlineReplicas: p.offlineReplicas ?? [], errorCode: p.errorCode }))
        .sort((a: PartitionInfo, b: PartitionInfo) => a.partition - b.partition),
    }));
  }

  /** Metadata for one topic, waiting out LEADER_NOT_AVAILABLE right after creation. */
  async topic(name: string, allowAutoTopicCreation = false): Promise<TopicInfo> {
    return this.retrying(async () => {
      const [t] = await this.metadata([name], allowAutoTopicCreation);
      if (!t) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      if (t.errorCode !== 0) throw new KafkaError(t.errorCode, `topic ${name}`);
      const bad = t.partitions.find((p) => p.errorCode !== 0 || p.leader < 0);
      if (bad) throw new KafkaError(bad.errorCode || ErrorCode.LEADER_NOT_AVAILABLE, partitionName(name, bad.partition));
      return t;
    });
  }

  async leaderFor(topic: string, partition: number): Promise<BrokerConnection> {
    const t = await this.topic(topic);
    const p = t.partitions.find((x) => x.partition === partition);
    if (!p) throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, partitionName(topic, partition));
    return this.broker(p.leader);
  }

  /** Sends to the controller-facing admin API through any broker (KRaft forwards). */
  async admin<T = any>(apiKey: number, body: object, cap = 0x7fff): Promise<T> {
    const c = await this.any();
    return c.send<T>(apiKey, c.version(apiKey, cap), body);
  }

  close(): void {
    this.bootstrapConn?.close();
    for (const p of this.connections.values()) p.then((c) => c.close(), () => {});
    this.connections.clear();
  }
}

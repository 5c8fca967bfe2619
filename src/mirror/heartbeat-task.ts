// The heartbeat task of one pair of clusters (MirrorHeartbeatConnector): a Heartbeat(source,
// target, now) in the target's `heartbeats` topic every emit.heartbeats.interval.seconds. Like
// MirrorMaker 2 it runs for pairs whose flow is disabled too: B's heartbeats in A are what the
// flow A->B mirrors to B as `A.heartbeats`, which tells tools on B that A is upstream and how far
// behind the mirror is.
import { Cluster, Producer } from '../client/index.js';
import { ensureTopic } from './admin.js';
import type { FlowSettings } from './config.js';
import { encodeHeartbeat } from './formats.js';
import { messageOf, pause, type TaskContext } from './task.js';

export class MirrorHeartbeatTask {
  private readonly target: Cluster;
  private readonly producer: Producer;

  constructor(private readonly flow: FlowSettings, private readonly ctx: TaskContext) {
    this.target = new Cluster({ ...ctx.clients.get(flow.target)!, clientId: `mirror-heartbeat-${flow.source}->${flow.target}` });
    this.producer = new Producer(this.target, { transactionalId: null, transactionTimeoutMs: 60_000, deliveryTimeoutMs: 10_000 });
  }

  async run(): Promise<void> {
    const topic = this.flow.policy.heartbeatsTopic();
    let ready = false;
    while (!this.ctx.stopping()) {
      try {
        if (!ready) {
          await ensureTopic(this.target.client, topic, 1, this.flow.heartbeatsTopicReplicationFactor, [{ name: 'cleanup.policy', value: 'compact' }]);
          await this.producer.init(Date.now() + 10_000);
          ready = true;
        }
        const beat = { sourceClusterAlias: this.flow.source, targetClusterAlias: this.flow.target, timestamp: Date.now() };
        await this.producer.send(topic, 0, [{ ...encodeHeartbeat(beat), timestamp: beat.timestamp }], Date.now() + 10_000);
        this.ctx.metrics.flow(this.flow.source, this.flow.target, this.flow.enabled).lastHeartbeatMs = beat.timestamp;
      } catch (err) {
        ready = false;
        this.ctx.logger.warn(`${this.flow.source}->${this.flow.target} heartbeat: ${messageOf(err)}`);
        if (this.flow.enabled) this.ctx.metrics.error(this.flow.source, this.flow.target, `heartbeat: ${messageOf(err)}`);
      }
      await pause(this.ctx, this.flow.emitHeartbeatsIntervalMs);
    }
    this.target.close();
  }
}

// The checkpoint task of one flow (MirrorCheckpointConnector and its task): reads the offset syncs
// into an OffsetSyncStore, translates the source's consumer group offsets through it, and writes
// Checkpoints to `<source>.checkpoints.internal` on the target; with sync.group.offsets.enabled it
// also commits the translated offsets to the target's groups, but only while a group has no
// members there (Empty or not existing), and never moves a group's offset back.
import { Cluster, Producer, commitPositions, committedOffsets, coordinatorFor, describeGroup } from '../client/index.js';
import { limits, partitionKey, type Logger } from '../util/index.js';
import { ensureTopic, listGroups, readToEnd } from './admin.js';
import { matches, type FlowSettings } from './config.js';
import { decodeCheckpoint, decodeOffsetSync, encodeCheckpoint, type Checkpoint } from './formats.js';
import { OffsetSyncStore } from './offset-syncs.js';
import { originalTopic } from './policy.js';
import { messageOf, runTaskLoop, type TaskContext } from './task.js';

/**
 * Whether a new checkpoint is worth writing after `last` (MirrorCheckpointTask's rule): the first
 * one, a group that rewound upstream, or a downstream offset that moved forward. A downstream
 * offset never goes back otherwise, so checkpoints stay monotonic.
 */
export function checkpointIsMoreRecent(last: Checkpoint | undefined, next: Checkpoint): boolean {
  if (last === undefined) return true;
  if (next.upstreamOffset < last.upstreamOffset) return true;
  return next.downstreamOffset > last.downstreamOffset;
}

export class MirrorCheckpointTask {
  private readonly log: Logger;
  private readonly source: Cluster;
  private readonly target: Cluster;
  private readonly syncs: Cluster;
  private readonly producer: Producer;
  private readonly store = new OffsetSyncStore();
  private syncPositions = new Map<number, number>([[0, 0]]);
  private readonly checkpointsTopic: string;
  private readonly syncsTopic: string;
  /** group → remote partitionKey → the last checkpoint written. */
  private readonly checkpoints = new Map<string, Map<string, Checkpoint>>();
  private groups: string[] = [];
  private nextGroupsRefreshMs = 0;
  private nextCheckpointMs = 0;
  private nextGroupSyncMs = 0;

  constructor(private readonly flow: FlowSettings, private readonly ctx: TaskContext) {
    this.log = ctx.logger;
    this.source = new Cluster({ ...ctx.clients.get(flow.source)!, clientId: `mirror-checkpoint-source-${flow.source}->${flow.target}` });
    this.target = new Cluster({ ...ctx.clients.get(flow.target)!, clientId: `mirror-checkpoint-target-${flow.source}->${flow.target}` });
    this.syncs = flow.offsetSyncsTopicLocation === 'source' ? this.source : this.target;
    this.checkpointsTopic = flow.policy.checkpointsTopic(flow.source);
    this.syncsTopic = flow.policy.offsetSyncsTopic(flow.target);
    this.producer = new Producer(this.target, { transactionalId: null, transactionTimeoutMs: 60_000, deliveryTimeoutMs: 30_000 });
  }

  async run(): Promise<void> {
    await runTaskLoop(this.ctx, {
      start: () => this.start(),
      step: async () => {
        await this.readSyncs();
        const now = Date.now();
        if (now >= this.nextGroupsRefreshMs) await this.refreshGroups();
        if (now >= this.nextCheckpointMs) await this.emitCheckpoints();
        if (this.flow.syncGroupOffsets && now >= this.nextGroupSyncMs) await this.syncGroupOffsets();
      },
      recover: async () => { await this.producer.init(Date.now() + 30_000).catch(() => {}); },
      fail: (phase, err) => this.fail(phase === 'start' ? 'checkpoint start' : 'checkpoint', err),
      startRetryMs: 1000, pauseAfterFailureMs: 0, pauseAfterStepMs: 200,
    });
    this.source.close();
    this.target.close();
  }

  private fail(what: string, err: unknown): void {
    this.log.warn(`${this.flow.source}->${this.flow.target} ${what}: ${messageOf(err)}`);
    this.ctx.metrics.error(this.flow.source, this.flow.target, `${what}: ${messageOf(err)}`);
  }

  /** The checkpoints written before (so they stay monotonic) and the offset syncs, each read to its end. */
  private async start(): Promise<void> {
    const f = this.flow;
    await ensureTopic(this.target.client, this.checkpointsTopic, 1, f.checkpointsTopicReplicationFactor, [{ name: 'cleanup.policy', value: 'compact' }]);
    await ensureTopic(this.syncs.client, this.syncsTopic, 1, f.offsetSyncsTopicReplicationFactor, [{ name: 'cleanup.policy', value: 'compact' }]);
    await this.producer.init(Date.now() + 30_000);
    await readToEnd(this.target, this.checkpointsTopic, new Map([[0, 0]]), Date.now() + this.ctx.loadTimeoutMs, (_p, r) => {
      try {
        const c = decodeCheckpoint(r.key, r.value);
        this.remember(c);
      } catch { /* not a checkpoint: MirrorMaker 2 skips such records too */ }
    });
    await this.readSyncs();
    this.store.markLoaded();
  }

  private remember(c: Checkpoint): void {
    const byPartition = this.checkpoints.get(c.group) ?? new Map<string, Checkpoint>();
    byPartition.set(partitionKey(c.topic, c.partition), c);
    this.checkpoints.set(c.group, byPartition);
  }

  /** New offset syncs since the last read. */
  private async readSyncs(): Promise<void> {
    this.syncPositions = await readToEnd(this.syncs, this.syncsTopic, this.syncPositions, Date.now() + this.ctx.loadTimeoutMs, (_p, r) => {
      try {
        const s = decodeOffsetSync(r.key, r.value);
        this.store.add(partitionKey(s.topic, s.partition), { upstream: s.upstreamOffset, downstream: s.downstreamOffset });
      } catch { /* not an offset sync */ }
    });
  }

  private async refreshGroups(): Promise<void> {
    this.nextGroupsRefreshMs = this.flow.refreshGroups ? Date.now() + this.flow.refreshGroupsIntervalMs : Number.MAX_SAFE_INTEGER;
    this.groups = (await listGroups(this.source.client)).filter((g) => matches(this.flow.groups, g)).slice(0, limits.mirrorGroupsMax);
  }

  /** A source topic's name on the target: back to its own name when it came from the target (failback). */
  private remoteTopic(topic: string): string {
    const p = this.flow.policy;
    return p.topicSource(topic) === this.flow.target ? originalTopic(p, topic) : p.formatRemoteTopic(this.flow.source, topic);
  }

  private async emitCheckpoints(): Promise<void> {
    this.nextCheckpointMs = Date.now() + this.flow.emitCheckpointsIntervalMs;
    if (!this.flow.emitCheckpoints) return;
    const started = Date.now();
    const out: Checkpoint[] = [];
    for (const group of this.groups) {
      let offsets;
      try {
        offsets = await committedOffsets(await coordinatorFor(this.source.client, group), group);
      } catch (err) {
        this.log.warn(`${this.flow.source}->${this.flow.target}: offsets of group ${group}: ${messageOf(err)}`);
        continue;
      }
      for (const { ref, offset, metadata } of offsets.values()) {
        if (!matches(this.flow.topics, ref.topic)) continue;
        const downstream = this.store.translate(partitionKey(ref.topic, ref.partition), Number(offset));
        if (downstream === null || downstream < 0) continue;
        const c: Checkpoint = { group, topic: this.remoteTopic(ref.topic), partition: ref.partition, upstreamOffset: Number(offset), downstreamOffset: downstream, metadata };
        if (checkpointIsMoreRecent(this.checkpoints.get(group)?.get(partitionKey(c.topic, c.partition)), c)) out.push(c);
      }
    }
    if (out.length === 0) return;
    await this.producer.send(this.checkpointsTopic, 0, out.map(encodeCheckpoint), Date.now() + 30_000);
    const latencyMs = Date.now() - started;
    for (const c of out) {
      this.remember(c);
      this.ctx.metrics.checkpoint({ source: this.flow.source, target: this.flow.target, group: c.group, topic: c.topic, partition: c.partition, upstreamOffset: c.upstreamOffset, downstreamOffset: c.downstreamOffset }, latencyMs);
    }
  }

  /** Translated offsets committed to the target's groups that have no members there. */
  private async syncGroupOffsets(): Promise<void> {
    this.nextGroupSyncMs = Date.now() + this.flow.syncGroupOffsetsIntervalMs;
    for (const [group, byPartition] of this.checkpoints) {
      if (!this.groups.includes(group)) continue;
      const coordinator = await coordinatorFor(this.target.client, group);
      const state = (await describeGroup(coordinator, group)).state.toLowerCase();
      if (state !== 'empty' && state !== 'dead') continue; // consumers are active there: leave the group alone
      const current = await committedOffsets(coordinator, group);
      const byTopic = new Map<string, Map<number, number>>();
      for (const c of byPartition.values()) {
        const now = current.get(partitionKey(c.topic, c.partition));
        if (now !== undefined && Number(now.offset) >= c.downstreamOffset) continue;
        const m = byTopic.get(c.topic) ?? new Map<number, number>();
        m.set(c.partition, c.downstreamOffset);
        byTopic.set(c.topic, m);
      }
      for (const [topic, positions] of byTopic) {
        await commitPositions(this.target, group, topic, positions, Date.now() + 30_000);
        this.log.info(`${this.flow.source}->${this.flow.target}: group ${group} on ${this.flow.target} moved to ${[...positions].map(([p, o]) => `${topic}-${p}@${o}`).join(', ')}`);
      }
    }
  }
}

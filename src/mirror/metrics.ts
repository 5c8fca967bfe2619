// The mirror's counters and its status, with MirrorMaker 2's metric names (its JMX beans
// kafka.connect.mirror:type=MirrorSourceConnector,target=,topic=,partition= and
// type=MirrorCheckpointConnector,source=,target=,group=,topic=,partition=, as the Prometheus JMX
// exporter names them): record-count, record-age-ms, replication-latency-ms, checkpoint-latency-ms.

export interface PartitionStatus {
  source: string;
  target: string;
  topic: string;
  partition: number;
  remoteTopic: string;
  /** Next source offset to mirror. */
  position: number;
  /** The source partition's high watermark at the last fetch. */
  highWatermark: number;
  lagRecords: number;
  /** Time since the newest record mirrored was written at the source, while records are waiting (0 when caught up). */
  lagMs: number;
  lastTimestampMs: number;
  recordCount: number;
  byteCount: number;
  /** The newest record's age when it was read (now - its timestamp). */
  recordAgeMs: number;
  /** Now - the record's timestamp once the target acknowledged it, newest and largest seen. */
  replicationLatencyMs: number;
  replicationLatencyMsMax: number;
}

export interface CheckpointStatus { source: string; target: string; group: string; topic: string; partition: number; upstreamOffset: number; downstreamOffset: number; checkpointLatencyMs: number }

export interface FlowStatus { source: string; target: string; enabled: boolean; lastError: string | null; lastErrorAtMs: number | null; lastHeartbeatMs: number | null }

export class MirrorMetrics {
  readonly partitions = new Map<string, PartitionStatus>();
  readonly checkpoints = new Map<string, CheckpointStatus>();
  readonly flows = new Map<string, FlowStatus>();

  flow(source: string, target: string, enabled: boolean): FlowStatus {
    const key = `${source}->${target}`;
    let f = this.flows.get(key);
    if (f === undefined) {
      f = { source, target, enabled, lastError: null, lastErrorAtMs: null, lastHeartbeatMs: null };
      this.flows.set(key, f);
    }
    return f;
  }

  error(source: string, target: string, message: string): void {
    const f = this.flow(source, target, true);
    f.lastError = message;
    f.lastErrorAtMs = Date.now();
  }

  partition(source: string, target: string, topic: string, partition: number, remoteTopic: string): PartitionStatus {
    const key = `${source}->${target}\u0000${topic}\u0000${partition}`;
    let p = this.partitions.get(key);
    if (p === undefined) {
      p = {
        source, target, topic, partition, remoteTopic, position: 0, highWatermark: 0, lagRecords: 0, lagMs: 0, lastTimestampMs: -1,
        recordCount: 0, byteCount: 0, recordAgeMs: 0, replicationLatencyMs: 0, replicationLatencyMsMax: 0,
      };
      this.partitions.set(key, p);
    }
    return p;
  }

  checkpoint(c: Omit<CheckpointStatus, 'checkpointLatencyMs'>, latencyMs: number): void {
    this.checkpoints.set(`${c.source}->${c.target}\u0000${c.group}\u0000${c.topic}\u0000${c.partition}`, { ...c, checkpointLatencyMs: latencyMs });
  }

  /** The status as `logline mirror status` shows it (times as of `nowMs`). */
  status(nowMs: number): { flows: FlowStatus[]; partitions: PartitionStatus[]; checkpoints: CheckpointStatus[] } {
    const partitions = [...this.partitions.values()].map((p) => ({
      ...p, lagRecords: Math.max(0, p.highWatermark - p.position),
      lagMs: p.highWatermark > p.position && p.lastTimestampMs >= 0 ? Math.max(0, nowMs - p.lastTimestampMs) : 0,
    }));
    return { flows: [...this.flows.values()], partitions, checkpoints: [...this.checkpoints.values()] };
  }

  /** Prometheus text. */
  prometheus(nowMs: number): string {
    const { partitions, checkpoints } = this.status(nowMs);
    const lines: string[] = [];
    const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    const family = (name: string, type: string, help: string, rows: [string, number][]) => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of rows) lines.push(`${name}{${labels}} ${v}`);
    };
    const src = (p: PartitionStatus) => `source="${esc(p.source)}",target="${esc(p.target)}",topic="${esc(p.remoteTopic)}",partition="${p.partition}"`;
    const prefix = 'kafka_connect_mirror_mirrorsourceconnector_';
    family(`${prefix}record_count`, 'counter', 'Records mirrored.', partitions.map((p) => [src(p), p.recordCount]));
    family(`${prefix}byte_count`, 'counter', 'Bytes (keys, values, headers) mirrored.', partitions.map((p) => [src(p), p.byteCount]));
    family(`${prefix}record_age_ms`, 'gauge', 'Age of the newest record when it was read from the source.', partitions.map((p) => [src(p), p.recordAgeMs]));
    family(`${prefix}replication_latency_ms`, 'gauge', 'Time from a record\'s timestamp to its acknowledgement by the target, newest.', partitions.map((p) => [src(p), p.replicationLatencyMs]));
    family(`${prefix}replication_latency_ms_max`, 'gauge', 'Largest replication latency seen.', partitions.map((p) => [src(p), p.replicationLatencyMsMax]));
    family(`${prefix}lag_records`, 'gauge', 'Records at the source not mirrored yet.', partitions.map((p) => [src(p), p.lagRecords]));
    family('kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms', 'gauge', 'Time from reading a group\'s offsets to the checkpoint\'s acknowledgement.',
      checkpoints.map((c) => [`source="${esc(c.source)}",target="${esc(c.target)}",group="${esc(c.group)}",topic="${esc(c.topic)}",partition="${c.partition}"`, c.checkpointLatencyMs]));
    return `${lines.join('\n')}\n`;
  }
}

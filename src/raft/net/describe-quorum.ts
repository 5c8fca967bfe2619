// One-shot clients for the quorum's admin APIs: DescribeQuorum (55), AddRaftVoter (80) and
// RemoveRaftVoter (81) — what a test, a bench or an admin tool uses to ask a voter who leads and how
// far each voter has replicated, or to change the voter set (KIP-853), over the same Kafka wire as
// the quorum.
import { connect } from 'node:net';
import { FrameSplitter, ZERO_UUID, decodeResponse, encodeRequestFrame } from '../../protocol/index.js';
import type { NodeId, QuorumDescription } from '../core/types.js';
import { ApiKey, METADATA_TOPIC, apiVersion, decodeDescribeQuorum } from './messages.js';

/** Sends one request and resolves with the decoded body of its response. */
function oneShot(host: string, port: number, apiKey: number, version: number, body: object, timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`api ${apiKey} to ${host}:${port} timed out`)); }, timeoutMs);
    const done = (err: Error | undefined, value?: Record<string, unknown>) => {
      clearTimeout(timer);
      socket.destroy();
      if (err !== undefined) reject(err);
      else resolve(value!);
    };
    const splitter = new FrameSplitter(16 << 20);
    socket.on('connect', () => {
      for (const c of encodeRequestFrame(apiKey, version, 1, 'raft-admin', body)) socket.write(c);
    });
    socket.on('data', (chunk) => {
      try {
        const frames = splitter.push(chunk);
        if (frames.length > 0) done(undefined, decodeResponse(apiKey, version, frames[0]!).body as Record<string, unknown>);
      } catch (err) {
        done(err as Error);
      }
    });
    socket.on('error', (err) => done(err));
    socket.on('close', () => done(new Error(`connection to ${host}:${port} closed before the answer`)));
  });
}

export async function describeQuorum(host: string, port: number, timeoutMs = 5_000): Promise<QuorumDescription & { errorCode: number }> {
  const body = { topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0 }] }] };
  return decodeDescribeQuorum(await oneShot(host, port, ApiKey.DescribeQuorum, apiVersion[ApiKey.DescribeQuorum]!, body, timeoutMs));
}

export interface VoterChangeAnswer {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

/** AddRaftVoter v0 to the leader: `voterId` listening at host:port (its CONTROLLER listener). */
export async function addRaftVoter(host: string, port: number, req: { clusterId: string; voterId: NodeId; voterHost: string; voterPort: number; timeoutMs?: number }): Promise<VoterChangeAnswer> {
  const timeoutMs = req.timeoutMs ?? 30_000;
  const body = {
    clusterId: req.clusterId, timeoutMs, voterId: req.voterId, voterDirectoryId: ZERO_UUID,
    listeners: [{ name: 'CONTROLLER', host: req.voterHost, port: req.voterPort }],
  };
  const r = await oneShot(host, port, ApiKey.AddRaftVoter, 0, body, timeoutMs + 5_000);
  return { errorCode: r['errorCode'] as number, errorMessage: r['errorMessage'] as string | null };
}

/** RemoveRaftVoter v0 to the leader. */
export async function removeRaftVoter(host: string, port: number, req: { clusterId: string; voterId: NodeId; timeoutMs?: number }): Promise<VoterChangeAnswer> {
  const body = { clusterId: req.clusterId, voterId: req.voterId, voterDirectoryId: ZERO_UUID };
  const r = await oneShot(host, port, ApiKey.RemoveRaftVoter, 0, body, (req.timeoutMs ?? 30_000) + 5_000);
  return { errorCode: r['errorCode'] as number, errorMessage: r['errorMessage'] as string | null };
}

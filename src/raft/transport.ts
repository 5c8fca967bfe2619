// The port between the driver and the network. The driver hands every outgoing envelope to
// `send`; the transport hands every incoming one to `deliver`, and reports a request it could not
// deliver (refused connection, lost connection, no answer within the request timeout) to
// `requestFailed`, so the core resends after its retry backoff instead of a whole request timeout.
import type { Envelope, NodeId, QuorumDescription } from './core/types.js';

/**
 * AddRaftVoter (80) / RemoveRaftVoter (81), as the driver is asked them. `timeoutMs` is the
 * request's TimeoutMs: how long to wait for the change to commit before answering REQUEST_TIMED_OUT.
 */
export type VoterChange =
  | { readonly kind: 'add'; readonly voterId: NodeId; readonly host: string | undefined; readonly port: number | undefined; readonly timeoutMs?: number }
  | { readonly kind: 'remove'; readonly voterId: NodeId; readonly timeoutMs?: number };

export interface TransportInbox {
  deliver(env: Envelope): void;
  requestFailed(correlationId: number): void;
  /** DescribeQuorum is answered from the driver's view, without going through the core. */
  describeQuorum(): { description: QuorumDescription; errorCode: number };
  /** KIP-853: answered once the change is committed, or refused; the error code is Kafka's. */
  changeVoters?(change: VoterChange): Promise<{ errorCode: number; errorMessage: string | null }>;
}

export interface RaftTransport {
  start(inbox: TransportInbox): Promise<void>;
  /** Never throws and never calls back into the inbox synchronously. */
  send(env: Envelope): void;
  close(): Promise<void>;
  /** The voter set changed (KIP-853): where the voters listen now (those with a known endpoint). */
  setVoters?(voters: readonly VoterAddress[]): void;
}

export interface VoterAddress {
  readonly nodeId: NodeId;
  readonly host: string;
  readonly port: number;
}

/** controller.quorum.voters: `1@127.0.0.1:9093,2@127.0.0.1:9094,...`. */
export function parseQuorumVoters(value: string): VoterAddress[] {
  const voters: VoterAddress[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter((s) => s.length > 0)) {
    const m = /^(\d+)@(.+):(\d+)$/.exec(part);
    if (m === null) throw new Error(`controller.quorum.voters: "${part}" is not id@host:port`);
    const nodeId = Number(m[1]);
    const port = Number(m[3]);
    let host = m[2]!;
    if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
    if (!Number.isSafeInteger(nodeId) || nodeId < 0 || nodeId > 0x7fffffff) throw new Error(`controller.quorum.voters: bad node id in "${part}"`);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`controller.quorum.voters: bad port in "${part}"`);
    if (voters.some((v) => v.nodeId === nodeId)) throw new Error(`controller.quorum.voters: node ${nodeId} listed twice`);
    voters.push({ nodeId, host, port });
  }
  if (voters.length === 0) throw new Error('controller.quorum.voters is empty');
  return voters;
}

export function formatQuorumVoters(voters: readonly VoterAddress[]): string {
  return voters.map((v) => `${v.nodeId}@${v.host}:${v.port}`).join(',');
}

// One line per message, for traces (the simulator's and the driver's).
import { lastOffsetOf } from './batch.js';
import type { Envelope } from './types.js';

export function describeMessage(env: Envelope): string {
  const m = env.message;
  switch (m.type) {
    case 'VoteRequest': return `${m.preVote ? 'PreVote' : 'Vote'}Req e${m.candidateEpoch} last=${m.lastOffset}@${m.lastOffsetEpoch}`;
    case 'VoteResponse': return `${m.preVote ? 'PreVote' : 'Vote'}Resp e${m.leaderEpoch} granted=${m.voteGranted} leader=${m.leaderId}`;
    case 'BeginQuorumEpochRequest': return `BeginQuorumReq e${m.leaderEpoch}`;
    case 'BeginQuorumEpochResponse': return `BeginQuorumResp e${m.leaderEpoch} err=${m.errorCode}`;
    case 'EndQuorumEpochRequest': return `EndQuorumReq e${m.leaderEpoch} successors=${m.preferredSuccessors.join(',')}`;
    case 'EndQuorumEpochResponse': return `EndQuorumResp e${m.leaderEpoch}`;
    case 'FetchRequest': return `FetchReq e${m.replicaEpoch} off=${m.fetchOffset}@${m.lastFetchedEpoch}`;
    case 'FetchResponse': {
      const what = m.divergingEpoch !== undefined ? ` diverging=${m.divergingEpoch.endOffset}@${m.divergingEpoch.epoch}`
        : m.snapshotId !== undefined ? ` snapshot=${m.snapshotId.endOffset}@${m.snapshotId.epoch}`
        : ` entries=${m.batches.length > 0 ? `${m.batches[0]!.baseOffset}..${lastOffsetOf(m.batches[m.batches.length - 1]!)}` : 'none'}`;
      return `FetchResp e${m.leaderEpoch} err=${m.errorCode} hw=${m.highWatermark}${what}`;
    }
    case 'FetchSnapshotRequest': return `FetchSnapshotReq ${m.snapshotId.endOffset}@${m.snapshotId.epoch} pos=${m.position}`;
    case 'FetchSnapshotResponse': return `FetchSnapshotResp err=${m.errorCode} pos=${m.position} bytes=${m.bytes.length}/${m.size}`;
  }
}

// OffsetFetch (key 9), v0-9. Committed offsets of a group (-1 with no error where none is
// committed, or for unknown groups). v2+ a null topic list means every committed partition and the
// answer has a top-level error; v0-1 report coordinator errors per partition. v5+ the leader epoch;
// v7 require_stable: a partition with a transactional offset commit not yet decided answers
// UNSTABLE_OFFSET_COMMIT (the client retries) instead of an offset that may change. v8+ batch
// several groups, each answered on its own; v9 a consumer-group member may name itself and its
// epoch (STALE_MEMBER_EPOCH, UNKNOWN_MEMBER_ID).
import type { OffsetFetchRequest } from '../../protocol/index.js';
import type { FetchedOffset } from '../../coordinator/index.js';
import type { HandlerSpec } from '../context.js';
import type { GroupServices } from '../services.js';

type Topics = { name: string; partitions: FetchedOffset[] }[];

export const offsetFetchHandler: HandlerSpec<GroupServices, 9> = {
  apiKey: 9,
  minVersion: 0,
  maxVersion: 9,
  handle(request: OffsetFetchRequest, ctx) {
    const groups = ctx.services.groups;
    const v = ctx.apiVersion;
    if (v >= 8) {
      return {
        throttleTimeMs: 0, errorCode: 0, topics: [],
        groups: request.groups.map((g) => {
          const out = groups.fetchOffsets(g.groupId, g.topics, v >= 9 ? { memberId: g.memberId, memberEpoch: g.memberEpoch } : undefined, request.requireStable);
          return { groupId: g.groupId, errorCode: out.errorCode, topics: out.topics };
        }),
      };
    }
    const topics = v < 2 && request.topics === null ? [] : request.topics;
    const out = groups.fetchOffsets(request.groupId, topics, undefined, v >= 7 && request.requireStable);
    let answer: Topics = out.topics;
    if (out.errorCode !== 0 && v < 2) {
      // No top-level error before v2: each requested partition carries it.
      answer = (topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((i) => ({ partitionIndex: i, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: out.errorCode })) }));
    }
    return { throttleTimeMs: 0, errorCode: out.errorCode, topics: answer, groups: [] };
  },
};

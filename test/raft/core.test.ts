import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RaftCore, RaftErrorCode, batchesOf, entriesOf, defaultRaftTimeouts, type Envelope, type FetchResponse, type VoteRequest, type VoteResponse } from '../../src/raft/index.js';
import { Cluster, config, drain, empty, entries, log, sent } from './helpers.js';

function voteRequest(from: number, to: number, epoch: number, lastOffset: number, lastEpoch: number, preVote = false): Envelope {
  const message: VoteRequest = { type: 'VoteRequest', candidateEpoch: epoch, candidateId: from, lastOffsetEpoch: lastEpoch, lastOffset, preVote };
  return { from, to, correlationId: 100 + from, message };
}

function onlyVoteResponse(core: RaftCore): { resp: VoteResponse; ready: ReturnType<typeof drain> } {
  const ready = drain(core);
  const msgs = sent(ready).filter((e) => e.message.type === 'VoteResponse');
  assert.equal(msgs.length, 1);
  return { resp: msgs[0]!.message as VoteResponse, ready };
}

test('a granted vote is persisted in the same Ready as the response, before it is sent', () => {
  const core = new RaftCore(config(1, [1, 2, 3]), empty, 0);
  drain(core);
  core.step(voteRequest(2, 1, 1, 0, 0), 5);
  const { resp, ready } = onlyVoteResponse(core);
  assert.equal(resp.voteGranted, true);
  const withVote = ready.find((r) => r.messages.some((m) => m.message.type === 'VoteResponse'))!;
  assert.deepEqual(withVote.quorumState, { epoch: 1, votedId: 2 });
  assert.equal(core.votedId, 2);
});

test('a voter grants one vote per epoch', () => {
  const core = new RaftCore(config(1, [1, 2, 3]), empty, 0);
  drain(core);
  core.step(voteRequest(2, 1, 1, 0, 0), 5);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, true);
  core.step(voteRequest(3, 1, 1, 0, 0), 6);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, false);
  core.step(voteRequest(2, 1, 1, 0, 0), 7);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, true, 'the same candidate asking again is granted again');
});

test('a candidate whose log is behind is refused (lower last epoch, or same epoch and shorter)', () => {
  const persisted = { quorumState: { epoch: 3 }, snapshot: undefined, batches: log([1, 1, 3, 3]) };
  const core = new RaftCore(config(1, [1, 2, 3]), persisted, 0);
  drain(core);
  core.step(voteRequest(2, 1, 4, 10, 2), 1);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, false, 'last epoch 2 < 3');
  core.step(voteRequest(3, 1, 5, 3, 3), 2);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, false, 'same epoch, 3 < 4 entries');
  core.step(voteRequest(2, 1, 6, 4, 3), 3);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, true, 'same epoch, same length');
});

test('a vote request from an older epoch is refused and tells the newer epoch', () => {
  const core = new RaftCore(config(1, [1, 2, 3]), { ...empty, quorumState: { epoch: 5 } }, 0);
  drain(core);
  core.step(voteRequest(2, 1, 4, 0, 0), 1);
  const { resp } = onlyVoteResponse(core);
  assert.equal(resp.voteGranted, false);
  assert.equal(resp.leaderEpoch, 5);
});

test('a pre-vote changes nothing: no epoch bump, no vote recorded, no quorum-state write', () => {
  const core = new RaftCore(config(1, [1, 2, 3]), { ...empty, quorumState: { epoch: 2 } }, 0);
  drain(core);
  core.step(voteRequest(2, 1, 3, 0, 0, true), 1);
  const { resp, ready } = onlyVoteResponse(core);
  assert.equal(resp.voteGranted, true);
  assert.equal(resp.preVote, true);
  assert.equal(core.epoch, 2);
  assert.equal(core.votedId, undefined);
  assert.ok(ready.every((r) => r.quorumState === undefined));
});

test('a follower that heard from its leader within the fetch timeout refuses pre-votes; later it grants them', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const leader = c.leader()!;
  const follower = [...c.cores.values()].find((x) => !x.isLeader)!;
  const other = [...c.cores.values()].find((x) => !x.isLeader && x !== follower)!;
  const req = voteRequest(other.nodeId, follower.nodeId, leader.epoch + 1, other.log.endOffset, other.log.lastEpoch, true);
  follower.step(req, c.now);
  assert.equal(onlyVoteResponse(follower).resp.voteGranted, false);
  // Cut the leader off from this follower, and let the fetch timeout pass.
  c.drop = (env) => env.from === leader.nodeId || env.to === leader.nodeId;
  const cutAt = c.now;
  follower.step({ ...req, correlationId: 999 }, cutAt + 2500);
  assert.equal(onlyVoteResponse(follower).resp.voteGranted, true);
  assert.equal(follower.epoch, leader.epoch, 'still no epoch change');
});

test('a prospective becomes candidate only with a majority of pre-votes, and only then bumps the epoch', () => {
  const core = new RaftCore(config(1, [1, 2, 3]), empty, 0);
  drain(core);
  core.tick(1000);
  assert.equal(core.role, 'prospective');
  assert.equal(core.epoch, 0);
  const preVotes = sent(drain(core)).filter((e) => e.message.type === 'VoteRequest');
  assert.equal(preVotes.length, 2);
  assert.ok(preVotes.every((e) => (e.message as VoteRequest).preVote && (e.message as VoteRequest).candidateEpoch === 1));
  const grant = (env: Envelope, granted: boolean): Envelope => ({
    from: env.to, to: 1, correlationId: env.correlationId,
    message: { type: 'VoteResponse', errorCode: 0, leaderEpoch: 0, leaderId: undefined, voteGranted: granted, preVote: true, candidateEpoch: 1 },
  });
  core.step(grant(preVotes[0]!, false), 1001);
  assert.equal(core.role, 'prospective');
  core.step(grant(preVotes[1]!, true), 1002);
  assert.equal(core.role, 'candidate');
  assert.equal(core.epoch, 1);
  const ready = drain(core);
  assert.deepEqual(ready[0]!.quorumState, { epoch: 1, votedId: 1 });
  assert.ok(sent(ready).every((e) => e.message.type !== 'VoteRequest' || !(e.message as VoteRequest).preVote));
});

test('three voters elect one leader, replicate, and apply the same entries everywhere', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const leaders = [...c.cores.values()].filter((x) => x.isLeader);
  assert.equal(leaders.length, 1);
  c.propose('a', 'b');
  c.propose('c');
  // Followers learn the high watermark from the next fetch answer: at most fetchMaxWaitMs (500) later.
  c.run(600);
  for (const id of [1, 2, 3]) assert.deepEqual(c.applied.get(id), ['a', 'b', 'c'], `node ${id}`);
  assert.equal(leaders[0]!.highWatermark, 4, 'leader-change record plus three entries');
});

test('a follower with a divergent tail truncates to the leader epoch end and then matches the leader', () => {
  // Leader 1 has epochs [1, 1, 2, 2] and leads epoch 3; follower 2 has [1, 1, 1, 1, 1] from a deposed epoch-1 leader.
  const leaderLog = entries([1, 1, 2, 2]);
  const followerLog = entries([1, 1, 1, 1, 1]);
  const leader = new RaftCore(config(1, [1, 2]), { quorumState: { epoch: 2, votedId: 1 }, snapshot: undefined, batches: batchesOf(leaderLog) }, 0);
  const follower = new RaftCore(config(2, [1, 2]), { quorumState: { epoch: 2 }, snapshot: undefined, batches: batchesOf(followerLog) }, 0);
  // Elect node 1 by hand: its election timer fires first, node 2 grants (node 1's log has the higher last epoch).
  const c = { now: 0 };
  const deliver = (from: RaftCore) => {
    for (const env of sent(drain(from))) {
      const to = env.to === 1 ? leader : follower;
      to.step(env, c.now);
    }
  };
  const truncations: number[] = [];
  const origStep = follower.step.bind(follower);
  follower.step = (env, now) => {
    origStep(env, now);
    const m = env.message;
    if (m.type === 'FetchResponse' && (m as FetchResponse).divergingEpoch !== undefined) truncations.push(follower.log.endOffset);
  };
  drain(leader); drain(follower);
  c.now = 1000;
  leader.tick(c.now);
  for (let i = 0; i < 40; i++) { deliver(leader); deliver(follower); }
  assert.equal(leader.role, 'leader');
  assert.equal(leader.epoch, 3);
  assert.deepEqual(truncations, [2], 'cut back to where epoch 1 ends on the leader');
  assert.equal(follower.log.endOffset, leader.log.endOffset);
  for (let o = 0; o < leader.log.endOffset; o++) {
    assert.equal(follower.log.entryAt(o)!.epoch, leader.log.entryAt(o)!.epoch, `offset ${o}`);
  }
  assert.equal(follower.highWatermark, 5);
});

test('the high watermark moves only once an entry of the leader epoch is on a majority', () => {
  // Node 1 becomes leader of epoch 2 holding four epoch-1 entries; its leader-change record sits at offset 4.
  const leader = new RaftCore(config(1, [1, 2, 3]), { quorumState: { epoch: 1 }, snapshot: undefined, batches: log([1, 1, 1, 1]) }, 0);
  drain(leader);
  leader.tick(1000);
  for (const env of sent(drain(leader))) {
    if (env.message.type === 'VoteRequest') {
      const m = env.message as VoteRequest;
      leader.step({ from: env.to, to: 1, correlationId: env.correlationId, message: {
        type: 'VoteResponse', errorCode: 0, leaderEpoch: m.preVote ? 1 : m.candidateEpoch, leaderId: undefined,
        voteGranted: true, preVote: m.preVote, candidateEpoch: m.candidateEpoch } }, 1001);
    }
  }
  for (let i = 0; i < 5 && !leader.isLeader; i++) {
    for (const env of sent(drain(leader))) {
      if (env.message.type !== 'VoteRequest') continue;
      const m = env.message as VoteRequest;
      leader.step({ from: env.to, to: 1, correlationId: env.correlationId, message: {
        type: 'VoteResponse', errorCode: 0, leaderEpoch: m.candidateEpoch, leaderId: undefined,
        voteGranted: true, preVote: m.preVote, candidateEpoch: m.candidateEpoch } }, 1002);
    }
  }
  assert.equal(leader.role, 'leader');
  assert.equal(leader.epoch, 2);
  drain(leader);
  const fetch = (from: number, offset: number, lastEpoch: number, corr: number): Envelope => ({
    from, to: 1, correlationId: corr,
    message: { type: 'FetchRequest', replicaId: from, replicaEpoch: 2, fetchOffset: offset, lastFetchedEpoch: lastEpoch, maxWaitMs: 0 },
  });
  // Node 2 has all four old entries, but nothing of epoch 2 yet: nothing is committed.
  leader.step(fetch(2, 4, 1, 1), 1100);
  drain(leader);
  assert.equal(leader.highWatermark, 0);
  // Node 2 now has the leader-change record too: everything up to it commits at once.
  leader.step(fetch(2, 5, 2, 2), 1101);
  const committed = entriesOf(drain(leader).flatMap((r) => r.committed));
  assert.equal(leader.highWatermark, 5);
  assert.deepEqual(committed.map((e) => e.offset), [0, 1, 2, 3, 4]);
});

test('check quorum: a leader that no majority fetches from within 1.5 fetch timeouts resigns', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const leader = c.leader()!;
  c.run(5000);
  assert.equal(leader.isLeader, true, 'followers fetching keep it leader');
  c.drop = (env) => env.from === leader.nodeId || env.to === leader.nodeId;
  c.run(2900);
  assert.equal(leader.isLeader, true, 'not yet: 1.5 x 2000 ms have not passed');
  c.run(200);
  assert.equal(leader.role, 'resigned');
  assert.equal(leader.propose([new Uint8Array(1)], c.now).ok, false);
});

test('fresh quorum contact: a leader whose majority fetched within a fetch timeout has it; one that stood still longer (its clock ran on) has not, before it even ticks', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const leader = c.leader()!;
  c.run(2000);
  assert.equal(leader.hasFreshQuorumContact(c.now), true, 'followers fetching');
  const follower = [...c.cores.values()].find((n) => n !== leader)!;
  assert.equal(follower.hasFreshQuorumContact(c.now), false, 'a follower has none');
  // The leader's process stands still for longer than a fetch timeout (a SIGSTOP): asked at once
  // on waking, with the real time, it must not vouch for being the leader.
  assert.equal(leader.hasFreshQuorumContact(c.now + defaultRaftTimeouts.fetchTimeoutMs), false);
  assert.equal(leader.isLeader, true, 'it does not know yet that it may have been replaced');
});

test('graceful resignation: EndQuorumEpoch lets the first preferred successor stand at once', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const old = c.leader()!;
  const epoch = old.epoch;
  c.propose('x');
  c.run(50);
  old.resign(c.now);
  c.collect(old.nodeId);
  const ends = c.queue.filter((e) => e.message.type === 'EndQuorumEpochRequest');
  assert.equal(ends.length, 2);
  c.deliverAll();
  c.run(100);
  const next = c.leader();
  assert.ok(next !== undefined && next !== old, 'a new leader within 100 ms, long before any election timeout');
  assert.equal(next.epoch, epoch + 1);
});

test('a lagging follower catches up from a snapshot sent in chunks, then from the log', () => {
  const c = new Cluster([1, 2, 3], [], { snapshotChunkBytes: 8 });
  c.run(3000);
  const leader = c.leader()!;
  const lagging = [...c.cores.values()].find((x) => !x.isLeader)!;
  c.drop = (env) => env.from === lagging.nodeId || env.to === lagging.nodeId;
  for (let i = 0; i < 10; i++) c.propose(`v${i}`);
  c.run(50);
  const snapshotData = new TextEncoder().encode('state-machine-at-hw');
  leader.createSnapshot(leader.highWatermark, snapshotData);
  c.collect(leader.nodeId);
  assert.equal(leader.log.startOffset, leader.highWatermark, 'the log below the snapshot is gone');
  c.propose('after');
  let chunks = 0;
  let restored: Uint8Array | undefined;
  c.drop = (env) => {
    if (env.message.type === 'FetchSnapshotResponse') chunks++;
    return false;
  };
  const origCollect = c.collect.bind(c);
  c.collect = (id) => {
    if (id === lagging.nodeId) {
      for (const r of drain(lagging)) {
        c.queue.push(...r.messages);
        if (r.restoreSnapshot !== undefined) restored = r.restoreSnapshot.data;
        for (const e of entriesOf(r.committed)) if (e.kind === 'data') c.applied.get(id)!.push(new TextDecoder().decode(e.value));
      }
      return;
    }
    origCollect(id);
  };
  c.run(3000);
  assert.deepEqual(restored, snapshotData);
  assert.ok(chunks >= Math.ceil(snapshotData.length / 8), `${chunks} chunks`);
  assert.equal(lagging.log.endOffset, leader.log.endOffset);
  assert.ok(c.applied.get(lagging.nodeId)!.includes('after'));
});

test('an observer finds the leader through a voter, follows the log, and never stands for election', () => {
  const c = new Cluster([1, 2, 3], [4]);
  c.run(3000);
  c.propose('o1');
  c.run(1000);
  const observer = c.core(4);
  assert.equal(observer.role, 'follower');
  assert.equal(observer.leaderId, c.leader()!.nodeId);
  assert.deepEqual(c.applied.get(4), ['o1']);
  const leader = c.leader()!;
  c.drop = (env) => env.from === leader.nodeId || env.to === leader.nodeId;
  c.run(10_000);
  assert.ok(observer.role === 'follower' || observer.role === 'unattached');
  const d = c.leader()!.describeQuorum();
  assert.equal(d.voters.length, 3);
});

test('a leader that restarts resigns its epoch instead of leading it again', () => {
  const core = new RaftCore(config(1, [1, 2, 3]), { ...empty, quorumState: { epoch: 4, leaderId: 1, votedId: 1 } }, 0);
  assert.equal(core.role, 'resigned');
  assert.equal(core.propose([new Uint8Array(1)], 1).ok, false);
  core.step(voteRequest(2, 1, 4, 100, 4), 2);
  assert.equal(onlyVoteResponse(core).resp.voteGranted, false, 'it voted for itself in epoch 4');
});

test('a single voter elects itself and commits alone', () => {
  const core = new RaftCore(config(1, [1]), empty, 0);
  assert.equal(core.role, 'leader');
  const r = core.propose([new TextEncoder().encode('solo')], 1);
  assert.ok(r.ok);
  const committed = drain(core).flatMap((x) => x.committed);
  assert.deepEqual(committed.map((e) => e.kind), ['control', 'data']);
});

test('a fetch from a fenced epoch gets FENCED_LEADER_EPOCH with the current leader', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const leader = c.leader()!;
  leader.step({ from: 2, to: leader.nodeId, correlationId: 7, message: {
    type: 'FetchRequest', replicaId: 2, replicaEpoch: leader.epoch - 1, fetchOffset: 0, lastFetchedEpoch: 0, maxWaitMs: 0 } }, c.now);
  const resp = sent(drain(leader)).find((e) => e.correlationId === 7)!.message as FetchResponse;
  assert.equal(resp.errorCode, RaftErrorCode.FENCED_LEADER_EPOCH);
  assert.equal(resp.leaderId, leader.nodeId);
  assert.equal(resp.leaderEpoch, leader.epoch);
});

test('a prospective granted a pre-vote by a voter still naming the dead leader becomes candidate, not its follower again', () => {
  // Node 1 follows leader 2 of epoch 3 and stops hearing from it.
  const core = new RaftCore(config(1, [1, 2, 3]), { ...empty, quorumState: { epoch: 3, leaderId: 2 } }, 0);
  drain(core);
  core.tick(defaultRaftTimeouts.fetchTimeoutMs);
  assert.equal(core.role, 'prospective');
  const preVote = sent(drain(core)).find((e) => e.to === 3 && e.message.type === 'VoteRequest')!;
  // Node 3 grants (it has not heard from 2 lately either) but still names 2 as the leader of epoch 3.
  const grant: VoteResponse = {
    type: 'VoteResponse', errorCode: RaftErrorCode.NONE, leaderEpoch: 3, leaderId: 2, voteGranted: true, preVote: true, candidateEpoch: 4,
  };
  core.step({ from: 3, to: 1, correlationId: preVote.correlationId, message: grant }, defaultRaftTimeouts.fetchTimeoutMs + 1);
  assert.equal(core.role, 'candidate');
  assert.equal(core.epoch, 4);
});

test('KIP-853: an observer that caught up is added as a fourth voter, and the new set counts as soon as it is appended', () => {
  const c = new Cluster([1, 2, 3], [4]);
  c.run(3000);
  c.propose('before');
  c.run(1000);
  const leader = c.leader()!;
  assert.deepEqual(leader.removeVoter(9, c.now), { ok: false, error: 'VOTER_NOT_FOUND', message: '9 is not a voter of 1,2,3' });
  assert.equal(leader.addVoter({ id: 2 }, c.now).ok === false && 'DUPLICATE_VOTER', 'DUPLICATE_VOTER');
  const r = leader.addVoter({ id: 4, host: '127.0.0.1', port: 9097 }, c.now);
  assert.ok(r.ok, JSON.stringify(r));
  assert.deepEqual(leader.voterSet.map((v) => v.id), [1, 2, 3, 4], 'in force at once on the leader');
  // One change at a time: the next is refused until this one commits.
  const second = leader.removeVoter(3, c.now);
  assert.equal(second.ok === false && second.error, 'REQUEST_TIMED_OUT');
  c.collect(leader.nodeId);
  c.deliverAll();
  c.run(1000);
  for (const id of [1, 2, 3, 4]) assert.deepEqual(c.core(id).voterSet.map((v) => v.id), [1, 2, 3, 4], `node ${id}`);
  assert.ok(c.core(4).isVoter);
  assert.ok(leader.highWatermark > r.offset);
  assert.equal(leader.describeQuorum().voters.length, 4);
  // Now the majority is 3 of 4: with two voters cut off nothing commits.
  c.drop = (env) => [3, 4].includes(env.from) || [3, 4].includes(env.to);
  const hw = leader.highWatermark;
  c.propose('needs three');
  c.run(500);
  assert.equal(leader.highWatermark, hw);
  c.drop = () => false;
  c.run(2500);
  assert.ok(leader.isLeader);
  assert.ok(leader.highWatermark > hw);
});

test('KIP-853: removing the leader makes it resign once the change commits; the others elect among the new set', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  c.propose('x');
  c.run(500);
  const leader = c.leader()!;
  const epoch = leader.epoch;
  const r = leader.removeVoter(leader.nodeId, c.now);
  assert.ok(r.ok, JSON.stringify(r));
  assert.ok(!leader.isVoter);
  c.collect(leader.nodeId);
  c.deliverAll();
  c.run(5000);
  const next = c.leader()!;
  assert.notEqual(next.nodeId, leader.nodeId);
  assert.ok(next.epoch > epoch);
  assert.ok(!leader.isVoter);
  assert.ok(leader.role === 'follower' || leader.role === 'unattached', leader.role);
  c.propose('after');
  c.run(500);
  for (const id of [1, 2, 3]) assert.deepEqual(c.applied.get(id), ['x', 'after'], `node ${id}`);
  assert.deepEqual(next.voterSet.map((v) => v.id).sort(), [1, 2, 3].filter((id) => id !== leader.nodeId));
});

test('KIP-853: an uncommitted VotersRecord cut by a truncation gives back the previous voter set', () => {
  const c = new Cluster([1, 2, 3]);
  c.run(3000);
  const leader = c.leader()!;
  c.propose('x');
  c.run(500);
  // The leader appends a removal nobody else sees, then loses leadership.
  c.drop = (env) => env.from === leader.nodeId || env.to === leader.nodeId;
  const victim = [1, 2, 3].find((id) => id !== leader.nodeId)!;
  assert.ok(leader.removeVoter(victim, c.now).ok);
  assert.equal(leader.voterSet.length, 2);
  c.collect(leader.nodeId);
  c.run(8000);
  c.drop = () => false;
  c.run(3000);
  assert.deepEqual(leader.voterSet.map((v) => v.id), [1, 2, 3], 'the old leader truncated the record');
  assert.ok(c.leader() !== undefined && c.leader() !== leader);
});

test('KIP-853: a snapshot keeps the voter set, so a node restarted from it counts the added voter', () => {
  const c = new Cluster([1, 2, 3], [4]);
  c.run(3000);
  c.propose('a');
  c.run(1000);
  const leader = c.leader()!;
  assert.ok(leader.addVoter({ id: 4, host: '127.0.0.1', port: 9097 }, c.now).ok);
  c.collect(leader.nodeId);
  c.deliverAll();
  c.run(1000);
  c.propose('b');
  c.run(500);
  const follower = c.core([1, 2, 3].find((id) => id !== leader.nodeId)!);
  // Snapshot everything applied (the VotersRecord included), then restart from the snapshot alone.
  follower.createSnapshot(follower.highWatermark, new TextEncoder().encode('state'));
  drain(follower);
  const snapshot = follower.log.snapshot!;
  const restarted = new RaftCore(config(follower.nodeId, [1, 2, 3]), { quorumState: { epoch: follower.epoch }, snapshot, batches: [] }, c.now);
  assert.deepEqual(restarted.voterSet.map((v) => v.id), [1, 2, 3, 4]);
  assert.deepEqual(restarted.voterSet.find((v) => v.id === 4), { id: 4, host: '127.0.0.1', port: 9097 });
  // The state machine gets its own bytes back, without the voter set.
  const ready = restarted.ready()!;
  assert.equal(new TextDecoder().decode(ready.restoreSnapshot!.data), 'state');
});

test('two candidates split the vote while the third voter is down: an unreachable voter ends the round at once, not after the election timeout', () => {
  // Nodes 1 and 3 followed leader 2 of epoch 3, which died; both stood in epoch 4 at the same moment
  // and refused each other. Node 2's connection is refused.
  const t0 = defaultRaftTimeouts.fetchTimeoutMs;
  const nodes = [1, 3].map((id) => {
    const core = new RaftCore(config(id, [1, 2, 3], { random: () => 0.5 }), { ...empty, quorumState: { epoch: 3, leaderId: 2 } }, 0);
    drain(core);
    core.tick(t0);
    assert.equal(core.role, 'prospective');
    return core;
  });
  const [n1, n3] = nodes as [RaftCore, RaftCore];
  let now = t0;
  // The pre-votes cross: each grants the other's (both are prospective), so both become candidates in epoch 4.
  const exchange = (type: 'VoteRequest', requests: Envelope[][]): Envelope[] => {
    const answers = nodes.map((c, i) => {
      const req = requests[1 - i]!.find((e) => e.to === c.nodeId && e.message.type === type)!;
      c.step(req, ++now);
      return sent(drain(c)).find((e) => e.correlationId === req.correlationId)!;
    });
    for (const [i, c] of nodes.entries()) c.step(answers[1 - i]!, ++now);
    return answers;
  };
  exchange('VoteRequest', nodes.map((c) => sent(drain(c))));
  assert.deepEqual(nodes.map((c) => [c.role, c.epoch]), [['candidate', 4], ['candidate', 4]]);
  const votes = nodes.map((c) => sent(drain(c)));
  const answers = exchange('VoteRequest', votes);
  assert.deepEqual(answers.map((a) => (a.message as VoteResponse).voteGranted), [false, false]);
  // The Vote requests to node 2 fail in the transport.
  for (const [i, c] of nodes.entries()) {
    c.requestFailed(votes[i]!.find((e) => e.to === 2)!.correlationId, ++now);
    drain(c);
  }
  // Without counting node 2 both would wait for their election timeout (at least 1000 ms); now the
  // split ends within the election backoff and one of them leads after a fresh pre-vote round.
  const deadline = now + defaultRaftTimeouts.electionTimeoutMs / 2;
  const queue: Envelope[] = [];
  while (now < deadline && !n1.isLeader && !n3.isLeader) {
    now += 1;
    for (const c of nodes) if (c.nextDeadlineMs() <= now) { c.tick(now); queue.push(...sent(drain(c))); }
    while (queue.length > 0) {
      const env = queue.shift()!;
      const to = nodes.find((c) => c.nodeId === env.to);
      if (to === undefined) { nodes.find((c) => c.nodeId === env.from)!.requestFailed(env.correlationId, now); continue; }
      to.step(env, now);
      queue.push(...sent(drain(to)));
    }
  }
  assert.ok(n1.isLeader || n3.isLeader, `no leader ${now - t0} ms after the kill's fetch timeout`);
  assert.ok(now - t0 < 200, `took ${now - t0} ms`);
});

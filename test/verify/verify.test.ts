// `logline verify` end to end: against a one-node broker in this process it finds nothing; through
// the CLI it prints a verdict, the JSON history and a timeline; and against brokers with a bug
// planted by a router interceptor (no production code has a switch for it) it finds the bug: an
// acknowledged produce whose records were never stored is a lost write, a fetch that answers from
// one offset further is a poll skip.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type ServerHandle } from '../../src/node/index.js';
import { parseBrokerConfig } from '../../src/config/index.js';
import { ApiKey } from '../../src/protocol/index.js';
import { WORKLOAD_DEFAULTS, runVerify, timelineSvg, type VerifyResult } from '../../src/verify/index.js';
import { runProcess, tempDataDir } from '../broker/process-helpers.js';

async function withServer(fn: (server: ServerHandle, bootstrap: string) => Promise<void>): Promise<void> {
  const server = await startServer({ listeners: ['PLAINTEXT://127.0.0.1:0'], dataDir: tempDataDir(), config: parseBrokerConfig({
    'node.id': '1', 'group.initial.rebalance.delay.ms': '0',
    // KIP-848 members heartbeat often, so the group workload's rebalances finish within the run.
    'group.consumer.min.heartbeat.interval.ms': '100', 'group.consumer.heartbeat.interval.ms': '300',
  }) });
  try {
    await fn(server, `127.0.0.1:${server.listeners[0]!.port}`);
  } finally {
    await server.close();
  }
}

const small = (bootstrap: string, seed: number) => ({
  client: { bootstrap },
  workload: { ...WORKLOAD_DEFAULTS, opsMax: 300, durationMs: 15_000, seed, finalReadTimeoutMs: 20_000 },
});

function found(r: VerifyResult): string[] {
  return r.report.classes.filter((c) => c.count > 0).map((c) => c.name);
}

test('verify against a one-node broker: every kind of operation happens and no anomaly is found', { timeout: 60_000 }, async () => {
  await withServer(async (_server, bootstrap) => {
    const r = await runVerify(small(bootstrap, 1));
    assert.equal(r.report.valid, true, JSON.stringify(r.report.classes.filter((c) => c.count > 0)));
    assert.deepEqual(found(r), []);
    const s = r.report.stats;
    assert.ok(s.sends.ok > 50, `sends ${JSON.stringify(s.sends)}`);
    assert.ok(s.txns.ok > 0 && s.txns.fail > 0, `transactions ${JSON.stringify(s.txns)}: some commit, some abort`);
    assert.ok(s.polls > 0 && s.recordsRead > s.sends.ok, 'consumers and the final read read them');
    assert.equal(r.report.unseen.count, 0, 'the final read reached every partition\'s end');
    const final = r.history.filter((op) => op.f === 'final').at(-1)!;
    assert.equal(final.type, 'ok');
    const svg = timelineSvg(r.history);
    assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    assert.match(svg, /<polyline /, 'a throughput line');
  });
});

test('logline verify on the command line: a verdict table, --json with the history, --history and --timeline files, exit code 0', { timeout: 90_000 }, async () => {
  await withServer(async (_server, bootstrap) => {
    const dir = tempDataDir();
    const human = await runProcess(process.execPath, ['bin/logline.js', 'verify', '-b', bootstrap, '--ops', '150', '--seconds', '10', '--quiet',
      '--history', join(dir, 'h.json'), '--timeline', join(dir, 't.svg')], null, 60_000);
    assert.equal(human.code, 0, human.stdout + human.stderr);
    assert.match(human.stdout, /^CLASS +VERDICT +COUNT +MEANS$/m);
    assert.match(human.stdout, /^lost-write +none +0 /m);
    assert.match(human.stdout, /verdict: no anomaly found/);
    assert.ok(JSON.parse(readFileSync(join(dir, 'h.json'), 'utf8')).history.length > 150);
    assert.ok(existsSync(join(dir, 't.svg')));
    const json = await runProcess(process.execPath, ['bin/logline.js', 'verify', '-b', bootstrap, '--ops', '60', '--seconds', '10', '--json', '--txn-producers', '0', '--seed', '7'], null, 60_000);
    assert.equal(json.code, 0, json.stderr);
    const out = JSON.parse(json.stdout);
    assert.equal(out.valid, true);
    assert.equal(out.seed, 7);
    assert.deepEqual(out.classes.map((c: { name: string }) => c.name), ['lost-write', 'duplicate', 'aborted-read', 'nonmonotonic-poll', 'poll-skip', 'inconsistent-offset', 'G0', 'G1c']);
    assert.ok(out.history.some((op: { f: string; type: string }) => op.f === 'send' && op.type === 'ok'));
    const usage = await runProcess(process.execPath, ['bin/logline.js', 'verify', '--faults', 'kill'], null, 30_000);
    assert.equal(usage.code, 2, 'faults need --cluster');
  });
});

test('a broker that acknowledges every 10th produce without storing it: verify reports lost writes', { timeout: 60_000 }, async () => {
  await withServer(async (server, bootstrap) => {
    // The planted bug: answer success and the offset a real append would have had, store nothing.
    let produces = 0;
    const lastOffset = new Map<string, bigint>();
    const dropped: string[] = [];
    server.router.observe(ApiKey.Produce, (_h, _req, res: any) => {
      for (const t of res.responses) for (const p of t.partitionResponses) if (p.errorCode === 0) lastOffset.set(`${t.name}-${p.index}`, p.baseOffset);
    });
    server.router.intercept(ApiKey.Produce, (_header, request: any) => {
      if (request.transactionalId !== null || request.acks === 0 || ++produces % 10 !== 0) return undefined;
      const responses = request.topicData.map((t: any) => ({
        name: t.name,
        partitionResponses: t.partitionData.map((p: any) => {
          dropped.push(`${t.name}-${p.index}`);
          return { index: p.index, errorCode: 0, baseOffset: (lastOffset.get(`${t.name}-${p.index}`) ?? -1n) + 1n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [], errorMessage: null };
        }),
      }));
      return { responses, throttleTimeMs: 0 };
    });
    const r = await runVerify(small(bootstrap, 2));
    assert.ok(dropped.length > 0, 'the bug fired');
    assert.equal(r.report.valid, false);
    const lost = r.report.classes.find((c) => c.name === 'lost-write')!;
    assert.equal(lost.verdict, 'anomaly');
    assert.ok(lost.count >= 1 && lost.count <= dropped.length, `${lost.count} lost of ${dropped.length} dropped`);
    const example = lost.examples[0] as { partition: string; value: string };
    assert.ok(dropped.includes(example.partition));
  });
});

test('a broker that answers every 4th consumer fetch from one offset past the one asked for: verify reports skipping polls', { timeout: 60_000 }, async () => {
  await withServer(async (server, bootstrap) => {
    let fetches = 0;
    let skipped = 0;
    server.router.intercept(ApiKey.Fetch, (header, request: any) => {
      // Consumers only, not the final read (which is the ground truth the skips are measured against).
      if (request.replicaId !== -1 || header.clientId === 'logline-verify-final') return undefined;
      for (const t of request.topics) {
        for (const p of t.partitions) {
          if (p.fetchOffset > 0n && ++fetches % 4 === 0) { p.fetchOffset += 1n; skipped++; }
        }
      }
      return undefined; // on to the real handler, with the offset moved
    });
    const r = await runVerify(small(bootstrap, 3));
    assert.ok(skipped > 0, 'the bug fired');
    assert.equal(r.report.valid, false);
    assert.ok(found(r).includes('poll-skip'), `found ${found(r).join(', ')}`);
    assert.ok(!found(r).includes('lost-write'), 'the final read still sees every record');
  });
});

/** The group workload's partition owners over time: partition → the processes that were given it, in order. */
function owners(r: VerifyResult): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const op of r.history) {
    if (op.f !== 'assign' || op.type !== 'ok' || op.group === undefined) continue;
    for (const p of Object.keys(op.positions ?? {})) out.set(p, [...(out.get(p) ?? []), op.process]);
  }
  return out;
}

const groupRun = (bootstrap: string, seed: number) => {
  const o = small(bootstrap, seed);
  // Bounded by time rather than operations: the members' empty polls are quick, and rebalances (a
  // member leaves and joins again now and then) need a few seconds to happen.
  return { ...o, workload: { ...o.workload, consumerMode: 'group' as const, consumers: 3, opsMax: 20_000, durationMs: 12_000 } };
};

test('verify --workload group: KIP-848 members rebalance, each new owner resumes at the committed offset, no anomaly', { timeout: 90_000 }, async () => {
  await withServer(async (_server, bootstrap) => {
    const r = await runVerify(groupRun(bootstrap, 4));
    assert.equal(r.report.valid, true, JSON.stringify(r.report.classes.filter((c) => c.count > 0)));
    assert.deepEqual(found(r), []);
    const moves = owners(r);
    assert.equal(moves.size, 3, `every partition was assigned: ${JSON.stringify([...moves])}`);
    assert.ok([...moves.values()].some((ps) => ps.length >= 2), `some partition changed owner: ${JSON.stringify([...moves])}`);
    const commits = r.history.filter((op) => op.f === 'commit' && op.type === 'ok');
    assert.ok(commits.length > 5, `${commits.length} commits`);
    const resumedPastZero = r.history.some((op) => op.f === 'assign' && op.group !== undefined && Object.values(op.positions ?? {}).some((x) => x > 0));
    assert.ok(resumedPastZero, 'an owner resumed from a committed offset above 0');
    assert.ok(r.report.stats.polls > 20 && r.report.unseen.count === 0, JSON.stringify(r.report.stats));
  });
});

test('a broker that stores every 3rd group member\'s commit 2 past the offset asked for: verify --workload group reports a poll skip across a rebalance', { timeout: 90_000 }, async () => {
  await withServer(async (server, bootstrap) => {
    // The planted bug: the committed offset is ahead of what the member consumed, so the next
    // owner of the partition starts past records nobody read.
    let commits = 0;
    let moved = 0;
    server.router.intercept(ApiKey.OffsetCommit, (_header, request: any) => {
      if (request.memberId === '' || ++commits % 3 !== 0) return undefined;
      for (const t of request.topics) for (const p of t.partitions) { p.committedOffset += 2n; moved++; }
      return undefined;
    });
    const r = await runVerify(groupRun(bootstrap, 5));
    assert.ok(moved > 0, 'the bug fired');
    assert.equal(r.report.valid, false);
    assert.ok(found(r).includes('poll-skip'), `found ${found(r).join(', ')}`);
    const example = r.report.classes.find((c) => c.name === 'poll-skip')!.examples.find((e: any) => e.group !== undefined) as { group: string } | undefined;
    assert.ok(example, 'a group resume is among the examples');
    assert.ok(!found(r).includes('lost-write'), 'the final read still sees every record');
  });
});

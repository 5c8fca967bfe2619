// A consumer group moved from A to B: a kafkajs group reads part of a topic on A and stops; the
// mirror checkpoints its offsets and (sync.group.offsets.enabled) commits the translated ones to
// the group on B, where the same group resumes: it skips no record and re-reads at most the records
// mirrored since the last offset sync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { committedOffsets, coordinatorFor } from '../../src/client/index.js';
import { decodeCheckpoint } from '../../src/mirror/index.js';
import { createTopic, eventually, readAll, startMirror, twoClusters } from './helpers.js';

test('a consumer group fails over from A to B at the translated offset: none skipped, at most the records since the last offset sync re-read', { timeout: 90_000 }, async () => {
  const c = await twoClusters();
  const lagMax = 50;
  let engine: Awaited<ReturnType<typeof startMirror>> | null = null;
  try {
    await createTopic(c, 'a', 'clicks', 2);
    const kafkaA = new Kafka({ brokers: [c.aBootstrap], clientId: 'failover', logLevel: logLevel.NOTHING });
    const producer = kafkaA.producer();
    await producer.connect();
    for (let i = 0; i < 1000; i += 50) await producer.send({ topic: 'clicks', messages: Array.from({ length: 50 }, (_, j) => ({ key: `k${(i + j) % 13}`, value: `v${i + j}` })) });
    await producer.disconnect();
    // A live group on A (kafkajs) reads the topic while it is being mirrored, commits and leaves:
    // the application fails over to B.
    engine = await startMirror(c, { 'sync.group.offsets.enabled': 'true', 'sync.group.offsets.interval.seconds': '1', 'offset.lag.max': String(lagMax) });
    const consumerA = kafkaA.consumer({ groupId: 'readers' });
    await consumerA.connect();
    await consumerA.subscribe({ topic: 'clicks', fromBeginning: true });
    let seen = 0;
    await consumerA.run({ eachMessage: async () => { seen++; } });
    await eventually('the group to read the topic on A', 30_000, () => seen >= 1000);
    await consumerA.disconnect();
    const onA = await committedOffsets(await coordinatorFor(c.aClient, 'readers'), 'readers');
    const upstream = new Map([...onA.values()].filter((o) => o.ref.topic === 'clicks').map((o) => [o.ref.partition, Number(o.offset)]));
    assert.ok(upstream.size > 0);
    // The mirror checkpoints the group and commits its translated offsets on B.
    await eventually('the group\'s offsets on B', 30_000, async () => {
      const onB = await committedOffsets(await coordinatorFor(c.bClient, 'readers'), 'readers').catch(() => new Map());
      return [...upstream.keys()].every((p) => [...onB.values()].some((o) => o.ref.topic === 'A.clicks' && o.ref.partition === p));
    });
    const checkpoints = (await readAll(c.bBootstrap, 'A.checkpoints.internal', 1)).get(0)!.map((r) => decodeCheckpoint(r.key, r.value));
    assert.ok(checkpoints.some((k) => k.group === 'readers' && k.topic === 'A.clicks'), 'Checkpoints in A.checkpoints.internal on B');
    const onB = await committedOffsets(await coordinatorFor(c.bClient, 'readers'), 'readers');
    const source = await readAll(c.aBootstrap, 'clicks', 2);
    const target = await readAll(c.bBootstrap, 'A.clicks', 2);
    for (const [p, up] of upstream) {
      const down = Number([...onB.values()].find((o) => o.ref.topic === 'A.clicks' && o.ref.partition === p)!.offset);
      // The records the group had not read on A: all of them are at or after `down` on B.
      const unread = source.get(p)!.filter((r) => r.offset >= up).map((r) => r.value!.toString());
      const resumed = target.get(p)!.filter((r) => r.offset >= down).map((r) => r.value!.toString());
      for (const v of unread) assert.ok(resumed.includes(v), `clicks-${p}: ${v} (not read on A) is read on B`);
      const reread = resumed.length - unread.length;
      assert.ok(reread >= 0 && reread <= lagMax, `clicks-${p}: ${reread} records read again (at most offset.lag.max = ${lagMax})`);
      console.log(`# clicks-${p}: committed ${up} on A, resumes at ${down} on B, ${reread} re-read`);
    }
    // The same group on B, with kafkajs, starts where the mirror put it (new records arrive, too).
    const more = kafkaA.producer();
    await more.connect();
    await more.send({ topic: 'clicks', messages: [{ partition: 0, value: 'late-0' }, { partition: 1, value: 'late-1' }] });
    await more.disconnect();
    const kafkaB = new Kafka({ brokers: [c.bBootstrap], clientId: 'failover', logLevel: logLevel.NOTHING });
    const consumerB = kafkaB.consumer({ groupId: 'readers' });
    await consumerB.connect();
    await consumerB.subscribe({ topic: 'A.clicks', fromBeginning: true });
    const first = new Map<number, number>();
    await consumerB.run({ eachMessage: async ({ partition, message }) => { if (!first.has(partition)) first.set(partition, Number(message.offset)); } });
    await eventually('the group to read on B', 30_000, () => first.size === upstream.size);
    await consumerB.disconnect();
    for (const [p, offset] of first) {
      const down = Number([...onB.values()].find((o) => o.ref.topic === 'A.clicks' && o.ref.partition === p)!.offset);
      assert.equal(offset, down, `A.clicks-${p}: the group resumed at the translated offset`);
    }
  } finally {
    await engine?.stop();
    await c.close();
  }
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { rangeAssign, uniformAssign, type AssignorMember, type AssignorOutput } from '../../src/coordinator/group/assignors.js';

const flat = (out: AssignorOutput) => [...out].flatMap(([m, a]) => [...a].flatMap(([t, ps]) => ps.map((p) => `${m}:${t}:${p}`)));
const countOf = (out: AssignorOutput, m: string) => [...out.get(m)!.values()].reduce((n, l) => n + l.length, 0);

test('range gives consecutive ranges, extra partitions to the first members, co-partitioned across topics', () => {
  const members: AssignorMember[] = ['c', 'a', 'b'].map((memberId) => ({ memberId, subscribedTopicIds: ['t1', 't2'], currentAssignment: new Map() }));
  const out = rangeAssign({ members, partitionCounts: new Map([['t1', 7], ['t2', 7]]) });
  assert.deepEqual(out.get('a')!.get('t1'), [0, 1, 2]);
  assert.deepEqual(out.get('b')!.get('t1'), [3, 4]);
  assert.deepEqual(out.get('c')!.get('t1'), [5, 6]);
  for (const m of ['a', 'b', 'c']) assert.deepEqual(out.get(m)!.get('t1'), out.get(m)!.get('t2'));
});

test('uniform keeps current owners when a member joins and moves only what balance needs', () => {
  const before = uniformAssign({
    members: [{ memberId: 'a', subscribedTopicIds: ['t'], currentAssignment: new Map() }, { memberId: 'b', subscribedTopicIds: ['t'], currentAssignment: new Map() }],
    partitionCounts: new Map([['t', 6]]),
  });
  const after = uniformAssign({
    members: [
      { memberId: 'a', subscribedTopicIds: ['t'], currentAssignment: before.get('a')! },
      { memberId: 'b', subscribedTopicIds: ['t'], currentAssignment: before.get('b')! },
      { memberId: 'c', subscribedTopicIds: ['t'], currentAssignment: new Map() },
    ],
    partitionCounts: new Map([['t', 6]]),
  });
  assert.deepEqual(['a', 'b', 'c'].map((m) => countOf(after, m)), [2, 2, 2]);
  const kept = flat(after).filter((x) => flat(before).includes(x));
  assert.equal(kept.length, 4, 'only the two partitions the new member needs moved');
});

test('property: both assignors give every partition of a subscribed topic to exactly one subscriber', () => {
  const arb = fc.record({
    members: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
    topics: fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 1, maxLength: 4 }),
    subs: fc.array(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), { minLength: 6, maxLength: 6 }),
    owned: fc.array(fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 5 }), { minLength: 6, maxLength: 6 }),
  });
  fc.assert(fc.property(arb, ({ members, topics, subs, owned }) => {
    const partitionCounts = new Map(topics.map((n, i) => [`t${i}`, n]));
    const input = {
      partitionCounts,
      members: members.map((memberId, i) => ({
        memberId,
        subscribedTopicIds: topics.map((_, t) => `t${t}`).filter((_, t) => subs[i]![t]),
        currentAssignment: new Map(owned[i]!.length ? [['t0', [...new Set(owned[i])]]] : []) as Map<string, number[]>,
      })),
    };
    for (const assign of [rangeAssign, uniformAssign]) {
      const out = assign(input);
      const seen = new Set<string>();
      for (const [m, a] of out) {
        const member = input.members.find((x) => x.memberId === m)!;
        for (const [t, ps] of a) {
          assert.ok(member.subscribedTopicIds.includes(t), `${m} got unsubscribed ${t}`);
          for (const p of ps) {
            assert.ok(p < partitionCounts.get(t)!);
            assert.ok(!seen.has(`${t}:${p}`), `${t}:${p} assigned twice`);
            seen.add(`${t}:${p}`);
          }
        }
      }
      for (const [t, n] of partitionCounts) {
        if (!input.members.some((m) => m.subscribedTopicIds.includes(t))) continue;
        for (let p = 0; p < n; p++) assert.ok(seen.has(`${t}:${p}`), `${t}:${p} unassigned by ${assign.name}`);
      }
    }
    // With identical subscriptions, uniform is balanced to within one partition.
    const same = { ...input, members: input.members.map((m) => ({ ...m, subscribedTopicIds: [...partitionCounts.keys()] })) };
    const counts = [...uniformAssign(same).keys()].map((m) => countOf(uniformAssign(same), m));
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 1, `unbalanced ${counts}`);
  }));
});

// Offset syncs and translation: a consumer group moved with a translated offset never skips a
// record, and re-reads at most the records mirrored since the sync it was translated with.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OffsetSyncDecider, OffsetSyncStore } from '../../src/mirror/index.js';

test('the decider syncs the first record, a gap upstream, and every offset.lag.max records', () => {
  const d = new OffsetSyncDecider(3);
  const out = [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [7, 5], [8, 6]].map(([u, v]) => d.mirrored(u!, v!));
  // Syncs at 0 (first), at 4 (a translation from 0 would land 1, three behind), at 7 (a gap upstream).
  assert.deepEqual(out, [true, false, false, false, true, true, false]);
});

test('translation: at a sync exactly, one past it after it, -1 before every sync, null before loading', () => {
  const s = new OffsetSyncStore();
  s.add('t-0', { upstream: 100, downstream: 10 });
  assert.equal(s.translate('t-0', 100), null, 'not loaded yet');
  s.markLoaded();
  s.add('t-0', { upstream: 200, downstream: 110 });
  assert.equal(s.translate('t-0', 200), 110);
  assert.equal(s.translate('t-0', 250), 111);
  assert.equal(s.translate('t-0', 150), 11, 'an older sync still translates');
  assert.equal(s.translate('t-0', 50), -1);
  assert.equal(s.translate('t-1', 5), null);
});

test('property: a group translated through the syncs skips nothing; at or past the newest sync it re-reads at most what followed that sync', () => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 400 }),
    fc.integer({ min: 0, max: 50 }),
    fc.nat(),
    (gaps, lagMax, pick) => {
      // Upstream offsets with gaps (compaction, markers); the target holds them densely from 0.
      const upstream: number[] = [];
      let u = 0;
      for (const g of gaps) { u += g; upstream.push(u); }
      const decider = new OffsetSyncDecider(lagMax);
      const store = new OffsetSyncStore();
      store.markLoaded();
      const syncs: { upstream: number; downstream: number }[] = [];
      upstream.forEach((up, down) => {
        if (decider.mirrored(up, down)) { store.add('t-0', { upstream: up, downstream: down }); syncs.push({ upstream: up, downstream: down }); }
      });
      // A group at some upstream offset g (possibly between records, possibly at the end).
      const g = upstream[0]! + (pick % (upstream[upstream.length - 1]! - upstream[0]! + 2));
      const t = store.translate('t-0', g)!;
      // The first record at or after g is at this downstream offset: resuming at t must not pass it.
      const firstNeeded = upstream.findIndex((x) => x >= g);
      const needed = firstNeeded < 0 ? upstream.length : firstNeeded;
      assert.ok(t <= needed, `translated ${t} skips downstream ${needed} (group at ${g})`);
      // A group at or past the newest sync (a live consumer that failed over) re-reads at most what
      // was mirrored since that sync; further back the store keeps exponentially spaced syncs only.
      const newest = syncs[syncs.length - 1]!;
      if (g >= newest.upstream) assert.ok(t >= newest.downstream, `translated ${t} is before the newest sync ${newest.downstream} (group at ${g})`);
      else assert.ok(t >= 0, 'an older position still translates');
    },
  ), { numRuns: 300 });
});

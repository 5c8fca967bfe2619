// ControllerSeat: when a node's controller is active (the rule the server's driver and the
// controller-on-Raft simulation share).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ControllerSeat, QuorumController } from '../../src/controller/index.js';
import { MetadataImage } from '../../src/metadata/index.js';
import { Prng } from '../../src/util/index.js';
import { CLUSTER_ID } from './driver.js';

const seat = () => new ControllerSeat((image) => new QuorumController({ clusterId: CLUSTER_ID, prng: new Prng(1), image }));
const leader = (epoch: number, logEndOffset: number, appliedOffset: number) => ({ isLeader: true, epoch, leaderId: 1, logEndOffset, appliedOffset });

test('the Raft leader becomes the active controller only once its log up to its LeaderChange entry is applied, and bootstraps an empty log', () => {
  const s = seat();
  assert.equal(s.check(leader(1, 1, 0), MetadataImage.EMPTY, 0).active, null, 'the epoch start is not committed yet');
  const change = s.check(leader(1, 1, 1), MetadataImage.EMPTY, 0);
  assert.equal(change.activated, true);
  assert.equal(change.active!.epoch, 1);
  assert.equal(change.active!.controller.nextWriteOffset, 1, 'writes go after the LeaderChange entry');
  assert.ok(change.bootstrap.length > 0, 'a new cluster\'s log opens with its feature levels');
  assert.equal(s.check(leader(1, 1, 1), MetadataImage.EMPTY, 0).activated, false, 'no second activation in the same epoch');
});

test('leadership lost or moved to a new epoch ends the activation; a new epoch activates afresh', () => {
  const s = seat();
  const first = s.check(leader(1, 1, 1), MetadataImage.EMPTY, 0).active!;
  const lost = s.check({ isLeader: false, epoch: 2, leaderId: 2, logEndOffset: 5, appliedOffset: 5 }, MetadataImage.EMPTY, 0);
  assert.equal(lost.resigned, first);
  assert.equal(lost.active, null);
  assert.equal(first.controller.isActive, false);
  const again = s.check(leader(3, 9, 9), MetadataImage.EMPTY, 0);
  assert.equal(again.activated, true);
  assert.equal(again.active!.epoch, 3);
});

test('an append that did not land where its records were replayed ends the activation', () => {
  const s = seat();
  const change = s.check(leader(1, 1, 1), MetadataImage.EMPTY, 0);
  const a = change.active!;
  const at = s.stage(a, change.bootstrap);
  assert.equal(at, 1);
  assert.equal(s.landed(a, at, { baseOffset: 1, epoch: 1 }), true);
  const next = s.stage(a, change.bootstrap.slice(0, 1));
  assert.equal(s.landed(a, next, { baseOffset: next + 1, epoch: 1 }), false);
  assert.equal(s.active, null);
});

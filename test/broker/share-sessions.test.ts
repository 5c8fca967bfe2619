import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShareSessionCache } from '../../src/broker/share-sessions.js';
import { ErrorCode } from '../../src/protocol/index.js';
import { limits } from '../../src/util/index.js';

const p = (partition: number, topicId = 'T') => ({ topicId, partition });
const partitionsOf = (c: ShareSessionCache, g: string, m: string) => {
  const o = c.open(g, m, -1, [], [], 0);
  return o.session ? [...o.session.partitions.values()].map((x) => x.partition).sort() : null;
};

test('epoch 0 opens a session, each answer moves it to the next epoch, a stale or skipped epoch is INVALID_SHARE_SESSION_EPOCH', () => {
  const c = new ShareSessionCache(10);
  const opened = c.open('g', 'm', 0, [p(0), p(1)], [], 0);
  assert.equal(opened.errorCode, 0);
  c.advance(opened.session!);
  assert.equal(c.open('g', 'm', 2, [], [], 0).errorCode, ErrorCode.INVALID_SHARE_SESSION_EPOCH);
  assert.equal(c.open('g', 'm', 0 + 1, [], [], 0).errorCode, 0);
  assert.equal(c.open('g', 'other', 1, [], [], 0).errorCode, ErrorCode.SHARE_SESSION_NOT_FOUND);
});

test('an incremental request adds and forgets partitions; epoch 0 with forgotten partitions is INVALID_REQUEST', () => {
  const c = new ShareSessionCache(10);
  c.advance(c.open('g', 'm', 0, [p(0), p(1)], [], 0).session!);
  const next = c.open('g', 'm', 1, [p(2)], [p(0)], 0);
  assert.equal(next.errorCode, 0);
  assert.deepEqual(partitionsOf(c, 'g', 'm'), [1, 2]);
  assert.equal(c.open('g', 'n', 0, [p(0)], [p(1)], 0).errorCode, ErrorCode.INVALID_REQUEST);
});

test('a new epoch-0 session replaces the old one and hands back the partitions it dropped; close forgets it', () => {
  const c = new ShareSessionCache(10);
  c.open('g', 'm', 0, [p(0), p(1)], [], 0);
  const again = c.open('g', 'm', 0, [p(1)], [], 0);
  assert.deepEqual(again.replaced, [p(0)]);
  assert.deepEqual(c.close('g', 'm'), [p(1)]);
  assert.equal(c.open('g', 'm', 1, [], [], 0).errorCode, ErrorCode.SHARE_SESSION_NOT_FOUND);
});

test('past group.share.max.share.sessions a new session is SHARE_SESSION_LIMIT_REACHED unless an idle one can go', () => {
  const c = new ShareSessionCache(2);
  c.open('g', 'a', 0, [p(0)], [], 0);
  c.open('g', 'b', 0, [p(0)], [], 1000);
  assert.equal(c.open('g', 'c', 0, [p(0)], [], 2000).errorCode, ErrorCode.SHARE_SESSION_LIMIT_REACHED);
  assert.equal(c.open('g', 'c', 0, [p(0)], [], limits.shareSessionIdleMs).errorCode, 0, 'a, idle since 0, is evicted');
  assert.equal(c.size, 2);
  assert.equal(c.open('g', 'a', 1, [], [], limits.shareSessionIdleMs).errorCode, ErrorCode.SHARE_SESSION_NOT_FOUND);
});

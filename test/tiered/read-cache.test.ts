// The read cache never holds more bytes than its bound, evicts the least recently used first, and
// lets concurrent misses for one key share one load.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ReadCache } from '../../src/tiered/index.js';

describe('ReadCache', () => {
  it('never exceeds its bound, whatever is put and read', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 1000 }),
      fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 400 })), { maxLength: 200 }),
      (bound, ops) => {
        const cache = new ReadCache(bound);
        for (const [isPut, k, size] of ops) {
          if (isPut) cache.set(`k${k}`, Buffer.alloc(size));
          else cache.get(`k${k}`);
          assert.ok(cache.stats().bytes <= bound);
        }
      },
    ));
  });

  it('evicts the least recently used entry first', () => {
    const cache = new ReadCache(30);
    cache.set('a', Buffer.alloc(10));
    cache.set('b', Buffer.alloc(10));
    cache.set('c', Buffer.alloc(10));
    cache.get('a');
    cache.set('d', Buffer.alloc(10));
    assert.equal(cache.get('b'), undefined);
    assert.ok(cache.get('a') !== undefined && cache.get('c') !== undefined && cache.get('d') !== undefined);
    cache.set('huge', Buffer.alloc(31));
    assert.equal(cache.get('huge'), undefined, 'an entry over the bound is not kept');
    assert.equal(cache.stats().entries, 3);
  });

  it('concurrent misses for one key make one load', async () => {
    const cache = new ReadCache(100);
    let loads = 0;
    const load = async (): Promise<Buffer> => { loads++; await new Promise((r) => setTimeout(r, 5)); return Buffer.from('x'); };
    const got = await Promise.all([cache.getOrLoad('k', load), cache.getOrLoad('k', load), cache.getOrLoad('k', load)]);
    assert.equal(loads, 1);
    assert.ok(got.every((b) => b.toString() === 'x'));
    await cache.getOrLoad('k', load);
    assert.equal(loads, 1);
  });

  it('a failed load is not cached and the next read tries again', async () => {
    const cache = new ReadCache(100);
    await assert.rejects(cache.getOrLoad('k', () => Promise.reject(new Error('store down'))));
    assert.equal((await cache.getOrLoad('k', async () => Buffer.from('y'))).toString(), 'y');
  });
});

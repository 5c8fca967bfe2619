// The S3 backend against a real S3 API server (s3rver) in its own process on loopback: the storage
// contract with a log over the multipart threshold and ranged reads, an unknown key refused, and a
// frozen server (SIGSTOP): the api call timeouts fail the call, close() ends the calls in flight.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ChunkedStorageManager, ReadCache, RemoteStorageError, S3ObjectStore, S3_PART_BYTES_MIN } from '../../src/tiered/index.js';
import { remoteStorageContract, TOPIC_ID } from './storage-contract.js';
import { ACCESS_KEY, SECRET, BUCKET, startS3Server, stopS3Server, type RunningServer } from './s3-helpers.js';
import { within } from '../broker/process-helpers.js';

const CHUNK = 1024 * 1024;

function s3Store(port: number, credentials = { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET }, timeouts: { apiCallTimeoutMs?: number; apiCallAttemptTimeoutMs?: number } = {}): S3ObjectStore {
  return new S3ObjectStore({
    bucket: BUCKET, region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, pathStyle: true, credentials,
    multipartThresholdBytes: S3_PART_BYTES_MIN, partBytes: S3_PART_BYTES_MIN, ...timeouts,
  });
}

let server: RunningServer | undefined;
const ready = (async () => { server = await startS3Server(); return server; })();

remoteStorageContract('S3 (s3rver on loopback, multipart over 5 MiB)', {
  // Over the 5 MiB threshold: two parts, the second short.
  logBytes: S3_PART_BYTES_MIN + 1_234_567, chunkBytes: CHUNK, partitionPrefix: `tiered/orders-0-${TOPIC_ID}/`,
  open: async () => {
    const s = await ready;
    const store = s3Store(s.port);
    const rsm = new ChunkedStorageManager({ store, keyPrefix: 'tiered/', chunkBytes: CHUNK, chunkCache: new ReadCache(4 * CHUNK) });
    return { rsm, list: (p) => store.list(p), close: () => rsm.close() };
  },
});

describe('S3ObjectStore', () => {
  before(async () => { await ready; });
  after(async () => { if (server !== undefined) await stopS3Server(server); });

  it('an unknown access key is refused, and not as retriable', async () => {
    const store = s3Store(server!.port, { accessKeyId: 'NOSUCHKEY', secretAccessKey: 'x' });
    try {
      const err = await store.put('k', { bytes: Buffer.from('x') }).then(() => undefined, (e: unknown) => e);
      assert.ok(err instanceof RemoteStorageError, String(err));
      assert.match(err.message, /InvalidAccessKeyId/);
      assert.equal(err.retriable, false);
    } finally {
      await store.close();
    }
  });

  it('a store that accepts connections and never answers (SIGSTOP): calls fail, retriable, after the api call timeouts; close() ends the calls in flight', async () => {
    const frozen = await startS3Server();
    const stores = [s3Store(frozen.port, undefined, { apiCallTimeoutMs: 1000 }), s3Store(frozen.port, undefined, { apiCallAttemptTimeoutMs: 500 }), s3Store(frozen.port)];
    try {
      for (const store of stores) await store.put('before', { bytes: Buffer.from('x') });
      frozen.child.kill('SIGSTOP');
      for (const store of stores.slice(0, 2)) {
        const err = await store.put('k', { bytes: Buffer.alloc(100_000) }).then(() => undefined, (e: unknown) => e);
        assert.ok(err instanceof RemoteStorageError && err.retriable, String(err));
      }
      // No timeout set: the call waits (up to the 30 s socket timeout) until the store is closed.
      let settled = false;
      const pending = stores[2]!.getRange('before', 0, 1).finally(() => { settled = true; });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(settled, false, 'still waiting on the frozen store');
      await stores[2]!.close();
      await assert.rejects(within(10_000, 'the call in flight ended by close()', pending), RemoteStorageError);
      await assert.rejects(stores[2]!.getRange('before', 0, 1), /closed/);
    } finally {
      for (const store of stores) await store.close();
      await stopS3Server(frozen);
    }
  });

  it('a part size under S3\'s 5 MiB minimum is refused up front', () => {
    assert.throws(() => new S3ObjectStore({ bucket: BUCKET, region: 'us-east-1', multipartThresholdBytes: 1, partBytes: 1024 }), RemoteStorageError);
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  Reader, Writer, ProtocolError, encodeToBuffer, decodeFromBuffer, FrameSplitter, decodeRequestHeader,
  encodeRequestFrame, encodeResponseFrame, decodeRequest, decodeResponse, ErrorCode, errorName, isRetriable,
} from '../../src/protocol/index.js';

const written = (f: (w: Writer) => void): Buffer => { const w = new Writer(); f(w); return w.toBuffer(); };

test('unsigned varints match the protobuf encoding and reject overlong input', () => {
  assert.deepEqual([...written((w) => w.unsignedVarint(0))], [0]);
  assert.deepEqual([...written((w) => w.unsignedVarint(127))], [0x7f]);
  assert.deepEqual([...written((w) => w.unsignedVarint(128))], [0x80, 0x01]);
  assert.deepEqual([...written((w) => w.unsignedVarint(300))], [0xac, 0x02]);
  assert.deepEqual([...written((w) => w.unsignedVarint(0xffffffff))], [0xff, 0xff, 0xff, 0xff, 0x0f]);
  assert.throws(() => new Reader(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01])).unsignedVarint(), ProtocolError);
  assert.throws(() => new Reader(Buffer.from([0x80])).unsignedVarint(), ProtocolError);
});

test('zigzag varints and varlongs round-trip over their whole range', () => {
  assert.deepEqual([...written((w) => w.varint(-1))], [0x01]);
  assert.deepEqual([...written((w) => w.varint(1))], [0x02]);
  assert.deepEqual([...written((w) => w.varint(-64))], [0x7f]);
  fc.assert(fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), (v) => {
    assert.equal(new Reader(written((w) => w.varint(v))).varint(), v);
  }));
  fc.assert(fc.property(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), (v) => {
    assert.equal(new Reader(written((w) => w.varlong(v))).varlong(), v);
  }));
});

test('classic and compact strings: lengths, null, and a length larger than the frame', () => {
  // MetadataRequest v0 is classic (int16 length), v9 is compact (varint length + 1).
  const classic = encodeToBuffer('FindCoordinatorRequest', 0, { key: 'g1' });
  assert.deepEqual([...classic], [0, 2, 0x67, 0x31]);
  const compact = encodeToBuffer('FindCoordinatorRequest', 4, { keyType: 0, coordinatorKeys: ['g1'] });
  assert.deepEqual([...compact], [0, 2, 3, 0x67, 0x31, 0]);
  assert.throws(() => decodeFromBuffer('FindCoordinatorRequest', 0, Buffer.from([0x7f, 0xff, 0x41])), ProtocolError);
  assert.throws(() => decodeFromBuffer('FindCoordinatorRequest', 0, Buffer.from([0xff, 0xfe])), ProtocolError);
});

test('a huge array length is refused before anything is allocated', () => {
  // MetadataRequest v1: topics is an int32-length array of structs.
  const frame = Buffer.from([0x7f, 0xff, 0xff, 0xff, 0, 1]);
  const before = process.memoryUsage().heapUsed;
  assert.throws(() => decodeFromBuffer('MetadataRequest', 1, frame), ProtocolError);
  assert.ok(process.memoryUsage().heapUsed - before < 16 * 1024 * 1024);
  // null topics in v1 means "all topics".
  assert.deepEqual(decodeFromBuffer('MetadataRequest', 1, Buffer.from([0xff, 0xff, 0xff, 0xff])).topics, null);
  assert.throws(() => decodeFromBuffer('MetadataRequest', 0, Buffer.from([0xff, 0xff, 0xff, 0xff])), ProtocolError);
});

test('unknown tagged fields are preserved through a re-encode; known ones decode', () => {
  // ApiVersionsResponse v3 has tagged fields (SupportedFeatures tag 0, ...). Append tag 9 by hand.
  const base = encodeToBuffer('ApiVersionsResponse', 3, { errorCode: 0, apiKeys: [], throttleTimeMs: 0 });
  assert.equal(base[base.length - 1], 0);
  const withUnknown = Buffer.concat([base.subarray(0, base.length - 1), Buffer.from([1, 9, 2, 0xab, 0xcd])]);
  const decoded = decodeFromBuffer<Record<string, unknown>>('ApiVersionsResponse', 3, withUnknown);
  assert.deepEqual(decoded.unknownTaggedFields, [{ tag: 9, data: Buffer.from([0xab, 0xcd]) }]);
  assert.ok(encodeToBuffer('ApiVersionsResponse', 3, decoded).equals(withUnknown));
  const withKnown = encodeToBuffer('ApiVersionsResponse', 3, { errorCode: 0, apiKeys: [], throttleTimeMs: 0, finalizedFeaturesEpoch: 7n });
  assert.equal(decodeFromBuffer<{ finalizedFeaturesEpoch: bigint }>('ApiVersionsResponse', 3, withKnown).finalizedFeaturesEpoch, 7n);
  // Tags out of order, or a size past the end, are protocol errors.
  const disordered = Buffer.concat([base.subarray(0, base.length - 1), Buffer.from([2, 9, 0, 8, 0])]);
  assert.throws(() => decodeFromBuffer('ApiVersionsResponse', 3, disordered), ProtocolError);
  const overrun = Buffer.concat([base.subarray(0, base.length - 1), Buffer.from([1, 9, 100, 0])]);
  assert.throws(() => decodeFromBuffer('ApiVersionsResponse', 3, overrun), ProtocolError);
});

test('a field a version does not have reads its default: a null default is null, not the string "null"', () => {
  // Produce v0-2 have no transactionalId; a string "null" there made every legacy produce transactional.
  for (const version of [0, 1, 2]) {
    const produce = decodeFromBuffer<{ transactionalId: string | null }>('ProduceRequest', version,
      encodeToBuffer('ProduceRequest', version, { acks: 1, timeoutMs: 1000, topicData: [] }));
    assert.equal(produce.transactionalId, null, `Produce v${version}`);
  }
  const join = decodeFromBuffer<{ groupInstanceId: string | null }>('JoinGroupRequest', 4,
    encodeToBuffer('JoinGroupRequest', 4, { groupId: 'g', sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: [] }));
  assert.equal(join.groupInstanceId, null, 'JoinGroup v4');
  // Responses too: Metadata v0-1 carry no cluster id.
  assert.equal(decodeFromBuffer<{ clusterId: string | null }>('MetadataResponse', 1,
    encodeToBuffer('MetadataResponse', 1, { brokers: [], controllerId: -1, topics: [] })).clusterId, null, 'Metadata v1');
});

test('records fields are slices of the frame, not copies', () => {
  const batch = Buffer.alloc(100, 7);
  const body = { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records: batch }] }] };
  const frame = Buffer.concat(encodeRequestFrame(0, 9, 5, 'c', body));
  const { header, body: decoded } = decodeRequest(frame.subarray(4));
  assert.equal(header.correlationId, 5);
  const records = (decoded as any).topicData[0].partitionData[0].records as Buffer;
  assert.ok(records.equals(batch));
  assert.equal(records.buffer, frame.buffer, 'records must share the frame\'s memory');
});

test('request header versions: v1 for classic, v2 with tagged fields for flexible; clientId stays classic', () => {
  const v1 = Buffer.concat(encodeRequestFrame(3, 1, 77, 'abc', { topics: null })).subarray(4);
  assert.deepEqual([...v1.subarray(0, 13)], [0, 3, 0, 1, 0, 0, 0, 77, 0, 3, 0x61, 0x62, 0x63]);
  const v2 = Buffer.concat(encodeRequestFrame(3, 12, 78, 'abc', { topics: null, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false })).subarray(4);
  assert.deepEqual([...v2.subarray(8, 14)], [0, 3, 0x61, 0x62, 0x63, 0], 'int16 client id then an empty tag section');
  const h = decodeRequestHeader(v2);
  assert.deepEqual(h.header, { requestApiKey: 3, requestApiVersion: 12, correlationId: 78, clientId: 'abc' });
  assert.equal(h.known, true);
  const unknown = decodeRequestHeader(Buffer.from([0, 18, 0, 99, 0, 0, 0, 1, 0xff, 0xff]));
  assert.equal(unknown.known, false);
  assert.equal(unknown.header.requestApiVersion, 99);
});

test('ApiVersions responses use header v0 even at flexible versions', () => {
  const frame = Buffer.concat(encodeResponseFrame(18, 3, 9, { errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 3, maxVersion: 11 }], throttleTimeMs: 0 }));
  assert.equal(frame.readInt32BE(0), frame.length - 4);
  assert.equal(frame.readInt32BE(4), 9);
  assert.equal(frame[8], 0, 'error code high byte follows the correlation id directly');
  const decoded = decodeResponse(18, 3, frame.subarray(4));
  assert.equal(decoded.correlationId, 9);
  const meta = Buffer.concat(encodeResponseFrame(3, 12, 9, { brokers: [], topics: [], clusterId: null, controllerId: 1 }));
  assert.equal(meta[8], 0, 'flexible response header has an empty tag section');
});

test('frame splitter: frames across chunk boundaries, many per chunk, and hostile sizes', () => {
  const frames = [Buffer.from('a'), Buffer.alloc(0), Buffer.alloc(70000, 1), Buffer.from('xyz')];
  const stream = Buffer.concat(frames.flatMap((f) => { const s = Buffer.alloc(4); s.writeInt32BE(f.length); return [s, f]; }));
  fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: stream.length }), { maxLength: 6 }), (cuts) => {
    const points = [...new Set(cuts)].sort((a, b) => a - b);
    const splitter = new FrameSplitter(1 << 20);
    const out: Buffer[] = [];
    let prev = 0;
    for (const p of [...points, stream.length]) { out.push(...splitter.push(stream.subarray(prev, p))); prev = p; }
    assert.deepEqual(out.map((b) => b.toString('hex')), frames.map((b) => b.toString('hex')));
    assert.equal(splitter.bufferedBytes, 0);
  }));
  assert.throws(() => new FrameSplitter(100).push(Buffer.from([0, 0, 0, 101])), ProtocolError);
  assert.throws(() => new FrameSplitter(100).push(Buffer.from([0xff, 0xff, 0xff, 0xff])), ProtocolError);
  // A size split over chunks is checked as soon as its four bytes are in.
  const split = new FrameSplitter(100);
  assert.deepEqual(split.push(Buffer.from([0, 0])), []);
  assert.throws(() => split.push(Buffer.from([0, 101, 1, 2])), ProtocolError);
  // A large frame in many small chunks comes out whole, once.
  const big = Buffer.alloc(4 + 300_000, 7);
  big.writeInt32BE(300_000, 0);
  const chunked = new FrameSplitter(1 << 20);
  const got: Buffer[] = [];
  for (let i = 0; i < big.length; i += 1000) got.push(...chunked.push(big.subarray(i, i + 1000)));
  assert.equal(got.length, 1);
  assert.ok(got[0]!.equals(big.subarray(4)));
});

test('property: frames come out the same whether pushed in chunks, over the preallocation limit, or read into readBuffer()', () => {
  fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 70_000 }), { minLength: 1, maxLength: 6 }),
    fc.array(fc.integer({ min: 1, max: 90_000 }), { minLength: 1, maxLength: 20 }),
    fc.integer({ min: 0, max: 100_000 }),
    (sizes, reads, preallocateMax) => {
      const frames = sizes.map((n, i) => Buffer.alloc(n, i + 1));
      const stream = Buffer.concat(frames.flatMap((f) => { const h = Buffer.alloc(4); h.writeInt32BE(f.length); return [h, f]; }));
      const expected = frames.map((f) => f.toString('hex'));
      const viaReads = new FrameSplitter(1 << 20, preallocateMax);
      const b: Buffer[] = [];
      let pos = 0;
      for (let i = 0; pos < stream.length; i++) {
        const want = reads[i % reads.length]!;
        // The socket reads at most the buffer it was given.
        const target = viaReads.readBuffer();
        const n = Math.min(target.length, want, stream.length - pos);
        stream.copy(target, 0, pos, pos + n);
        b.push(...viaReads.pushRead(n));
        pos += n;
      }
      assert.deepEqual(b.map((f) => f.toString('hex')), expected, 'readBuffer/pushRead');
      assert.equal(viaReads.bufferedBytes, 0);
      return true;
    }), { numRuns: 60 });
  // push() on its own, with cuts independent of the reads above.
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 5 }), fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 0, max: 50_000 }), (sizes, cut, preallocateMax) => {
    const frames = sizes.map((n, i) => Buffer.alloc(n, i + 7));
    const stream = Buffer.concat(frames.flatMap((f) => { const h = Buffer.alloc(4); h.writeInt32BE(f.length); return [h, f]; }));
    const splitter = new FrameSplitter(1 << 20, preallocateMax);
    const out: Buffer[] = [];
    for (let p = 0; p < stream.length; p += cut) out.push(...splitter.push(stream.subarray(p, p + cut)));
    assert.deepEqual(out.map((f) => f.toString('hex')), frames.map((f) => f.toString('hex')));
    assert.equal(splitter.bufferedBytes, 0);
  }), { numRuns: 100 });
});

test('frames completed inside the reused read buffer are copied out before the next read overwrites it', () => {
  const splitter = new FrameSplitter(1 << 20, 1 << 20);
  const frameOf = (n: number, fill: number) => { const f = Buffer.alloc(4 + n, fill); f.writeInt32BE(n, 0); return f; };
  const got: Buffer[] = [];
  for (const [n, fill] of [[10, 1], [20, 2], [30, 3]] as const) {
    const target = splitter.readBuffer();
    const bytes = frameOf(n, fill);
    bytes.copy(target);
    got.push(...splitter.pushRead(bytes.length));
    target.fill(0xee); // the socket's next read lands here
  }
  assert.deepEqual(got.map((f) => [f.length, f[0]]), [[10, 1], [20, 2], [30, 3]]);
});

test('a frame spanning reads gets its buffer from the allocator given to the splitter', () => {
  const sizes: number[] = [];
  const splitter = new FrameSplitter(1 << 20, 1 << 20, (n) => { sizes.push(n); return Buffer.allocUnsafe(n); });
  const frame = Buffer.alloc(4 + 100_000, 7);
  frame.writeInt32BE(100_000, 0);
  const out: Buffer[] = [];
  for (let pos = 0; pos < frame.length;) {
    const target = splitter.readBuffer();
    const n = Math.min(target.length, frame.length - pos);
    frame.copy(target, 0, pos, pos + n);
    out.push(...splitter.pushRead(n));
    pos += n;
  }
  assert.deepEqual(sizes, [100_000]);
  assert.equal(out.length, 1);
  assert.ok(out[0]!.equals(frame.subarray(4)));
});

test('error codes come from the generated table with their retriable flags', () => {
  assert.equal(ErrorCode.NONE, 0);
  assert.equal(ErrorCode.UNSUPPORTED_VERSION, 35);
  assert.equal(errorName(6), 'NOT_LEADER_OR_FOLLOWER');
  assert.equal(isRetriable(ErrorCode.NOT_LEADER_OR_FOLLOWER), true);
  assert.equal(isRetriable(ErrorCode.TOPIC_AUTHORIZATION_FAILED), false);
});

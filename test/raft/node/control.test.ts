import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ControlError, ControlReader, encodeProposeFrame, parseProposeAck, proposeAckLine, type ControlInput,
} from '../../../src/raft/node/control.js';

const dec = new TextDecoder();

function show(inputs: readonly ControlInput[]): unknown[] {
  return inputs.map((i) => (i.kind === 'line' ? i.line : { id: i.id, values: i.values.map((v) => dec.decode(v)) }));
}

const stream = Buffer.concat([
  Buffer.from('{"op":"status","id":1}\n'),
  encodeProposeFrame(2, ['a', 'héllo\nworld', '']),
  Buffer.from('{"op":"latency","id":3}\r\n'),
  encodeProposeFrame(4294967295, ['x'.repeat(300)]),
]);
const expected = [
  '{"op":"status","id":1}',
  { id: 2, values: ['a', 'héllo\nworld', ''] },
  '{"op":"latency","id":3}',
  { id: 4294967295, values: ['x'.repeat(300)] },
];

test('JSON lines and propose frames come out the same whatever the chunking', () => {
  assert.deepEqual(show(new ControlReader().push(stream)), expected);
  // Every split point, and byte by byte.
  for (let cut = 1; cut < stream.length; cut++) {
    const r = new ControlReader();
    assert.deepEqual(show([...r.push(stream.subarray(0, cut)), ...r.push(stream.subarray(cut))]), expected, `cut at ${cut}`);
  }
  const r = new ControlReader();
  const got: ControlInput[] = [];
  for (let i = 0; i < stream.length; i++) got.push(...r.push(stream.subarray(i, i + 1)));
  assert.deepEqual(show(got), expected);
});

test('a proposal\'s values do not share the read buffer (the core keeps them)', () => {
  const chunk = Buffer.from(encodeProposeFrame(1, ['abc', 'de']));
  const [p] = new ControlReader().push(chunk);
  assert.ok(p !== undefined && p.kind === 'propose');
  chunk.fill(0);
  assert.deepEqual(p.values.map((v) => dec.decode(v)), ['abc', 'de']);
  assert.notEqual(p.values[0]!.buffer, chunk.buffer);
});

test('malformed propose frames are refused, not read past', () => {
  const frame = encodeProposeFrame(1, ['abc', 'de']);
  const longer = Buffer.from(frame);
  longer.writeUInt32BE(4, 13); // first value claims 4 bytes: 4 + 2 > 5
  assert.throws(() => new ControlReader().push(longer), ControlError);
  const shorter = Buffer.from(frame);
  shorter.writeUInt32BE(1, 13); // 1 + 2 < 5: bytes left over
  assert.throws(() => new ControlReader().push(shorter), ControlError);
  const none = Buffer.from(frame);
  none.writeUInt32BE(0, 9);
  assert.throws(() => new ControlReader().push(none), ControlError);
  const huge = Buffer.from([0x50, 0xff, 0xff, 0xff, 0xff]);
  assert.throws(() => new ControlReader().push(huge), ControlError);
});

test('acknowledgement lines round-trip; other lines are not acknowledgements', () => {
  const line = proposeAckLine(12, 3, 100, 149);
  assert.equal(line, 'r12 3 100 149\n');
  assert.deepEqual(parseProposeAck(line.trimEnd()), { id: 12, epoch: 3, baseOffset: 100, lastOffset: 149 });
  assert.equal(parseProposeAck('{"id":12}'), undefined);
  assert.equal(parseProposeAck('r12 3 100'), undefined);
  assert.equal(parseProposeAck('r12 3 x 149'), undefined);
});

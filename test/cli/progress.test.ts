// The CLI's progress helper: a bar redrawn in place on a terminal, plain lines at an interval
// otherwise, silent for short work; checked against fake streams and a fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Progress, type ProgressStream } from '../../src/cli/progress.js';

function fakeStream(isTTY: boolean, columns = 100): ProgressStream & { out: string } {
  const s = { isTTY, columns, out: '', write(t: string) { s.out += t; return true; } };
  return s;
}

test('on a terminal: the bar is redrawn in place (carriage return, clear line), throttled, and ended with a newline at 100%', () => {
  const stream = fakeStream(true);
  let now = 0;
  const p = new Progress({ label: 'produce', total: 1000, unit: 'records', stream, nowMs: () => now, redrawMs: 100 });
  now = 100; p.update(250, '5000 records/s');
  now = 150; p.update(300); // within the redraw interval: not drawn
  now = 200; p.update(500);
  p.finish(1000);
  const frames = stream.out.split('\r\x1b[K').slice(1);
  assert.deepEqual(frames, [
    'produce [######------------------]  25% 250/1000 records  5000 records/s',
    'produce [############------------]  50% 500/1000 records',
    'produce [########################] 100% 1000/1000 records\n',
  ]);
});

test('on a terminal: a line wider than the terminal is cut so that \\r redraws it whole', () => {
  const stream = fakeStream(true, 30);
  const p = new Progress({ label: 'consume', total: null, unit: 'records', stream, nowMs: () => 1000, redrawMs: 0 });
  p.update(123456, 'a long detail that would wrap');
  assert.equal(stream.out, '\r\x1b[K' + 'consume 123456 records  a long'.slice(0, 29));
});

test('not a terminal: plain lines at the interval, a last line only when earlier ones were printed', () => {
  const stream = fakeStream(false);
  let now = 0;
  const p = new Progress({ label: 'reassign', total: 4, unit: 'partitions complete', stream, nowMs: () => now, lineIntervalMs: 5000 });
  now = 1000; p.update(0);
  now = 5000; p.update(1);
  now = 7000; p.update(2);
  now = 10_000; p.update(3, 'moving 1');
  p.finish(4);
  p.update(4);
  assert.equal(stream.out, [
    'reassign: 1/4 partitions complete (25%)',
    'reassign: 3/4 partitions complete (75%), moving 1',
    'reassign: 4/4 partitions complete (100%)',
    '',
  ].join('\n'));
  assert.ok(!stream.out.includes('\r'), 'no carriage returns in a log file');

  const quick = fakeStream(false);
  const q = new Progress({ label: 'consume', total: 10, unit: 'records', stream: quick, nowMs: () => 0 });
  q.update(5);
  q.finish(10);
  assert.equal(quick.out, '', 'short work prints nothing');
});

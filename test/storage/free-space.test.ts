// The free-space floor's state machine on the in-memory file system (its capacity is the volume):
// the states a sample gives, the estimate that samples at once when admitted bytes cross the
// floor, refusals below it, resumption once space returns, and an unknown volume refusing nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogDirFreeSpace, MemoryFileSystem, type FileSystem } from '../../src/storage/index.js';

const MiB = 1 << 20;

function setup(capacity: number) {
  const fs = new MemoryFileSystem();
  fs.capacityBytes = capacity;
  fs.mkdirs('/data');
  const lines: string[] = [];
  const space = new LogDirFreeSpace({
    dir: '/data', fs, intervalMs: 1000, thresholds: () => ({ minFreeBytes: 2 * MiB, alertFreeBytes: 4 * MiB }),
    log: (level, m) => lines.push(`${level}: ${m}`),
  });
  const fill = (path: string, bytes: number) => { const h = fs.open(path, { create: true }); h.write(Buffer.alloc(bytes), 0); h.close(); };
  return { fs, space, lines, fill };
}

test('a log directory is ok, low under the alert threshold and full under the floor, where admit refuses; it resumes once space returns', () => {
  const { fs, space, lines, fill } = setup(10 * MiB);
  space.sample(0);
  assert.equal(space.view(false).state, 'ok');
  assert.equal(space.view(false).usableBytes, 10 * MiB);
  fill('/data/a', 7 * MiB);
  space.maybeSample(500);
  assert.equal(space.view(false).state, 'ok', 'not sampled again before the interval');
  space.maybeSample(1000);
  assert.equal(space.view(false).state, 'low');
  assert.match(lines.at(-1)!, /^warn: .*log\.dir\.free\.bytes\.alert\.threshold/);
  assert.equal(space.admit(64 * 1024, 1001), null, 'above the floor: admitted');
  fill('/data/b', 2 * MiB);
  // 1 MiB usable now, but the last sample said 3 MiB: admitted bytes that take the estimate under
  // the floor make it sample at once.
  const refusal = space.admit(1.5 * MiB, 1002);
  assert.match(refusal ?? '', /below log\.dir\.min\.free\.bytes 2097152: produce is refused until space is freed/);
  assert.equal(space.view(false).state, 'full');
  assert.match(lines.at(-1)!, /^error: .*below log\.dir\.min\.free\.bytes/);
  assert.notEqual(space.admit(1, 1003), null, 'refused until a sample sees room');
  assert.equal(space.view(false).producesRefused, 2);
  fs.remove('/data/a');
  space.maybeSample(1500);
  assert.notEqual(space.admit(1, 1500), null, 'the next sample is due at 2002');
  space.maybeSample(2002);
  assert.equal(space.view(false).state, 'ok');
  assert.equal(space.admit(1, 2003), null);
  assert.match(lines.at(-1)!, /^info: .*has room again .*: produce accepted/);
  assert.equal(space.view(true).state, 'offline', 'an offline directory says so whatever its space');
});

test('a fast producer between two samples is stopped near the floor: the estimate counts what was admitted', () => {
  const { space, fill } = setup(10 * MiB);
  space.sample(0);
  let admitted = 0;
  // Writes land on the "disk" as they are admitted, and no periodic sample comes meanwhile.
  for (let i = 0; i < 200; i++) {
    if (space.admit(256 * 1024, 1) !== null) break;
    fill(`/data/s${i}`, 256 * 1024);
    admitted += 256 * 1024;
  }
  // The request that takes the volume under the floor is the last one admitted (a sample sees the
  // volume before its write): at most one request past it.
  assert.ok(admitted >= 8 * MiB && admitted <= 8 * MiB + 256 * 1024, `admitted ${admitted} bytes, up to the floor and one request`);
  assert.equal(space.view(false).state, 'full');
});

test('an unknown volume (no capacity, or statfs failing) refuses nothing; a floor of 0 is no floor', () => {
  const unbounded = setup(Infinity);
  unbounded.space.sample(0);
  assert.deepEqual({ state: unbounded.space.view(false).state, usable: unbounded.space.view(false).usableBytes }, { state: 'ok', usable: -1 });
  assert.equal(unbounded.space.admit(100 * MiB, 1), null);

  const fs = new MemoryFileSystem();
  const broken = Object.create(fs) as FileSystem;
  broken.statfs = () => { throw Object.assign(new Error('ENOSYS: statfs'), { code: 'ENOSYS' }); };
  const lines: string[] = [];
  const space = new LogDirFreeSpace({ dir: '/x', fs: broken, intervalMs: 10, thresholds: () => ({ minFreeBytes: 1, alertFreeBytes: 2 }), log: (l, m) => lines.push(`${l}: ${m}`) });
  space.sample(0);
  space.sample(20);
  assert.equal(space.view(false).state, 'ok');
  assert.equal(space.admit(1, 21), null);
  assert.equal(lines.length, 1, 'the failure is said once');
  assert.match(lines[0]!, /^warn: statfs \/x failed/);

  const noFloor = setup(10 * MiB);
  const off = new LogDirFreeSpace({ dir: '/data', fs: noFloor.fs, intervalMs: 1000, thresholds: () => ({ minFreeBytes: 0, alertFreeBytes: 0 }) });
  noFloor.fill('/data/all', 10 * MiB);
  off.sample(0);
  assert.equal(off.view(false).state, 'ok');
  assert.equal(off.admit(1, 1), null);
});

test('a follower about to fetch counts what the fetch may bring: near the floor it samples at once and pauses, instead of overshooting until the next tick', () => {
  const { space, fill } = setup(10 * MiB);
  space.sample(0);
  assert.equal(space.mayReplicate(MiB, 1), true);
  // Followers' appends (not counted by admit) take the volume under the floor between two ticks.
  fill('/data/replica', 8.5 * MiB);
  // The last sample still says 10 MiB usable: each fetch's 1 MiB counts until the estimate crosses
  // the floor, then a statfs sees 1.5 MiB usable and the follower pauses, well before the tick.
  const answers: boolean[] = [];
  for (let t = 2; t < 12; t++) answers.push(space.mayReplicate(MiB, t));
  assert.equal(answers.at(-1), false, 'paused');
  assert.ok(answers.indexOf(false) <= 7, `paused after ${answers.indexOf(false)} fetches, within the estimate's 8 MiB`);
  assert.equal(space.view(false).state, 'full');
});

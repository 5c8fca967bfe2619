// The one logger: every line carries time, level and component, as text or as JSON lines; lines
// below log.level are dropped; a component's child names itself after its parent's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { componentLogger, createLogger, parseLogLevel, type LoggerOptions } from '../../src/util/index.js';

const T0 = Date.UTC(2026, 11, 5, 3, 20, 0, 123);

function capture(o: LoggerOptions): { errors: string[]; others: string[]; o: LoggerOptions } {
  const errors: string[] = [];
  const others: string[] = [];
  return { errors, others, o: { ...o, nowMs: () => T0, writeError: (l) => errors.push(l), writeOther: (l) => others.push(l) } };
}

test('JSON lines carry ts, level, component and msg; ERROR and WARN go to the error stream', () => {
  const c = capture({ format: 'json', level: 'TRACE' });
  const log = createLogger(c.o);
  const storage = componentLogger(log, 'storage');
  storage.error('disk gone');
  storage.warn('slow fsync');
  storage.info('opened "t-0"');
  storage.debug!('d');
  componentLogger(storage, 'cleaner').trace!('t');
  log.info('no component');
  assert.deepEqual(c.errors.map((l) => JSON.parse(l)), [
    { ts: '2026-12-05T03:20:00.123Z', level: 'ERROR', component: 'storage', msg: 'disk gone' },
    { ts: '2026-12-05T03:20:00.123Z', level: 'WARN', component: 'storage', msg: 'slow fsync' },
  ]);
  assert.deepEqual(c.others.map((l) => JSON.parse(l)), [
    { ts: '2026-12-05T03:20:00.123Z', level: 'INFO', component: 'storage', msg: 'opened "t-0"' },
    { ts: '2026-12-05T03:20:00.123Z', level: 'DEBUG', component: 'storage', msg: 'd' },
    { ts: '2026-12-05T03:20:00.123Z', level: 'TRACE', component: 'storage.cleaner', msg: 't' },
    { ts: '2026-12-05T03:20:00.123Z', level: 'INFO', component: 'logline', msg: 'no component' },
  ]);
});

test('text lines read time, level, [component], message; log.level drops what is less severe', () => {
  const c = capture({ format: 'text', level: 'WARN' });
  const log = componentLogger(createLogger(c.o), 'network');
  log.info('accepted');
  log.debug!('bytes');
  log.warn('closing a connection');
  log.error('bug');
  assert.deepEqual(c.others, []);
  assert.deepEqual(c.errors, ['2026-12-05T03:20:00.123Z WARN  [network] closing a connection', '2026-12-05T03:20:00.123Z ERROR [network] bug']);
});

test('log levels are Kafka\'s names, in any case; anything else is refused', () => {
  assert.equal(parseLogLevel('debug'), 'DEBUG');
  assert.equal(parseLogLevel('TRACE'), 'TRACE');
  assert.throws(() => parseLogLevel('VERBOSE'), /log\.level: expected one of ERROR, WARN, INFO, DEBUG, TRACE/);
});

test('a plain object logger (a test\'s) is used as it is', () => {
  const lines: string[] = [];
  const plain = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), error: (m: string) => lines.push(m) };
  componentLogger(plain, 'storage').info('x');
  assert.deepEqual(lines, ['x']);
});

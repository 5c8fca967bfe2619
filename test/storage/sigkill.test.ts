import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Prng, systemClock } from '../../src/util/index.js';
import { iterateBatches, iterateRecords } from '../../src/records/index.js';
import { LogManager, NodeFileSystem, logConfig } from '../../src/storage/index.js';

const appender = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'appender.js');

/** Runs the appender until `killAfterMs` after its start line, kills it with SIGKILL, returns the last acked offset. */
function runAndKill(dir: string, killAfterMs: number): Promise<{ start: number; lastAcked: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [appender, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    let start = -1;
    let lastAcked = -1;
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const l of lines) {
        const [word, n] = l.split(' ');
        if (word === 'start') { start = Number(n); setTimeout(() => child.kill('SIGKILL'), killAfterMs); }
        if (word === 'acked') lastAcked = Number(n);
      }
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') reject(new Error(`appender exited with ${code ?? signal} before it was killed`));
      else resolve({ start, lastAcked });
    });
  });
}

// 25 kills in `npm test`; LOGLINE_STORAGE_KILLS for more by hand.
const KILLS = Number(process.env.LOGLINE_STORAGE_KILLS ?? 25);

test(`SIGKILL at ${KILLS} random moments: every acknowledged append survives, offsets stay contiguous, indexes agree with a scan`, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'logline-sigkill-'));
  const prng = new Prng(2026);
  try {
    let expectedAtLeast = 0;
    for (let round = 0; round < KILLS; round++) {
      const { start, lastAcked } = await runAndKill(dir, 5 + prng.int(120));
      assert.ok(start >= expectedAtLeast, `round ${round}: the log restarted at ${start}, below ${expectedAtLeast} acknowledged`);
      const manager = new LogManager({ dir, fs: new NodeFileSystem(), clock: systemClock, configFor: () => logConfig({ segmentBytes: 32 * 1024, indexIntervalBytes: 512, segmentIndexBytes: 64 * 1024 }) });
      const log = manager.getOrCreateLog('crash', 0, 'AAECAwQFBgcICQoLDA0ODw');
      assert.ok(log.logEndOffset >= lastAcked + 1, `round ${round}: log end ${log.logEndOffset} lost acked offset ${lastAcked}`);
      let offset = log.logStartOffset;
      while (offset < log.logEndOffset) {
        const bytes = log.read(offset, 1 << 20, log.logEndOffset);
        assert.ok(bytes.length > 0);
        for (const v of iterateBatches(bytes)) {
          assert.ok(v.verifyCrc());
          for (const r of iterateRecords(v, v.bytes().subarray(61))) {
            assert.equal(r.offset, offset, `round ${round}: offsets are contiguous`);
            assert.equal(Number.parseInt(r.value!.toString(), 10), r.offset, `round ${round}: record ${r.offset} holds its own offset`);
            offset++;
          }
        }
      }
      for (const seg of log.segments) {
        for (let e = 0; e < seg.offsetIndex.entries; e++) {
          assert.equal(seg.translateOffset(seg.offsetIndex.offsetAt(e))?.position, seg.offsetIndex.positionAt(e), `round ${round}: index entry ${e} of ${seg.baseOffset}`);
        }
      }
      expectedAtLeast = lastAcked + 1;
      // Every other round the checker shuts down cleanly, so both recovery paths are exercised.
      if (round % 2 === 0) manager.close(); else manager.files.closeAll();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Ports picked for test and bench clusters are reserved across processes: two test files run at
// once, and a killed node binds its port again when it restarts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort, freePorts, reservePort } from '../../src/util/index.js';

const utilIndex = fileURLToPath(new URL('../../src/util/index.js', import.meta.url));

/** A second process that reserves `port` (or, with 0, picks one), prints the port, and lives until it is killed (SIGKILL: no exit handler runs). */
function otherProcess(port: number): Promise<{ port: number; reserved: boolean; exit: () => Promise<void> }> {
  const script = `import { freePort, reservePort } from ${JSON.stringify(utilIndex)};
    const port = ${port} === 0 ? await freePort() : ${port};
    const reserved = ${port} === 0 ? true : await reservePort(port);
    process.stdout.write(JSON.stringify({ port, reserved }) + '\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) resolve({ ...JSON.parse(out) as { port: number; reserved: boolean }, exit: () => { child.kill('SIGKILL'); return exited; } });
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code} before answering`)));
  });
}

test('a port one process picked is not handed to another while the first lives, and is free again once it has exited', async () => {
  const mine = await freePort();
  const other = await otherProcess(mine);
  assert.equal(other.reserved, false, `port ${mine} is held by this process`);
  await other.exit();

  const theirs = await otherProcess(0);
  assert.equal(await reservePort(theirs.port), false, `port ${theirs.port} is held by the living child`);
  await theirs.exit();
  assert.equal(await reservePort(theirs.port), true, 'the killed child\'s lock is stale and taken over');
});

test('one process never gets the same port twice, and a bound port is never handed out', async () => {
  const ports = await freePorts(50);
  assert.equal(new Set(ports).size, 50);
  assert.equal(await reservePort(ports[0]!), false);
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const bound = (s.address() as { port: number }).port;
  try {
    assert.equal(await reservePort(bound), false);
  } finally {
    s.close();
  }
});

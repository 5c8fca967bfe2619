// SCRAM handshakes per second, two ways, JSON on stdout:
// - `server`: the broker's side of a SCRAM-SHA-256 / SCRAM-SHA-512 exchange alone (ScramServer: parse,
//   HMACs, proof check, signature), replaying one client's messages with a fixed server nonce so
//   each round does exactly the broker's work of a real handshake; no sockets.
// - `socket`: whole logins against a broker in this process on a SASL_PLAINTEXT listener:
//   connect, SaslHandshake, two SaslAuthenticate round trips, close, from `--concurrency`
//   connections at once. The client's PBKDF2 (4096 iterations) runs in the same process and
//   dominates, as it would on a client machine; it is the figure a reconnect storm sees.
//   node dist/bench/scram.js [--seconds 3] [--concurrency 8]
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startServer } from '../src/node/index.js';
import { parseBrokerConfig } from '../src/config/index.js';
import { BrokerConnection } from '../src/client/index.js';
import { parseAddScram, scramCredentialRecord, scramKeysFromSaltedPassword, ScramClient, ScramServer, type ScramMechanismName } from '../src/security/index.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
const seconds = Number(arg('--seconds', '3'));
const concurrency = Number(arg('--concurrency', '8'));
const MECHANISMS: ScramMechanismName[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

function serverSide(mechanism: ScramMechanismName): { handshakes: number; handshakesPerSec: number } {
  const u = parseAddScram(`${mechanism}=[name=bench,password=bench-secret]`);
  const keys = scramKeysFromSaltedPassword(mechanism, u.saltedPassword, u.salt, u.iterations);
  const client = new ScramClient(mechanism, 'bench', 'bench-secret', 'benchclientnonce');
  const first = client.first();
  const probe = new ScramServer(mechanism, () => keys, () => keys, () => 'benchservernonce');
  const final = client.final((probe.step(first) as { message: Buffer }).message);
  let n = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  while (performance.now() < end) {
    for (let i = 0; i < 100; i++) {
      const s = new ScramServer(mechanism, () => keys, () => keys, () => 'benchservernonce');
      s.step(first);
      if (s.step(final).kind !== 'done') throw new Error('bench exchange failed');
      n++;
    }
  }
  const elapsed = (performance.now() - start) / 1000;
  return { handshakes: n, handshakesPerSec: Math.round(n / elapsed) };
}

async function socketSide(port: number, mechanism: ScramMechanismName): Promise<{ handshakes: number; handshakesPerSec: number; failures: number }> {
  let n = 0;
  let failures = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < end) {
      try {
        const c = await BrokerConnection.open({ host: '127.0.0.1', port, clientId: 'scram-bench', sasl: { mechanism, username: 'bench', password: 'bench-secret' } });
        c.close();
        n++;
      } catch {
        failures++;
      }
    }
  }));
  const elapsed = (performance.now() - start) / 1000;
  return { handshakes: n, handshakesPerSec: Math.round(n / elapsed), failures };
}

const dir = mkdtempSync(join(tmpdir(), 'logline-bench-scram-'));
try {
  const server = await startServer({
    dataDir: join(dir, 'data'),
    config: parseBrokerConfig({
      'node.id': '1', 'listeners': 'SASL_PLAINTEXT://127.0.0.1:0', 'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT',
      'sasl.enabled.mechanisms': MECHANISMS.join(','), 'max.connections.per.ip': '100000',
    }),
    bootstrapRecords: MECHANISMS.map((m) => scramCredentialRecord(parseAddScram(`${m}=[name=bench,password=bench-secret]`))),
  });
  const port = server.listeners[0]!.port;
  const results: Record<string, unknown>[] = [];
  for (const mechanism of MECHANISMS) {
    results.push({ mechanism, mode: 'server', ...serverSide(mechanism) });
    results.push({ mechanism, mode: 'socket', concurrency, ...await socketSide(port, mechanism) });
  }
  await server.close();
  console.log(JSON.stringify({ bench: 'scram-handshakes', seconds, iterations: 4096, results }, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

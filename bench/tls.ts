// TLS against PLAINTEXT produce and fetch throughput in the same run: one broker (in this process,
// on a temporary data directory) with both listeners; librdkafka's producer in C (bench/rdkafka-perf.c)
// sends 1 KiB records over each in turn, alternating, so both see the same machine load, and after
// each produce `logline bench consume` (a separate process, TLS through --command-config) reads the
// same records back over the same listener. The ratios are the target (TLS >= 60% of
// plaintext at 1 KiB records). JSON on stdout.
//   node dist/bench/tls.js [--records 300000] [--rounds 2] [--acks 1]     (LOGLINE_TLS_ENGINE=node: node:tls)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startServer } from '../src/broker/index.js';
import { parseBrokerConfig } from '../src/config/index.js';
import { nativeTlsAvailable, writeDevCerts } from '../src/security/index.js';
import { runRdkafkaPerf } from './rdkafka-perf.js';

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1]! : dflt; };
const records = Number(arg('--records', '300000'));
const rounds = Number(arg('--rounds', '2'));
const acks = Number(arg('--acks', '1'));
const size = 1024;

const dir = mkdtempSync(join(tmpdir(), 'logline-bench-tls-'));
try {
  const certs = writeDevCerts(join(dir, 'certs'));
  const server = await startServer({
    dataDir: join(dir, 'data'),
    config: parseBrokerConfig({
      'node.id': '1', 'listeners': 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0', 'num.partitions': '6',
      'ssl.keystore.type': 'PEM', 'ssl.keystore.location': join(certs.dir, 'broker.pem'),
      'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert,
    }),
  });
  const port = (name: string) => server.listeners.find((l) => l.name === name)!.port;
  const sslClient = join(dir, 'ssl-client.properties');
  writeFileSync(sslClient, `security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=${certs.caCert}\n`);
  /** `logline bench consume` of the topic's first `records` records over `protocol`; its JSON summary. */
  const consume = (protocol: string, topic: string) => new Promise<{ recordsPerSec: number; mbPerSec: number; seconds: number }>((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/logline.js', 'bench', 'consume', '--topic', topic, '--num-records', String(records), '--json', '--quiet', '--max-seconds', '300',
      '--bootstrap-server', `127.0.0.1:${port(protocol)}`, ...(protocol === 'SSL' ? ['--command-config', sslClient] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.on('exit', (code) => {
      try {
        const r = JSON.parse(out);
        if (code !== 0 || r.error) reject(new Error(`consume over ${protocol}: exit ${code}: ${r.error ?? out}`));
        else resolve({ recordsPerSec: r.recordsPerSec, mbPerSec: r.mbPerSec, seconds: r.seconds });
      } catch {
        reject(new Error(`consume over ${protocol}: exit ${code}: ${out}`));
      }
    });
  });
  const runs: { mode: 'produce' | 'fetch'; protocol: string; recordsPerSec: number; mbPerSec: number; seconds: number }[] = [];
  for (let round = 0; round < rounds; round++) {
    for (const protocol of ['PLAINTEXT', 'SSL']) {
      const topic = `tls-bench-${protocol.toLowerCase()}`;
      const extra = protocol === 'SSL' ? ['security.protocol=SSL', `ssl.ca.location=${certs.caCert}`] : [];
      const r = await runRdkafkaPerf({ bootstrap: `127.0.0.1:${port(protocol)}`, topic, records, size, acks, compression: 'none', maxSeconds: 300, extra });
      if (r.error) throw new Error(`${protocol}: ${r.error}`);
      runs.push({ mode: 'produce', protocol, ...r });
      runs.push({ mode: 'fetch', protocol, client: 'logline bench consume', ...await consume(protocol, topic) } as typeof runs[number]);
    }
  }
  await server.close();
  const best = (mode: string, p: string) => Math.max(...runs.filter((r) => r.mode === mode && r.protocol === p).map((r) => r.recordsPerSec));
  const share = (mode: string) => Number((best(mode, 'SSL') / best(mode, 'PLAINTEXT')).toFixed(3));
  console.log(JSON.stringify({
    bench: 'tls-vs-plaintext', recordBytes: size, records, acks, rounds,
    // The broker's TLS sessions: our addon, or node:tls (LOGLINE_TLS_ENGINE=node, or no addon built).
    tlsEngine: nativeTlsAvailable() ? 'addon' : 'node:tls', runs,
    plaintextRecordsPerSecBest: best('produce', 'PLAINTEXT'), sslRecordsPerSecBest: best('produce', 'SSL'), sslShareOfPlaintext: share('produce'),
    fetch: { plaintextRecordsPerSecBest: best('fetch', 'PLAINTEXT'), sslRecordsPerSecBest: best('fetch', 'SSL'), sslShareOfPlaintext: share('fetch') },
    target: 0.6,
  }, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

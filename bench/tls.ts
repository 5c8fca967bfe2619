// TLS against PLAINTEXT produce and fetch throughput in the same run: one broker (in this process,
// on a temporary data directory) with both listeners; librdkafka in C (bench/rdkafka-perf.c) sends
// 1 KiB records over each in turn, alternating, so both see the same machine load, and after each
// produce reads the same records back over the same listener, with librdkafka's consumer and with
// `logline bench consume` (our Node client, a separate process, TLS through --command-config). The
// ratios are the target (TLS >= 60% of plaintext at 1 KiB records). Every run records the
// CPU the broker used (this process) and the client used, since client and broker share the
// machine's cores: what TLS costs each side is what sets the share here. JSON on stdout.
//   node dist/bench/tls.js [--records 300000] [--rounds 2] [--acks 1]     (LOGLINE_TLS_ENGINE=node: node:tls)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, tmpdir } from 'node:os';
import { startServer } from '../src/node/index.js';
import { parseBrokerConfig } from '../src/config/index.js';
import { nativeTlsAvailable, writeDevCerts } from '../src/security/index.js';
import { runRdkafkaConsume, runRdkafkaPerf } from './rdkafka-perf.js';
import { settleDirtyPages } from './settle.js';

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
  const consume = (protocol: string, topic: string) => new Promise<{ recordsPerSec: number; mbPerSec: number; seconds: number; error?: string }>((resolve, reject) => {
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
  type Run = { mode: 'produce' | 'fetch'; client: string; protocol: string; recordsPerSec: number; mbPerSec: number; seconds: number; brokerCpuSeconds: number; clientCpuSeconds?: number };
  const runs: Run[] = [];
  /**
   * Runs `work` and adds its figures with the broker's CPU time over it (this process; the clients
   * are children), up to when the page cache has written back what the run appended: the broker's
   * background flushes (log.writeback.bytes) are its CPU too, and a fast run would otherwise leave
   * them to be counted against, and to slow, the run after it.
   */
  const measured = async (run: Omit<Run, 'recordsPerSec' | 'mbPerSec' | 'seconds' | 'brokerCpuSeconds'>, work: () => Promise<any>) => {
    const cpu = process.cpuUsage();
    const r = await work();
    if (r.error) throw new Error(`${run.mode} over ${run.protocol} (${run.client}): ${r.error}`);
    await settleDirtyPages(join(dir, 'data'));
    const used = process.cpuUsage(cpu);
    runs.push({ ...run, recordsPerSec: r.recordsPerSec, mbPerSec: r.mbPerSec, seconds: r.seconds, brokerCpuSeconds: (used.user + used.system) / 1e6,
      ...(r.cpuSeconds === undefined ? {} : { clientCpuSeconds: r.cpuSeconds }) });
  };
  for (let round = 0; round < rounds; round++) {
    for (const protocol of ['PLAINTEXT', 'SSL']) {
      const topic = `tls-bench-${protocol.toLowerCase()}-${round}`;
      const bootstrap = `127.0.0.1:${port(protocol)}`;
      const extra = protocol === 'SSL' ? ['security.protocol=SSL', `ssl.ca.location=${certs.caCert}`] : [];
      await measured({ mode: 'produce', client: 'librdkafka', protocol }, () => runRdkafkaPerf({ bootstrap, topic, records, size, acks, compression: 'none', maxSeconds: 300, extra }));
      await measured({ mode: 'fetch', client: 'librdkafka', protocol }, () => runRdkafkaConsume({ bootstrap, topic, records, maxSeconds: 300, extra }));
      await measured({ mode: 'fetch', client: 'logline bench consume', protocol }, () => consume(protocol, topic));
    }
  }
  await server.close();
  const of = (mode: string, client: string, protocol: string) => runs.filter((r) => r.mode === mode && r.client === client && r.protocol === protocol);
  const best = (mode: string, client: string, protocol: string) => Math.max(...of(mode, client, protocol).map((r) => r.recordsPerSec));
  const share = (mode: string, client: string) => Number((best(mode, client, 'SSL') / best(mode, client, 'PLAINTEXT')).toFixed(3));
  /** CPU seconds per GB (1e9 bytes of values) of a side, the median over the runs. */
  const perGb = (mode: string, client: string, protocol: string, side: 'brokerCpuSeconds' | 'clientCpuSeconds') => {
    const v = of(mode, client, protocol).map((r) => r[side]! / (r.mbPerSec * r.seconds / 1000)).sort((a, b) => a - b);
    return Number(v[Math.floor(v.length / 2)]!.toFixed(3));
  };
  const summary = (mode: string, client: string) => {
    const cpu = (protocol: string) => ({
      brokerCpuSecondsPerGb: perGb(mode, client, protocol, 'brokerCpuSeconds'),
      ...(client === 'librdkafka' ? { clientCpuSecondsPerGb: perGb(mode, client, protocol, 'clientCpuSeconds') } : {}),
    });
    const plain = cpu('PLAINTEXT'), ssl = cpu('SSL');
    return {
      plaintextRecordsPerSecBest: best(mode, client, 'PLAINTEXT'), sslRecordsPerSecBest: best(mode, client, 'SSL'), sslShareOfPlaintext: share(mode, client),
      cpu: { PLAINTEXT: plain, SSL: ssl },
      // What the broker alone can carry over TLS against plaintext, per CPU second: the share a
      // broker whose clients run elsewhere would show once it is the bottleneck.
      brokerCpuShare: Number((plain.brokerCpuSecondsPerGb / ssl.brokerCpuSecondsPerGb).toFixed(3)),
      // The share with TLS free on the broker while client and broker share the cores: plaintext's
      // CPU per GB over the broker's plaintext cost plus the client's TLS cost (an estimate, CPU-bound).
      ...(client === 'librdkafka' ? { shareIfBrokerTlsWereFree: Number(((plain.brokerCpuSecondsPerGb + plain.clientCpuSecondsPerGb!) / (plain.brokerCpuSecondsPerGb + ssl.clientCpuSecondsPerGb!)).toFixed(3)) } : {}),
    };
  };
  console.log(JSON.stringify({
    bench: 'tls-vs-plaintext', recordBytes: size, records, acks, rounds, cores: availableParallelism(),
    // The broker's TLS sessions: our addon, or node:tls (LOGLINE_TLS_ENGINE=node, or no addon built).
    tlsEngine: nativeTlsAvailable() ? 'addon' : 'node:tls', runs,
    produce: summary('produce', 'librdkafka'),
    fetch: summary('fetch', 'librdkafka'),
    fetchNodeClient: summary('fetch', 'logline bench consume'),
    target: 0.6,
  }, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

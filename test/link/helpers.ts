// Shared by the link tests: a restartable single-node `logline server` process (process-helpers'), the CLI, a
// continuous kafkajs producer, partition ends, and records as comparable strings.
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { ClusterClient, listOffsets, type FetchedRecord } from '../../src/client/index.js';
import { partitionKey } from '../../src/util/index.js';
import { runProcess } from '../broker/process-helpers.js';
export { SingleNodeServer as Node } from '../broker/process-helpers.js';
import { SingleNodeServer } from '../broker/process-helpers.js';
import { freePort } from '../mirror/helpers.js';
import type { TestContext } from 'node:test';

/**
 * A source A and a target B, one `logline server` each, started; killed when the test ends
 * (LINK_LOG=1 prints their output then).
 */
export async function sourceAndTarget(t: TestContext): Promise<{ a: SingleNodeServer; b: SingleNodeServer }> {
  const a = new SingleNodeServer(await freePort());
  const b = new SingleNodeServer(await freePort());
  t.after(async () => {
    if (process.env.LINK_LOG) console.log(`--- A\n${a.output}\n--- B\n${b.output}`);
    await a.kill();
    await b.kill();
  });
  await a.start();
  await b.start();
  return { a, b };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `logline ARGS`, which must exit 0; its stdout. */
export async function cli(args: string[]): Promise<string> {
  const r = await runProcess(process.execPath, ['bin/logline.js', ...args], null, 60_000);
  assert.equal(r.code, 0, `logline ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

/**
 * kafkajs writes keyed 20-record sends (acks=all) round-robin over `partitions` until stopped; a
 * failed send is tried again (so the source may hold it twice). Returns what was acknowledged.
 */
export async function produceUntil(bootstrap: string, topic: string, partitions: number, stop: () => boolean): Promise<string[]> {
  const kafka = new Kafka({ brokers: bootstrap.split(','), clientId: 'link-test', logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 200 } });
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  const acknowledged: string[] = [];
  let connected = false;
  try {
    for (let i = 0, failures = 0; !stop() && i < 200_000 && failures < 200;) {
      const partition = (i / 20) % partitions;
      const messages = Array.from({ length: 20 }, (_, j) => ({ key: `k${(i + j) % 7}`, value: `v${i + j}`, partition, headers: { h: `h${i + j}` } }));
      try {
        if (!connected) { await producer.connect(); connected = true; }
        await producer.send({ topic, messages, acks: -1 });
        for (const m of messages) acknowledged.push(m.value);
        i += 20;
        await sleep(20);
      } catch {
        failures++;
        await sleep(300);
      }
    }
  } finally {
    await producer.disconnect().catch(() => {});
  }
  return acknowledged;
}

/** Each partition's high watermark (ListOffsets latest). */
export async function ends(bootstrap: string, topic: string, partitions: number): Promise<number[]> {
  const client = new ClusterClient({ bootstrap });
  try {
    const all = Array.from({ length: partitions }, (_, partition) => ({ topic, partition }));
    const m = await listOffsets(client, all, -1n);
    return all.map((r) => Number(m.get(partitionKey(topic, r.partition)) ?? -1n));
  } finally {
    client.close();
  }
}

/** Records as `offset|timestamp|key|value|headers`, to compare two clusters' partitions. */
export const view = (records: readonly FetchedRecord[]): string[] =>
  records.map((r) => `${r.offset}|${r.timestamp}|${r.key?.toString()}|${r.value?.toString()}|${r.headers.map((h) => `${h.key}=${h.value?.toString()}`).join(',')}`);

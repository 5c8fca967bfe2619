// A one-shot DescribeQuorum (api key 55) client: what a test, a bench or an admin tool uses to ask a
// voter who leads and how far each voter has replicated, over the same Kafka wire as the quorum.
import { connect } from 'node:net';
import { FrameSplitter, decodeResponse, encodeRequestFrame } from '../../protocol/index.js';
import type { QuorumDescription } from '../core/types.js';
import { ApiKey, METADATA_TOPIC, apiVersion, decodeDescribeQuorum } from './messages.js';

export function describeQuorum(host: string, port: number, timeoutMs = 5_000): Promise<QuorumDescription & { errorCode: number }> {
  const version = apiVersion[ApiKey.DescribeQuorum]!;
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => { socket.destroy(); reject(new Error(`DescribeQuorum to ${host}:${port} timed out`)); }, timeoutMs);
    const done = (err: Error | undefined, value?: QuorumDescription & { errorCode: number }) => {
      clearTimeout(timer);
      socket.destroy();
      if (err !== undefined) reject(err);
      else resolve(value!);
    };
    const splitter = new FrameSplitter(16 << 20);
    socket.on('connect', () => {
      const body = { topics: [{ topicName: METADATA_TOPIC, partitions: [{ partitionIndex: 0 }] }] };
      for (const c of encodeRequestFrame(ApiKey.DescribeQuorum, version, 1, 'describe-quorum', body)) socket.write(c);
    });
    socket.on('data', (chunk) => {
      try {
        const frames = splitter.push(chunk);
        if (frames.length > 0) done(undefined, decodeDescribeQuorum(decodeResponse(ApiKey.DescribeQuorum, version, frames[0]!).body));
      } catch (err) {
        done(err as Error);
      }
    });
    socket.on('error', (err) => done(err));
  });
}

// The broker's side of forwarding (Kafka's ForwardingManager) against a stand-in controller: a
// client's change goes in an Envelope naming the client, the controller's throttle reaches the
// client, and an Envelope the controller refuses answers UNKNOWN_SERVER_ERROR (retrying cannot
// fix a broker whose principal may not forward) rather than the retriable NOT_CONTROLLER.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { ForwardingControllerChannel } from '../../src/node/controller-forwarder.js';
import type { ControllerService } from '../../src/node/controller-service.js';
import type { LogMetadata } from '../../src/node/metadata-log.js';
import { quietLogger } from '../../src/node/index.js';
import { decodeHostAddress, decodePrincipal, type ForwardedFor } from '../../src/broker/envelope.js';
import { ApiKey, ErrorCode, FrameSplitter, ZERO_UUID, decodeRequest, encodeResponseFrame } from '../../src/protocol/index.js';

/** A controller listener that answers each request with `answer(apiKey, body)` and records what came. */
async function standIn(answer: (apiKey: number, body: Record<string, any>) => object): Promise<{ server: Server; port: number; seen: { apiKey: number; body: Record<string, any> }[] }> {
  const seen: { apiKey: number; body: Record<string, any> }[] = [];
  const server = createServer((socket) => {
    const splitter = new FrameSplitter(1 << 20);
    socket.on('data', (chunk) => {
      for (const frame of splitter.push(chunk)) {
        const { header, body } = decodeRequest(frame);
        seen.push({ apiKey: header.requestApiKey, body });
        for (const c of encodeResponseFrame(header.requestApiKey, header.requestApiVersion, header.correlationId, answer(header.requestApiKey, body))) socket.write(c);
      }
    });
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, seen };
}

function channelTo(port: number): ForwardingControllerChannel {
  const md = { leaderId: 1, controllerEndpoint: () => ({ host: '127.0.0.1', port }), onChange: () => {}, view: () => ({}), image: {} };
  return new ForwardingControllerChannel(md as unknown as LogMetadata, { isActive: false } as unknown as ControllerService,
    { nodeId: 2, requestTimeoutMs: 10_000, logger: quietLogger });
}

const request = { topics: [{ name: 'orders', numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false };

test('a client\'s CreateTopics goes to the controller in an Envelope naming the client, and the controller\'s throttle comes back to it', { timeout: 30_000 }, async () => {
  const throttled = {
    throttleTimeMs: 4200, topics: [{ name: 'orders', topicId: ZERO_UUID, errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED, errorMessage: 'over', topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null }],
  };
  const controller = await standIn((apiKey, body) => {
    if (apiKey !== ApiKey.Envelope) return throttled;
    const inner = decodeRequest(body['requestData']);
    const responseData = Buffer.concat(encodeResponseFrame(ApiKey.CreateTopics, inner.header.requestApiVersion, inner.header.correlationId, throttled)).subarray(4);
    return { responseData, errorCode: ErrorCode.NONE };
  });
  const channel = channelTo(controller.port);
  try {
    const caller: ForwardedFor = { principal: 'User:alice', clientId: 'billing-app', clientAddress: '::ffff:10.1.2.3' };
    const topics = await channel.createTopics(request, caller);
    assert.deepEqual(topics.map((t) => [t.name, t.errorCode]), [['orders', ErrorCode.THROTTLING_QUOTA_EXCEEDED]]);
    assert.equal(caller.throttleTimeMs, 4200);
    const envelope = controller.seen[0]!.body;
    assert.equal(decodePrincipal(envelope['requestPrincipal']), 'User:alice');
    assert.equal(decodeHostAddress(envelope['clientHostAddress']), '10.1.2.3');
    const inner = decodeRequest(envelope['requestData']);
    assert.equal(inner.header.requestApiKey, ApiKey.CreateTopics);
    assert.equal(inner.header.clientId, 'billing-app');
    assert.equal((inner.body as { topics: { name: string }[] }).topics[0]!.name, 'orders');
    // The broker's own requests go as they are.
    await channel.createTopics(request);
    assert.deepEqual(controller.seen.map((r) => r.apiKey), [ApiKey.Envelope, ApiKey.CreateTopics]);
  } finally {
    channel.close();
    controller.server.close();
  }
});

test('an Envelope the controller refuses answers UNKNOWN_SERVER_ERROR, not the retriable NOT_CONTROLLER', { timeout: 30_000 }, async () => {
  const controller = await standIn(() => ({ responseData: null, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED }));
  const channel = channelTo(controller.port);
  try {
    const caller: ForwardedFor = { principal: 'User:alice', clientId: 'app', clientAddress: '127.0.0.1' };
    const topics = await channel.createTopics(request, caller);
    assert.deepEqual(topics.map((t) => [t.name, t.errorCode]), [['orders', ErrorCode.UNKNOWN_SERVER_ERROR]]);
    const acls = await channel.createAcls([{ resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:bob', host: '*', operation: 3, permissionType: 3 }], caller);
    assert.deepEqual(acls.map((r) => r.errorCode), [ErrorCode.UNKNOWN_SERVER_ERROR]);
  } finally {
    channel.close();
    controller.server.close();
  }
});

test('KIP-599 through forwarding: an older client\'s topic changes reach the controller at a version it throttles rather than refuses, a newer client\'s at one it refuses', { timeout: 30_000 }, async () => {
  const controller = await standIn((apiKey, body) => {
    const inner = decodeRequest(body['requestData']);
    const v = inner.header.requestApiVersion;
    const k = inner.header.requestApiKey;
    const answer = k === ApiKey.CreateTopics
      ? { throttleTimeMs: 0, topics: [{ name: 'orders', topicId: ZERO_UUID, errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: null, topicConfigErrorCode: 0, numPartitions: -1, replicationFactor: -1, configs: null }] }
      : k === ApiKey.DeleteTopics
        ? { throttleTimeMs: 0, responses: [{ name: 'orders', topicId: ZERO_UUID, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: null }] }
        : { throttleTimeMs: 0, results: [{ name: 'orders', errorCode: ErrorCode.INVALID_PARTITIONS, errorMessage: null }] };
    return { responseData: Buffer.concat(encodeResponseFrame(k, v, inner.header.correlationId, answer)).subarray(4), errorCode: ErrorCode.NONE };
  });
  const channel = channelTo(controller.port);
  const caller = (apiVersion: number): ForwardedFor => ({ principal: 'User:alice', clientId: 'app', clientAddress: '127.0.0.1', apiVersion });
  const lastInner = () => decodeRequest(controller.seen.at(-1)!.body['requestData']);
  try {
    const versions: [string, number][] = [];
    for (const v of [4, 7]) {
      const topics = await channel.createTopics(request, caller(v));
      assert.deepEqual(topics.map((t) => [t.name, t.errorCode]), [['orders', ErrorCode.TOPIC_ALREADY_EXISTS]]);
      versions.push(['CreateTopics', lastInner().header.requestApiVersion]);
    }
    for (const v of [3, 6]) {
      const responses = await channel.deleteTopics([{ name: 'orders', topicId: ZERO_UUID }], caller(v));
      assert.deepEqual(responses.map((t) => [t.name, t.errorCode]), [['orders', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
      const inner = lastInner();
      versions.push(['DeleteTopics', inner.header.requestApiVersion]);
      // Before v6 the topics go by name.
      if (inner.header.requestApiVersion < 6) assert.deepEqual((inner.body as { topicNames: string[] }).topicNames, ['orders']);
    }
    for (const v of [2, 3]) {
      const results = await channel.createPartitions([{ name: 'orders', count: 6, assignments: null }], false, caller(v));
      assert.deepEqual(results.map((t) => [t.name, t.errorCode]), [['orders', ErrorCode.INVALID_PARTITIONS]]);
      versions.push(['CreatePartitions', lastInner().header.requestApiVersion]);
    }
    // Strict (THROTTLING_QUOTA_EXCEEDED) from CreateTopics v6, DeleteTopics v5, CreatePartitions v3.
    assert.deepEqual(versions, [['CreateTopics', 5], ['CreateTopics', 7], ['DeleteTopics', 4], ['DeleteTopics', 6], ['CreatePartitions', 2], ['CreatePartitions', 3]]);
  } finally {
    channel.close();
    controller.server.close();
  }
});

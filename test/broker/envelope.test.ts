// The Envelope's parts as a broker writes and a controller reads them: Kafka's serialization of a
// principal, the client's address, and the handler's answers to what it cannot read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiKey, ErrorCode, decodeRequest } from '../../src/protocol/index.js';
import { decodeHostAddress, decodePrincipal, encodeHostAddress, encodePrincipal, innerRequestData } from '../../src/broker/envelope.js';
import { envelopeHandler } from '../../src/broker/handlers/58-envelope.js';
import type { RequestContext } from '../../src/broker/context.js';

test('a principal is written as Kafka\'s DefaultKafkaPrincipalBuilder does: int16 version 0, then DefaultPrincipalData v0', () => {
  const bytes = encodePrincipal('User:alice');
  assert.deepEqual([...bytes], [0, 0, 5, ...Buffer.from('User'), 6, ...Buffer.from('alice'), 0, 0]);
  assert.equal(decodePrincipal(bytes), 'User:alice');
  assert.equal(decodePrincipal(encodePrincipal('User:CN=bob,O=x')), 'User:CN=bob,O=x');
  assert.throws(() => decodePrincipal(Buffer.from([0, 1, ...bytes.subarray(2)])), /v1/);
  assert.throws(() => decodePrincipal(Buffer.concat([bytes, Buffer.from([0])])), /trailing/);
});

test('the client address travels as 4 or 16 bytes and reads back as a socket reports it', () => {
  for (const [address, length, back] of [['127.0.0.1', 4, '127.0.0.1'], ['::ffff:10.1.2.3', 4, '10.1.2.3'], ['::1', 16, '::1'], ['fe80::1:2', 16, 'fe80::1:2']] as const) {
    const bytes = encodeHostAddress(address);
    assert.equal(bytes.length, length, address);
    assert.equal(decodeHostAddress(bytes), back);
  }
  assert.equal(decodeHostAddress(Buffer.alloc(5)), null);
});

test('Envelope handler: the inner request runs as the named principal (the sender\'s when none is named); unreadable parts answer INVALID_REQUEST', async () => {
  const seen: { principal: string; clientAddress: string; apiKey: number }[] = [];
  const services = {
    forwarded: async (requestData: Buffer, principal: string, clientAddress: string) => {
      seen.push({ principal, clientAddress, apiKey: decodeRequest(requestData).header.requestApiKey });
      return Buffer.from('inner response');
    },
  };
  const ctx = { principal: 'User:broker-1', apiVersion: 0, services } as unknown as RequestContext<typeof services>;
  const requestData = innerRequestData(ApiKey.CreateTopics, 7, 'app', { topics: [], timeoutMs: 1000, validateOnly: false });
  const ok = await envelopeHandler.handle({ requestData, requestPrincipal: encodePrincipal('User:alice'), clientHostAddress: encodeHostAddress('10.0.0.7') }, ctx);
  assert.deepEqual(ok, { responseData: Buffer.from('inner response'), errorCode: ErrorCode.NONE });
  await envelopeHandler.handle({ requestData, requestPrincipal: null, clientHostAddress: encodeHostAddress('10.0.0.8') }, ctx);
  assert.deepEqual(seen, [{ principal: 'User:alice', clientAddress: '10.0.0.7', apiKey: ApiKey.CreateTopics }, { principal: 'User:broker-1', clientAddress: '10.0.0.8', apiKey: ApiKey.CreateTopics }]);
  const badPrincipal = await envelopeHandler.handle({ requestData, requestPrincipal: Buffer.from([0, 0, 99]), clientHostAddress: encodeHostAddress('10.0.0.7') }, ctx);
  assert.equal(badPrincipal?.errorCode, ErrorCode.INVALID_REQUEST);
  const badHost = await envelopeHandler.handle({ requestData, requestPrincipal: null, clientHostAddress: Buffer.alloc(3) }, ctx);
  assert.equal(badHost?.errorCode, ErrorCode.INVALID_REQUEST);
  assert.equal(seen.length, 2, 'nothing unreadable reached the router');
});

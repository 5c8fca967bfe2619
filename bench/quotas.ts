// bench/quotas: what client quotas cost a produce request, in the broker's own code path
// (enforceClientQuotas as the network layer calls it once a request is handled).
//   node dist/bench/quotas.js
// Three cases: no quota anywhere (one Set lookup), a producer_byte_rate that applies to the client
// (resolution cached, one rate sample updated and measured), and request_percentage on top.
// Prints one JSON object: nanoseconds per request for each.
import { ClientQuotaManager, enforceClientQuotas } from '../src/broker/quotas.js';
import { ClientQuotasDelta, ClientQuotasImage } from '../src/metadata/index.js';
import { ManualClock } from '../src/util/index.js';
import type { RequestContext } from '../src/broker/index.js';

const REQUESTS = 2_000_000;

function image(quotas: [string, number][]): ClientQuotasImage {
  const d = new ClientQuotasDelta(ClientQuotasImage.EMPTY);
  for (const [key, value] of quotas) d.replay({ entity: [{ entityType: 'client-id', entityName: 'producer' }], key, value, remove: false });
  return d.apply();
}

function nsPerRequest(quotas: [string, number][]): number {
  const clock = new ManualClock(1_000_000);
  const m = new ClientQuotaManager(clock);
  m.update(image(quotas));
  const ctx = { principal: 'User:ANONYMOUS', header: { clientId: 'producer' } } as unknown as RequestContext<unknown>;
  const body = { throttleTimeMs: 0, responses: [] };
  const start = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i++) {
    // 16 kB produce requests 0.1 ms apart: 160 MB/s against a far higher quota, so nothing is throttled.
    if ((i & 15) === 0) clock.advance(1);
    enforceClientQuotas(m, ctx, 0, undefined, 16_384, 0.05, body);
  }
  return Number(process.hrtime.bigint() - start) / REQUESTS;
}

const result = {
  requests: REQUESTS,
  noQuotaNs: Math.round(nsPerRequest([]) * 10) / 10,
  producerByteRateNs: Math.round(nsPerRequest([['producer_byte_rate', 1e12]]) * 10) / 10,
  withRequestPercentageNs: Math.round(nsPerRequest([['producer_byte_rate', 1e12], ['request_percentage', 1e6]]) * 10) / 10,
};
console.log(JSON.stringify(result));

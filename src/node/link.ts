// Cluster links in a node (issue 35, mirror topics): the link manager of src/link, told after each
// metadata delta which mirror partitions this node leads (topics with link.name, the links' LINK
// config resources), and given the replica manager as the mirror partitions' log.
import { ConfigResourceType, type MetadataImage } from '../metadata/index.js';
import { LinkManager } from '../link/index.js';
import type { Logger } from '../util/index.js';
import type { Broker } from './broker.js';

const LINK_NAME = 'link.name';

export function startNodeLinks(broker: Broker, listeners: readonly { host: string; port: number; securityProtocol: string }[], logger: Logger): LinkManager {
  const rm = broker.replicaManager;
  const plain = listeners.find((l) => l.securityProtocol === 'PLAINTEXT');
  const manager = new LinkManager({
    log: rm, logger, maxWaitMs: 500, partitionMaxBytes: 1 << 20, retryBackoffMs: 500,
    // The group offset sync commits on this cluster through this node's own PLAINTEXT listener.
    target: plain === undefined ? null : { bootstrap: `${plain.host === '0.0.0.0' ? '127.0.0.1' : plain.host}:${plain.port}` },
  });
  broker.afterDelta((image) => { void manager.update(assignmentsOf(image, broker)); });
  return manager;
}

function assignmentsOf(image: MetadataImage, broker: Broker) {
  const links = new Map<string, ReadonlyMap<string, string>>();
  const topics = new Map<string, string[]>();
  for (const r of image.configs.resources.values()) {
    if (r.type === ConfigResourceType.LINK) links.set(r.name, r.entries);
    else if (r.type === ConfigResourceType.TOPIC) {
      const link = r.entries.get(LINK_NAME);
      if (link !== undefined && link !== '' && image.topics.getTopic(r.name) !== undefined) topics.set(link, [...(topics.get(link) ?? []), r.name]);
    }
  }
  const led: { link: string; topic: string; partition: number }[] = [];
  const groupSync = new Set<string>();
  for (const [link, names] of topics) {
    names.sort();
    for (const topic of names) {
      const t = image.topics.getTopic(topic)!;
      for (const index of t.partitions.keys()) {
        const p = broker.replicaManager.partition(topic, index);
        if (p === undefined || !p.isLeader || p.linkName === '') continue;
        led.push({ link, topic, partition: index });
        if (topic === names[0] && index === 0) groupSync.add(link);
      }
    }
  }
  return { links, topics, led, groupSync };
}

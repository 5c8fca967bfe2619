// `logline cluster info`: the cluster id, controller and brokers.
import { ClusterClient } from '../client/index.js';
import { UsageError, helpText, parseArgs } from './args.js';
import { COMMON_FLAGS, bootstrapServers, table, toJson } from './output.js';

export async function clusterCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, COMMON_FLAGS);
  if (flags.help) { console.log(helpText('logline cluster info [options]', 'Describe the cluster.', COMMON_FLAGS)); return 0; }
  if (positionals[0] !== 'info') throw new UsageError('usage: logline cluster info');
  const client = new ClusterClient({ bootstrap: bootstrapServers(flags) });
  try {
    const topics = await client.metadata(null);
    const brokers = [...client.brokers.values()].map((b) => ({ id: b.nodeId, host: b.host, port: b.port, rack: b.rack }));
    const info = { clusterId: client.clusterId, controllerId: client.controllerId, brokers, topics: topics.length };
    console.log(flags.json ? toJson(info) : `cluster ${info.clusterId}  controller ${info.controllerId}  topics ${info.topics}\n\n${table(brokers)}`);
    return 0;
  } finally {
    client.close();
  }
}

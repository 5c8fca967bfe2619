// `logline <noun> <verb>`: the command line. Exit codes: 0 ok, 1 failed, 2 usage.
import { UsageError, helpColumns } from './args.js';
import { serverCommand } from './server.js';
import { storageCommand } from './storage.js';
import { topicCommand } from './topic.js';
import { produceCommand } from './produce.js';
import { consumeCommand } from './consume.js';
import { clusterCommand } from './cluster.js';
import { benchCommand } from './bench.js';
import { groupCommand } from './group.js';
import { transactionsCommand } from './transactions.js';
import { planCommand } from './plan.js';
import { doctorCommand } from './doctor.js';
import { securityCommand } from './security.js';
import { quotaCommand } from './quota.js';
import { aclCommand } from './acl.js';
import { userCommand } from './user.js';
import { verifyCommand } from './verify.js';
import { mirrorCommand } from './mirror.js';
import { schemaCommand } from './schema.js';
import { version } from '../index.js';

const COMMANDS: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  server: { help: 'run a broker (single node with embedded defaults)', run: serverCommand },
  storage: { help: 'prepare log directories: storage format (before a cluster\'s first start), storage info, storage random-uuid', run: storageCommand },
  topic: { help: 'create, list, describe, delete topics; alter their configs', run: topicCommand },
  produce: { help: 'produce lines from stdin', run: produceCommand },
  consume: { help: 'print records of a topic', run: consumeCommand },
  group: { help: 'list, describe (offsets and lag), delete consumer groups; reset their offsets', run: groupCommand },
  transactions: { help: 'list, describe transactions and their producers; abort a hanging one', run: transactionsCommand },
  cluster: { help: 'describe the cluster (cluster info, cluster status), elect leaders (cluster elect-leaders) or start a local one (cluster start)', run: clusterCommand },
  schema: { help: 'the schema registry: list subjects, register, get, check compatibility, set levels and modes, delete (schema register --subject orders-value --file order.avsc)', run: schemaCommand },
  quota: { help: 'set and list client quotas (quota set --user alice --add producer_byte_rate=1048576)', run: quotaCommand },
  security: { help: 'TLS helpers: write development certificates (security dev-certs DIR)', run: securityCommand },
  acl: { help: 'create, list, delete ACLs (kafka-acls.sh\'s options)', run: aclCommand },
  user: { help: 'SCRAM credentials of users (user scram set|delete|list)', run: userCommand },
  bench: { help: 'load generators (bench produce)', run: benchCommand },
  doctor: { help: 'check a running cluster against the production checklist (PASS/WARN/FAIL)', run: doctorCommand },
  plan: { help: 'size a cluster: disk, network, storage and brokers for a workload', run: planCommand },
  verify: { help: 'check a cluster for lost writes, duplicates, aborted reads and other anomalies (a recorded workload, faults with --cluster N)', run: verifyCommand },
  mirror: { help: 'mirror topics and consumer group offsets between clusters from MirrorMaker 2\'s properties (mirror --config FILE, mirror status)', run: mirrorCommand },
  version: { help: 'print the version', run: async () => { console.log(version); return 0; } },
};

function usage(): string {
  const names = Object.keys(COMMANDS);
  return ['usage: logline <command> [options]', '', 'commands:',
    ...helpColumns(names.map((n) => [n, COMMANDS[n]!.help])), '', 'Run `logline <command> --help` for its options.'].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [noun, ...rest] = argv;
  if (!noun || noun === '--help' || noun === '-h' || noun === 'help') {
    console.log(usage());
    return noun ? 0 : 2;
  }
  const command = COMMANDS[noun];
  if (!command) {
    console.error(`unknown command "${noun}"\n\n${usage()}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`${err.message}\nRun \`logline ${noun} --help\` for usage.`);
      return 2;
    }
    throw err;
  }
}

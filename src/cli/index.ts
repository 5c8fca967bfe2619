// `logline <noun> <verb>`: the command line. Exit codes: 0 ok, 1 failed, 2 usage.
// Each noun's module is loaded when it runs: a command starts without loading every other one
// (the broker for `server`, the registry's formats for `schema`, ...).
import { UsageError, helpColumns } from './args.js';

const COMMANDS: Record<string, { help: string; run: (argv: string[]) => Promise<number> }> = {
  server: { help: 'run a broker (single node with embedded defaults)', run: (argv) => import('./server.js').then((m) => m.serverCommand(argv)) },
  storage: { help: 'prepare log directories: storage format (before a cluster\'s first start), storage info, storage random-uuid', run: (argv) => import('./storage.js').then((m) => m.storageCommand(argv)) },
  topic: { help: 'create, list, describe, delete topics; alter their configs', run: (argv) => import('./topic.js').then((m) => m.topicCommand(argv)) },
  produce: { help: 'produce lines from stdin', run: (argv) => import('./produce.js').then((m) => m.produceCommand(argv)) },
  consume: { help: 'print records of a topic', run: (argv) => import('./consume.js').then((m) => m.consumeCommand(argv)) },
  group: { help: 'list, describe (offsets and lag), delete consumer groups; reset their offsets', run: (argv) => import('./group.js').then((m) => m.groupCommand(argv)) },
  transactions: { help: 'list, describe transactions and their producers; abort a hanging one', run: (argv) => import('./transactions.js').then((m) => m.transactionsCommand(argv)) },
  cluster: { help: 'describe the cluster (cluster info, cluster status), elect leaders (cluster elect-leaders) or start a local one (cluster start)', run: (argv) => import('./cluster.js').then((m) => m.clusterCommand(argv)) },
  schema: { help: 'the schema registry: list subjects, register, get, check compatibility, set levels and modes, delete (schema register --subject orders-value --file order.avsc)', run: (argv) => import('./schema.js').then((m) => m.schemaCommand(argv)) },
  feature: { help: 'describe the cluster\'s features and change their finalized levels (feature downgrade --feature eligible.leader.replicas.version=0)', run: (argv) => import('./feature.js').then((m) => m.featureCommand(argv)) },
  quota: { help: 'set and list client quotas (quota set --user alice --add producer_byte_rate=1048576)', run: (argv) => import('./quota.js').then((m) => m.quotaCommand(argv)) },
  security: { help: 'TLS helpers: write development certificates (security dev-certs DIR)', run: (argv) => import('./security.js').then((m) => m.securityCommand(argv)) },
  acl: { help: 'create, list, delete ACLs (kafka-acls.sh\'s options)', run: (argv) => import('./acl.js').then((m) => m.aclCommand(argv)) },
  user: { help: 'SCRAM credentials of users (user scram set|delete|list)', run: (argv) => import('./user.js').then((m) => m.userCommand(argv)) },
  bench: { help: 'load generators (bench produce)', run: (argv) => import('./bench.js').then((m) => m.benchCommand(argv)) },
  doctor: { help: 'check a running cluster against the production checklist (PASS/WARN/FAIL)', run: (argv) => import('./doctor.js').then((m) => m.doctorCommand(argv)) },
  plan: { help: 'size a cluster: disk, network, storage and brokers for a workload', run: (argv) => import('./plan.js').then((m) => m.planCommand(argv)) },
  verify: { help: 'check a cluster for lost writes, duplicates, aborted reads and other anomalies (a recorded workload, faults with --cluster N)', run: (argv) => import('./verify.js').then((m) => m.verifyCommand(argv)) },
  link: { help: 'cluster links: mirror topics that keep the source\'s offsets (link create NAME --source BOOTSTRAP, mirror NAME TOPIC, list, status, promote TOPIC, delete NAME [--force])', run: (argv) => import('./link.js').then((m) => m.linkCommand(argv)) },
  mirror: { help: 'mirror topics and consumer group offsets between clusters from MirrorMaker 2\'s properties (mirror --config FILE, mirror status)', run: (argv) => import('./mirror.js').then((m) => m.mirrorCommand(argv)) },
  version: { help: 'print the version', run: () => import('../index.js').then((m) => { console.log(m.version); return 0; }) },
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
  // A reader that went away (`logline consume ... | head`) ends the command quietly, as a closed pipe ends kcat.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    throw e;
  });
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

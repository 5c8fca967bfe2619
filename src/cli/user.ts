// `logline user scram set|delete|list`, after kafka-configs.sh --entity-type users
// --alter --add-config 'SCRAM-SHA-512=[password=...]': SCRAM credentials through
// AlterUserScramCredentials (the salted password is computed here, so the password never leaves
// this process) and DescribeUserScramCredentials.
import { ClusterClient, KafkaError } from '../client/index.js';
import { ApiKey, ErrorCode } from '../protocol/index.js';
import { isScramMechanism, scramUpsertion, SCRAM_ITERATIONS_DEFAULT, SCRAM_MECHANISM_IDS, scramMechanismName } from '../security/index.js';
import { UsageError, helpText, parseArgs, type FlagSpec } from './args.js';
import { COMMON_FLAGS, table, toJson, clientOptions } from './output.js';

const FLAGS: Record<string, FlagSpec> = {
  ...COMMON_FLAGS,
  name: { type: 'string', help: 'set, delete: the user name; list: only this user', repeatable: true },
  mechanism: { type: 'string', help: 'set, delete: SCRAM-SHA-256 or SCRAM-SHA-512 (default SCRAM-SHA-512)' },
  password: { type: 'string', help: 'set: the password' },
  iterations: { type: 'number', help: `set: PBKDF2 iterations (default ${SCRAM_ITERATIONS_DEFAULT}, 4096-16384)` },
};

const USAGE = 'logline user scram <set|delete|list> [options]';

export async function userCommand(argv: string[]): Promise<number> {
  const { positionals, flags } = parseArgs(argv, FLAGS);
  const [kind, verb] = positionals;
  if (flags.help || kind !== 'scram' || !verb) {
    console.log(helpText(USAGE, 'Manage users\' SCRAM credentials (SASL/SCRAM-SHA-256, SCRAM-SHA-512).', FLAGS));
    return flags.help ? 0 : 2;
  }
  const names = (flags.name as string[] | undefined) ?? [];
  const mechanism = String(flags.mechanism ?? 'SCRAM-SHA-512').toUpperCase();
  if (!isScramMechanism(mechanism)) throw new UsageError(`--mechanism ${mechanism}: expected SCRAM-SHA-256 or SCRAM-SHA-512`);
  const oneName = (): string => {
    if (names.length !== 1) throw new UsageError(`user scram ${verb} needs exactly one --name`);
    return names[0]!;
  };
  const client = new ClusterClient(clientOptions(flags));
  try {
    const alter = async (body: object): Promise<void> => {
      const r = await (await client.any()).send(ApiKey.AlterUserScramCredentials, 0, body);
      for (const x of r.results as { user: string; errorCode: number; errorMessage: string | null }[]) {
        if (x.errorCode !== ErrorCode.NONE) throw new KafkaError(x.errorCode, `user ${x.user}: ${x.errorMessage ?? ''}`);
      }
    };
    switch (verb) {
      case 'set': {
        const name = oneName();
        if (typeof flags.password !== 'string') throw new UsageError('user scram set needs --password');
        let u;
        try {
          u = scramUpsertion(name, mechanism, flags.password, (flags.iterations as number | undefined) ?? SCRAM_ITERATIONS_DEFAULT);
        } catch (e) {
          throw new UsageError((e as Error).message);
        }
        await alter({ deletions: [], upsertions: [{ name, mechanism: SCRAM_MECHANISM_IDS[mechanism], iterations: u.iterations, salt: u.salt, saltedPassword: u.saltedPassword }] });
        console.log(flags.json ? toJson({ user: name, mechanism, iterations: u.iterations }) : `${mechanism} credential of ${name} set (${u.iterations} iterations)`);
        return 0;
      }
      case 'delete': {
        const name = oneName();
        await alter({ deletions: [{ name, mechanism: SCRAM_MECHANISM_IDS[mechanism] }], upsertions: [] });
        console.log(flags.json ? toJson({ user: name, mechanism, deleted: true }) : `${mechanism} credential of ${name} deleted`);
        return 0;
      }
      case 'list': {
        const r = await (await client.any()).send(ApiKey.DescribeUserScramCredentials, 0, { users: names.length === 0 ? null : names.map((name) => ({ name })) });
        if (r.errorCode !== ErrorCode.NONE) throw new KafkaError(r.errorCode, r.errorMessage);
        const rows: Record<string, unknown>[] = [];
        for (const x of r.results as { user: string; errorCode: number; errorMessage: string | null; credentialInfos: { mechanism: number; iterations: number }[] }[]) {
          if (x.errorCode !== ErrorCode.NONE) throw new KafkaError(x.errorCode, x.errorMessage);
          for (const c of x.credentialInfos) rows.push({ user: x.user, mechanism: scramMechanismName(c.mechanism) ?? String(c.mechanism), iterations: c.iterations });
        }
        console.log(flags.json ? toJson(rows) : table(rows, ['user', 'mechanism', 'iterations']));
        return 0;
      }
      default:
        throw new UsageError(`unknown verb "${verb}"; expected set, delete or list`);
    }
  } finally {
    client.close();
  }
}

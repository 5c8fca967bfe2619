// `logline server`: a broker in this process until SIGINT/SIGTERM.
import { startServer, consoleLogger } from '../broker/index.js';
import { helpText, parseArgs, type FlagSpec } from './args.js';

const FLAGS: Record<string, FlagSpec> = {
  'node-id': { type: 'number', help: 'node.id of this process (default 1)' },
  listeners: { type: 'string', help: 'comma-separated NAME://HOST:PORT (default PLAINTEXT://localhost:9092)' },
  help: { type: 'boolean', help: 'show this help' },
};

export async function serverCommand(argv: string[]): Promise<number> {
  const { flags } = parseArgs(argv, FLAGS);
  if (flags.help) {
    console.log(helpText('logline server [options]', 'Runs a Logline broker until interrupted.', FLAGS));
    return 0;
  }
  const listeners = typeof flags.listeners === 'string' ? flags.listeners.split(',') : undefined;
  let server;
  try {
    server = await startServer({ nodeId: flags['node-id'] as number | undefined, listeners, logger: consoleLogger });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    console.error(e.code === 'EADDRINUSE' ? `cannot listen: ${e.message} (is another broker running?)` : `cannot start: ${e.message}`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (sig: string) => { consoleLogger.info(`${sig}: shutting down`); resolve(); };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  await server.close();
  consoleLogger.info('stopped');
  return 0;
}

// MirrorMaker 2's engine inside a node (mirror.enable): the same engine `logline mirror` runs as
// its own process, with the flows of MirrorMaker 2's properties file (mirror.config.file). Its
// status and MM2-named metrics are served by the node's HTTP listener (/v1/mirror, /metrics, the
// console's Mirror page) instead of a listener of its own.
//
// Every node with mirror.enable runs its flows: enable it on one node of a cluster (at least once
// stays correct with two, only doing the work twice; exactly once fences the other's transactions).
import { readFileSync } from 'node:fs';
import { parseProperties, type BrokerConfig } from '../config/index.js';
import { MirrorEngine, mirrorClientOptions, parseMirrorConfig } from '../mirror/index.js';
import type { Logger } from '../util/index.js';

/** The node's mirror, started; null when mirror.enable is off. A bad file or key fails the start, naming it. */
export async function startNodeMirror(config: BrokerConfig, logger: Logger): Promise<MirrorEngine | null> {
  if (config.get('mirror.enable') !== true) return null;
  const file = config.get('mirror.config.file') as string | null;
  if (file === null || file === '') throw new Error('mirror.enable=true needs mirror.config.file (MirrorMaker 2\'s properties file)');
  let mirrorConfig;
  try {
    mirrorConfig = parseMirrorConfig(parseProperties(readFileSync(file, 'utf8')));
  } catch (e) {
    throw new Error(`mirror.config.file ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  let clients;
  try {
    clients = mirrorClientOptions(mirrorConfig);
  } catch (e) {
    throw new Error(`mirror.config.file ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const engine = new MirrorEngine({ config: mirrorConfig, clients, logger });
  await engine.start();
  const flows = mirrorConfig.flows.filter((f) => f.enabled).map((f) => `${f.source}->${f.target}`);
  logger.info(`mirroring ${flows.join(', ') || '(no enabled flow: heartbeats only)'} from ${file}`);
  return engine;
}

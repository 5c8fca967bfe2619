// The TLS listener tests (tls.test.ts) once more on node:tls, which listeners use where the TLS
// addon is not built (src/security/native-tls.ts); every other TLS test runs on the addon.
import assert from 'node:assert/strict';
import { nativeTlsAvailable } from '../../src/security/index.js';

process.env.LOGLINE_TLS_ENGINE = 'node';
assert.equal(nativeTlsAvailable(), false);
await import('./tls.test.js');

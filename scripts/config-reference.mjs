// Writes docs/config-reference.md, the configuration reference, from src/config's table (build first:
// npx tsc -p tsconfig.json). test/config/reference.test.ts checks that the committed file is current.
import { writeFileSync } from 'node:fs';
import { renderConfigReference } from '../dist/src/config/reference.js';

writeFileSync(new URL('../docs/config-reference.md', import.meta.url), renderConfigReference());

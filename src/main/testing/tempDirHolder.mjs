#!/usr/bin/env node
// Test helper process for platform/tempDirs.test.ts: makes one folder with processTempDir in the folder given (as
// the onnxruntime LLM engine makes its external-data folder), writes a file into it, prints its path and waits
// until it is killed.
// Usage: node tempDirHolder.mjs <root> <prefix>
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
const [root, prefix] = process.argv.slice(2);
const { processTempDir } = await import('../platform/tempDirs.ts');
const dir = await processTempDir(prefix, root);
await writeFile(join(dir, 'weights.bin'), new Uint8Array(1024));
process.stdout.write(`${dir}\n`);
setInterval(() => undefined, 60_000);

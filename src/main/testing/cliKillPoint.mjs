#!/usr/bin/env node
// Test helper process: the `arlarena` CLI with a store kill point armed in its own (main) process, so a test can
// SIGKILL a real CLI command (an import, a catalog change) at an exact write. cliKilled.mjs arms it in the
// training workers instead.
// Usage: node cliKillPoint.mjs <killAt> <label|''> <arlarena args…>
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
const [killAt, label, ...args] = process.argv.slice(2);
const { armKillPoint } = await import('./killPoints.ts');
armKillPoint(Number(killAt), label);
const { main } = await import('../cli/main.ts');
process.exitCode = await main(args);

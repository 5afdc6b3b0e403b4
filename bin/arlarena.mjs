#!/usr/bin/env node
// The `arlarena` CLI entry: runs the TypeScript sources through tsx so `npm ci` is all a checkout needs.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));

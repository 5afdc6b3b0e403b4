#!/usr/bin/env node
// Test helper process: the `arlarena` CLI whose training workers run the real trainer with a store kill point
// armed (jobs/killedTrainerWorker.ts), so a test can SIGKILL a real CLI run at an exact write.
// Usage: node cliKilled.mjs <killAt> <label|''> <arlarena args…>
import process from 'node:process';
import { register } from 'tsx/esm/api';

register();
const [killAt, label, ...args] = process.argv.slice(2);
process.env.ARL_KIT_KILL_AT = killAt;
process.env.ARL_KIT_KILL_LABEL = label;
const { threadWorkerSpawner } = await import('../sessions/workerHost.ts');
const { main } = await import('../cli/main.ts');
process.exitCode = await main(args, { spawn: threadWorkerSpawner(new URL('./jobs/killedTrainerWorker.ts', import.meta.url)) });

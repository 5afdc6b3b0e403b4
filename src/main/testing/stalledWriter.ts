/**
 * Test helper process for deadTemps.test.ts: a live writer stalled mid-write. It opens the store in `dataDir` and
 * either saves a checkpoint of a new run `slow` (`checkpoint`: stopped with the checkpoint's temp folder whole, before
 * its rename) or imports `log` (`import`: stopped at its first metrics append, in its staging folder under
 * <dataDir>/.imports/). There it prints "stalled" and waits until `goFile` exists; then it finishes and exits 0
 * (1, with the error on stderr, if the write failed).
 * Usage: node --import tsx stalledWriter.ts <dataDir> <goFile> checkpoint
 *        node --import tsx stalledWriter.ts <dataDir> <goFile> import <log>
 */
import { existsSync } from 'node:fs';
import { RunStore } from '../store/runStore';
import { injectStoreFaults } from '../store/faults';
import { importLogs } from '../imports/importLogs';

const [dataDir, goFile, what, log] = process.argv.slice(2);
if (what !== 'checkpoint' && !(what === 'import' && log)) throw new Error(`stalledWriter: checkpoint, or import LOG; got ${what}`);
const store = await RunStore.open(dataDir!);
const label = what === 'checkpoint' ? 'checkpoint-rename' : 'jsonl-append';
const pause = new Int32Array(new SharedArrayBuffer(4));
let stalled = false;
injectStoreFaults({
  // armed: appends call the hook (jsonl-append) half-way through their line
  armed: what === 'import',
  at(l) {
    if (l !== label || stalled) return;
    stalled = true;
    process.stdout.write('stalled\n'); // synchronous on a pipe (Linux): the test reads it before this wait ends
    while (!existsSync(goFile!)) Atomics.wait(pause, 0, 0, 20);
  },
});
try {
  if (what === 'checkpoint') {
    await store.createRun({
      id: 'slow',
      preset: 'slow',
      env: 'sokoban',
      seed: 1,
      totalSteps: 10,
      config: { slow: true },
      status: 'running',
      appVersion: 'test',
      appCommit: 'test',
    });
    await store.saveCheckpoint('slow', { step: 1, files: { 'w.bin': new Uint8Array(4096).fill(7) }, meta: { step: 1 } });
  } else await importLogs(store, [log!]);
  await store.close();
} catch (e) {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exitCode = 1;
}

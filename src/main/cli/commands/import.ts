/** `arlarena import FILE` — verify a bundle and add its run to the data directory. */
import { readFile } from 'node:fs/promises';
import { importBundle } from '../../bundles/importBundle';
import { BundleError } from '../../bundles/manifest';
import { UsageError, type CliCommand, parseCommandArgs } from '../types';
import { openStore } from './runs';

const USAGE = `Usage: arlarena import FILE [--json]
  Verifies the bundle (every SHA-256, sizes, schema version, safe paths, no unlisted files) before anything is
  written, then adds the run atomically (a new id if it already exists). A damaged bundle is refused with the
  reason and nothing is imported.`;

const command: CliCommand = {
  summary: 'import a reproducibility bundle (verified; refused if damaged)',
  usage: USAGE,
  async run(args, ctx) {
    const parsed = parseCommandArgs({ args, allowPositionals: true, strict: true, options: { json: { type: 'boolean' } } });
    const { values: v, positionals: pos } = parsed;
    if (pos.length !== 1) throw new UsageError('expected exactly one FILE');
    let data: Uint8Array;
    try {
      data = new Uint8Array(await readFile(pos[0]));
    } catch (e) {
      ctx.stderr.write(`arlarena import: cannot read ${pos[0]}: ${(e as Error).message}\n`);
      return 1;
    }
    const store = await openStore(ctx);
    try {
      const r = await importBundle(store, data);
      ctx.stdout.write(v.json ? `${JSON.stringify(r)}\n` : `imported "${r.name}" as run ${r.runId}${r.runId !== r.originalId ? ` (id ${r.originalId} was taken)` : ''}\n`);
      return 0;
    } catch (e) {
      if (e instanceof BundleError) {
        ctx.stderr.write(`arlarena import: refused ${pos[0]}: ${e.message}\n`);
        return 1;
      }
      throw e;
    } finally {
      await store.close();
    }
  },
};

export default command;

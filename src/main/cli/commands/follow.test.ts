/**
 * `arlarena follow`'s closing line says why a follow ended stopped: a log that never gave a step ended as
 * "stopped at step 0 (0 steps stored)" with the reason only in the run's record.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { testCliContext } from '../../testing/testContext';
import follow from './follow';

const dir = mkdtempSync(join(tmpdir(), 'arl-follow-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('arlarena follow', () => {
  it('ends a follow that read no step with the reason, in the text and the JSON', async () => {
    const log = join(dir, 'empty.log');
    writeFileSync(log, '');
    const c = testCliContext(join(dir, 'data'));
    expect(await follow.run([log, '--until-idle', '0.3', '--poll-ms', '50'], c.ctx)).toBe(1);
    const last = c.out().trim().split('\n').at(-1)!;
    expect(last).toMatch(
      new RegExp(
        `^stopped: run \\S+ stopped at step 0 \\(0 steps stored\\) — no step was read from ${log.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} while it was followed`,
      ),
    );

    const j = testCliContext(join(dir, 'data-json'));
    expect(await follow.run([log, '--until-idle', '0.3', '--poll-ms', '50', '--json'], j.ctx)).toBe(1);
    const stopped = JSON.parse(j.out().trim().split('\n').at(-1)!) as { event: string; status: string; error?: string };
    expect(stopped).toMatchObject({ event: 'stopped', status: 'stopped', error: expect.stringMatching(/^no step was read from /) });
  });
});

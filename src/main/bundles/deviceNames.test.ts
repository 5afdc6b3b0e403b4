/**
 * Windows device names are refused as bundle entries, as other unsafe names are (hardening round three: `CON`,
 * `source/NUL` and `aux.txt` were accepted, and `source/NUL` was written to disk), whether only in the zip or
 * also listed in its manifest; ordinary names that merely start like one stay accepted.
 */
import { zipSync, strToU8 } from 'fflate';
import { describe, expect, it } from 'vitest';
import { verifyBundle } from './importBundle';
import { checkEntryPath } from './manifest';

describe('Windows device names in bundles', () => {
  it('checkEntryPath refuses each device name, any case, with or without an extension, in any segment', () => {
    for (const p of ['CON', 'source/NUL', 'aux.txt', 'checkpoint/step-1/com1.bin', 'Lpt9', 'prn.tar.gz', 'source/COM\u00b9']) {
      expect(checkEntryPath(p), p).toMatch(/is a Windows device name/);
    }
    for (const p of ['console.log', 'source/0-nul_run.log', 'null', 'com10', 'auxiliary/run.json', 'source/0-CON.log']) {
      expect(checkEntryPath(p), p).toBeNull();
    }
  });

  it('a bundle holding source/NUL is refused before anything is read from it', () => {
    const manifest = { format: 'arlarena-bundle', schemaVersion: 1, files: { 'source/NUL': { sha256: '0'.repeat(64), bytes: 1 } } };
    for (const name of ['source/NUL', 'CON', 'aux.txt']) {
      const zip = zipSync({ 'manifest.json': strToU8(JSON.stringify(manifest)), [name]: strToU8('x') });
      expect(() => verifyBundle(zip)).toThrow(
        new RegExp(`unsafe entry "${name.replace('/', '\\/').replace('.', '\\.')}" in the bundle \\("[^"]+" is a Windows device name\\)`),
      );
    }
  });
});

/**
 * docs/config-reference.md is generated from the config's field docs (scripts/gen-config-doc.ts). This fails
 * when a field, default, doc comment or preset changed and the committed page was not regenerated.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOC_PATH, renderConfigReference } from '../../scripts/gen-config-doc';
import { FIELD_TABLE, PRESETS } from '../../src/core/config/index';

describe('docs/config-reference.md', () => {
  const rendered = renderConfigReference();

  it('documents every config field and preset, with defaults and absentMeans', () => {
    for (const f of FIELD_TABLE) {
      const row = rendered.split('\n').find((l) => l.startsWith(`| \`${f.path}\` |`));
      expect(row, f.path).toBeDefined();
      expect(row).toContain(`\`${String(f.default)}\``);
      if (f.absentMeans) expect(row).toContain(f.absentMeans.replace(/\|/g, '\\|'));
    }
    for (const p of PRESETS) expect(rendered).toContain(`| **${p.name}**`);
  });

  it('is committed up to date (run `npm run docs:config` when this fails)', () => {
    const committed = readFileSync(CONFIG_DOC_PATH, 'utf8');
    // toBe, not a boolean: the diff shows which line is stale.
    expect(committed, 'docs/config-reference.md is stale: run `npm run docs:config` and commit it').toBe(rendered);
  });
});

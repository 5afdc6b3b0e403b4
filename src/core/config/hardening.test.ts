/**
 * Values that vanish or overflow in float32 (optim.eps = 1e-300 is 0 to the trainer) and
 * setting names every JavaScript object has (constructor, toString, hasOwnProperty, valueOf,
 * __proto__) are refused with a message that names the field and the fix, at every door (--set, overrides,
 * a stored or imported config).
 */
import { describe, expect, it } from 'vitest';
import { parseSetArgs, resolveConfig, validateConfig } from './index';

const RESERVED = ['constructor', 'toString', 'hasOwnProperty', 'valueOf', '__proto__'];

describe('config hardening', () => {
  it('a value that is 0 or infinite in float32 is refused', () => {
    for (const [key, v] of [
      ['optim.eps', '1e-300'],
      ['optim.lr', '1e-50'],
      ['algorithm.advantage.epsilon', '1e-46'],
    ] as const) {
      const { issues } = parseSetArgs([`${key}=${v}`]);
      expect(issues.map((i) => i.message).join(), key).toMatch(new RegExp(`${key.replace(/\./g, '\\.')} = "${v}".*float32`));
      const r = resolveConfig('grpo', 'sokoban', { [key]: v });
      expect(r.config, key).toBeNull();
      expect(r.issues[0].field).toBe(key);
    }
    // The smallest normal float32 and zero (where a field allows it) still pass.
    expect(resolveConfig('grpo', 'sokoban', { 'optim.eps': 1.2e-38 }).config).not.toBeNull();
    expect(resolveConfig('grpo', 'sokoban', { 'algorithm.advantage.epsilon': 0 }).config).not.toBeNull();
    const stored = structuredClone(resolveConfig('grpo', 'sokoban').config) as unknown as { optim: { eps: number } };
    stored.optim.eps = 1e-300;
    expect(validateConfig(stored).map((i) => i.field)).toEqual(['optim.eps']);
  });

  it('setting names that exist on every object are refused, not stored', () => {
    for (const name of RESERVED) {
      const set = parseSetArgs([`env.settings.${name}=1`]);
      expect(set.issues.map((i) => i.message).join(), name).toMatch(
        new RegExp(`env\\.settings\\.${name.replace(/_/g, '_')}.*every JavaScript object`),
      );
      const r = resolveConfig('grpo', 'sokoban', { [`env.settings.${name}`]: 1 });
      expect(r.config, name).toBeNull();
      expect(r.issues.map((i) => i.message).join()).toMatch(/every JavaScript object/);
      expect(resolveConfig('grpo', 'sokoban', { [`optim.${name}`]: 1 }).config, `optim.${name}`).toBeNull();
    }
    // A stored/imported config carrying one as an own key of env.settings.
    const stored = structuredClone(resolveConfig('grpo', 'sokoban').config) as unknown as { env: { settings: Record<string, unknown> } };
    Object.defineProperty(stored.env.settings, 'constructor', { value: 1, enumerable: true });
    expect(
      validateConfig(stored)
        .map((i) => i.message)
        .join(),
    ).toMatch(/env\.settings\.constructor.*every JavaScript object/);
    const unknown = structuredClone(resolveConfig('grpo', 'sokoban').config) as unknown as { env: { settings: Record<string, unknown> } };
    unknown.env.settings.bogus = 3;
    expect(
      validateConfig(unknown)
        .map((i) => i.message)
        .join(),
    ).toMatch(/unknown setting "bogus"/);
  });
});

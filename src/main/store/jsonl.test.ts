import { describe, expect, it } from 'vitest';
import { decodeMetricRecord, encodeMetricRecord } from './jsonl';

describe('encodeMetricRecord', () => {
  it('writes exactly what JSON.stringify of { step, values } with spelled-out non-finite values would, and decodes back', () => {
    const values: Record<string, number> = {
      'actor/grad_norm': 1.25,
      'a "quoted" \\ key': -0,
      '0': 3,
      'timing_s/gen': 1e-7,
      big: 1.7976931348623157e308,
      'actor/pg_loss': NaN,
      up: Infinity,
      down: -Infinity,
      'ünïcode/ключ': 0.1 + 0.2,
    };
    const text = encodeMetricRecord({ step: 42, values });
    const spelled = Object.fromEntries(
      Object.entries(values).map(([k, v]) => [k, Number.isFinite(v) ? v : Number.isNaN(v) ? 'NaN' : v > 0 ? 'Infinity' : '-Infinity']),
    );
    expect(text).toBe(JSON.stringify({ step: 42, values: spelled }));
    const back = decodeMetricRecord(JSON.parse(text))!;
    expect(back.step).toBe(42);
    expect(Object.keys(back.values)).toEqual(Object.keys(values));
    for (const [k, v] of Object.entries(values)) expect(Object.is(back.values[k], v === 0 && Object.is(v, -0) ? 0 : v)).toBe(true);
    expect(encodeMetricRecord({ step: 0, values: {} })).toBe('{"step":0,"values":{}}');
  });

  it('an all-finite record (the JSON.stringify path) and one whose only non-finite value is its last key write the same key order and escaping', () => {
    const finite: Record<string, number> = {
      'actor/grad_norm': 1.25,
      'a "quoted" \\ key\n': -0,
      '7': 3,
      '0': 2,
      'timing_s/gen': 1e-7,
      big: 1.7976931348623157e308,
      'ünïcode/ключ': 0.1 + 0.2,
      f32: Math.fround(0.3),
    };
    const text = encodeMetricRecord({ step: 7, values: finite });
    // Hand-spelled: integer-like keys first in ascending order (as for…in and JSON.stringify both enumerate).
    expect(text).toBe(
      '{"step":7,"values":{"0":2,"7":3,"actor/grad_norm":1.25,"a \\"quoted\\" \\\\ key\\n":0,"timing_s/gen":1e-7,"big":1.7976931348623157e+308,"ünïcode/ключ":0.30000000000000004,"f32":0.30000001192092896}}',
    );
    const withNan = encodeMetricRecord({ step: 7, values: { ...finite, last: NaN } });
    expect(withNan).toBe(`${text.slice(0, -2)},"last":"NaN"}}`);
  });
});

describe('decodeMetricRecord', () => {
  it('decodes spelled-out non-finite values and null (NaN) in the parsed object itself, keeping key order', () => {
    const parsed = JSON.parse('{"step":3,"values":{"a":1,"val/success_rate":"NaN","up":"Infinity","down":"-Infinity","gone":null,"b":2}}');
    const rec = decodeMetricRecord(parsed)!;
    expect(rec.values).toBe(parsed.values);
    expect(Object.keys(rec.values)).toEqual(['a', 'val/success_rate', 'up', 'down', 'gone', 'b']);
    expect(rec.values['val/success_rate']).toBeNaN();
    expect(rec.values.up).toBe(Infinity);
    expect(rec.values.down).toBe(-Infinity);
    expect(rec.values.gone).toBeNaN();
  });

  it('drops values that are not numbers (a copy without them), keeps a key named __proto__ as a key, and rejects malformed lines', () => {
    const parsed = JSON.parse('{"step":1,"values":{"a":1,"note":"hello","__proto__":"NaN","flag":true,"c":"Infinity"}}');
    const rec = decodeMetricRecord(parsed)!;
    expect(Object.keys(rec.values)).toEqual(['a', '__proto__', 'c']);
    expect(Object.getPrototypeOf(rec.values)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(rec.values, '__proto__')?.value).toBeNaN();
    expect(rec.values.c).toBe(Infinity);
    for (const bad of ['{"step":1.5,"values":{}}', '{"step":"1","values":{}}', '{"step":1,"values":[1,2]}', '{"step":1}', '[1]', 'null']) {
      expect(decodeMetricRecord(JSON.parse(bad))).toBeUndefined();
    }
  });
});

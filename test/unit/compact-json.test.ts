import { describe, expect, it } from 'vitest';
import { compactJson } from '../../src/api/reward-configurations/compact-json.js';

describe('compactJson', () => {
  it('drops whitespace between tokens and keeps it inside strings', () => {
    const text =
      '[{"name" : "Two  words", "amount" : 0.10, "nested" : { "EUR" : {"betAmount" : 250.50} }},\n {"x" : []}]';
    expect(compactJson(text)).toBe(
      '[{"name":"Two  words","amount":0.10,"nested":{"EUR":{"betAmount":250.50}}},{"x":[]}]',
    );
  });

  it('keeps escaped quotes and backslashes inside strings intact', () => {
    const text = '{"a" : "say \\"hi there\\" \\\\ ok", "b" : 1}';
    const compact = compactJson(text);
    expect(compact).toBe('{"a":"say \\"hi there\\" \\\\ ok","b":1}');
    expect(JSON.parse(compact)).toEqual(JSON.parse(text));
  });

  it('keeps numbers digit for digit (no rounding through a double)', () => {
    expect(compactJson('{"v" : 12345678901234567890.123456789}')).toBe('{"v":12345678901234567890.123456789}');
  });
});

import { expect, it } from 'vitest';
import { errorHeadline, fieldLabel } from './errorText';

it('names what failed in words, not as the API method', () => {
  expect(errorHeadline('sessions.start')).toBe('Could not start the run');
  expect(errorHeadline('follow.start')).toBe('Could not follow the log');
  expect(errorHeadline('cluster.add')).toBe('Could not complete cluster.add');
  expect(fieldLabel('on')).toBe('on (where it trains)');
  expect(fieldLabel('path')).toBe('path');
});

import { expect, it } from 'vitest';
import { apiMethods } from '../../shared/api';
import { errorHeadline, fieldLabel } from './errorText';

it('names what failed in words, not as the API method', () => {
  expect(errorHeadline('sessions.start')).toBe('Could not start the run');
  expect(errorHeadline('follow.start')).toBe('Could not follow the log');
  expect(errorHeadline('cluster.add')).toBe('Could not complete cluster.add');
  expect(errorHeadline('remotes.add')).toBe('Could not add the cluster');
  expect(fieldLabel('on')).toBe('on (where it trains)');
  expect(fieldLabel('path')).toBe('path');
});

it("words every method of the API contract: no toast headline falls back to the method's name", () => {
  const bare = Object.keys(apiMethods).filter((m) => errorHeadline(m).includes(m));
  expect(bare).toEqual([]);
});

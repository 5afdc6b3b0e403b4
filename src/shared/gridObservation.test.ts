import { describe, expect, it } from 'vitest';
import { parseGridObservation } from './gridObservation';

const SOKO = { '#': 'wall', _: 'floor', O: 'target', X: 'box', P: 'player', '√': 'box on target', S: 'player on target' };

describe('parseGridObservation', () => {
  it('reads a spaced lab grid row by row', () => {
    expect(parseGridObservation('# # # #\n# P X #\n# _ O #\n# # # #', SOKO)).toEqual([
      ['#', '#', '#', '#'],
      ['#', 'P', 'X', '#'],
      ['#', '_', 'O', '#'],
      ['#', '#', '#', '#'],
    ]);
  });

  it('reads unspaced rows, with a multi-byte symbol as one cell', () => {
    expect(parseGridObservation('#####\n#P√_#\n#####', SOKO)).toEqual([
      ['#', '#', '#', '#', '#'],
      ['#', 'P', '√', '_', '#'],
      ['#', '#', '#', '#', '#'],
    ]);
  });

  it('skips text around the grid (a task line, a history) and stops at the first block', () => {
    const text = 'turn 3 . push every box onto a target .\n# # #\n# P #\n# # #\nprevious action : up\n# #\n# #';
    expect(parseGridObservation(text, SOKO)).toEqual([
      ['#', '#', '#'],
      ['#', 'P', '#'],
      ['#', '#', '#'],
    ]);
  });

  it('a row of another width ends the block rather than joining a ragged grid', () => {
    expect(parseGridObservation('# #\n# # # #\n# # # #', SOKO)).toEqual([
      ['#', '#', '#', '#'],
      ['#', '#', '#', '#'],
    ]);
  });

  it('returns null for text worlds, unknown symbols, a single row and a missing legend', () => {
    expect(parseGridObservation('you are in the kitchen . on the counter 1 you see a mug 1 .', SOKO)).toBeNull();
    expect(parseGridObservation('# Z #\n# # #', SOKO)).toBeNull();
    expect(parseGridObservation('# P #', SOKO)).toBeNull();
    expect(parseGridObservation('# P #\n# # #', null)).toBeNull();
    expect(parseGridObservation('# P #\n# # #', {})).toBeNull();
  });
});

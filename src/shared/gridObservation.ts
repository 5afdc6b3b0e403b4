/**
 * Reads the grid out of a grid world's text observation, so the trajectory viewer can draw it as a picture.
 *
 * Lab grid worlds (src/core/envs/grid.ts gridText) write one row per line with the cell symbols joined by single
 * spaces (`# _ P #`); logs from other tools often write the row unspaced (`#_P#`). Either is read here. Only
 * stored text exists for old runs and imports (the trainer keeps no picture per turn), hence parsing, not a
 * stored picture. The env's catalog legend (EnvInfo.gridLegend) says which symbols are cells.
 */

/** The symbols of one line, or null when it is not a row of legend cells (fewer than two cells counts as not). */
function rowOf(line: string, symbols: ReadonlySet<string>): string[] | null {
  const trimmed = line.trim();
  if (trimmed === '') return null;
  const spaced = trimmed.split(/ +/);
  // Spread by code point, not UTF-16 unit: '√' is one cell either way, but astral symbols would split in two.
  const cells = spaced.length > 1 ? spaced : [...trimmed];
  if (cells.length < 2) return null;
  return cells.every((c) => symbols.has(c)) ? cells : null;
}

/**
 * The first block of at least two consecutive lines that are rows of legend symbols, all of one width; null when
 * the text holds none (a text world, or an observation that is not a grid). Lines before and after the block
 * (a task line, a history) are ignored.
 */
export function parseGridObservation(text: string, legend: Readonly<Record<string, string>> | null | undefined): string[][] | null {
  if (!legend) return null;
  const symbols = new Set(Object.keys(legend));
  if (symbols.size === 0) return null;
  let block: string[][] = [];
  const done = (): string[][] | null => (block.length >= 2 ? block : null);
  for (const line of text.split(/\r?\n/)) {
    const row = rowOf(line, symbols);
    if (row && (block.length === 0 || row.length === block[0].length)) {
      block.push(row);
      continue;
    }
    const found = done();
    if (found) return found;
    // A row of another width starts a new block (e.g. two grids one after the other).
    block = row ? [row] : [];
  }
  return done();
}

/** Helpers shared by the grid worlds (Sokoban, FrozenLake): moves, text grids, pictures. */
import type { GridPicture } from './types';

export const DIRECTIONS = ['up', 'down', 'left', 'right'] as const;
export type Direction = (typeof DIRECTIONS)[number];
/** Keywords the grid parsers look for (spec §3.3: up / down / left / right / still). */
export const GRID_KEYWORDS = ['up', 'down', 'left', 'right', 'still'] as const;

export const DR = [-1, 1, 0, 0];
export const DC = [0, 0, -1, 1];

export function dirIndex(a: string): number {
  switch (a) {
    case 'up':
      return 0;
    case 'down':
      return 1;
    case 'left':
      return 2;
    case 'right':
      return 3;
    default:
      return -1;
  }
}

/** Rows of symbols joined by single spaces, rows joined by newlines: compact and word-tokenizer friendly. */
export function gridText(symbols: string[], width: number): string {
  let out = '';
  for (let i = 0; i < symbols.length; i++) {
    if (i > 0) out += i % width === 0 ? '\n' : ' ';
    out += symbols[i];
  }
  return out;
}

export function gridPicture(symbols: string[], width: number, legend: Record<string, string>): GridPicture {
  const cells: string[][] = [];
  for (let r = 0; r * width < symbols.length; r++) cells.push(symbols.slice(r * width, r * width + width));
  return { kind: 'grid', cells, legend: { ...legend } };
}

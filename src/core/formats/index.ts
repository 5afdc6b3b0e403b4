/**
 * The registry of external-log formats: detection from content, one incremental parser per format,
 * and the metric mapping table. main (src/main/imports) reads files and calls these; nothing here touches
 * files.
 */
import { createCsvParser, createWandbCsvParser } from './csv';
import { createDeepspeedChatParser } from './deepspeedChat';
import { createJsonlParser, createVerlJsonlParser } from './jsonl';
import { createTensorboardParser } from './tensorboard';
import { createTrainerStateParser, createTrlConsoleParser } from './trl';
import { TRACKER_STORE_FORMATS, type ByteParser, type LineParser, type LogFormat, type StepSink, type TrackerStoreFormat } from './types';
import { createWandbParser } from './wandb';
import { createVerlConsoleParser } from './verlConsole';

export { describeFormats, detectFormat, FORMAT_DESCRIPTIONS, HEAD_BYTES, isZip } from './detect';
export { guessFramework, mapSourceStep, createStepMapper, MAPPING_TABLE, type MappedStep, type MappingRule } from './mapping';
export { parseTrainerState } from './trl';
export { createWandbParser, type WandbByteParser } from './wandb';
export { isWandbLog, WandbLogWriter } from './wandbLog';
export * from './types';

const LINE_PARSERS: Readonly<Record<Exclude<LogFormat, 'tensorboard' | 'wandb' | TrackerStoreFormat>, (onStep: StepSink) => LineParser>> = {
  'verl-console': createVerlConsoleParser,
  'verl-jsonl': createVerlJsonlParser,
  jsonl: createJsonlParser,
  'trl-console': createTrlConsoleParser,
  'trainer-state': createTrainerStateParser,
  'wandb-csv': createWandbCsvParser,
  csv: createCsvParser,
  'deepspeed-chat': createDeepspeedChatParser,
};

/** True for formats fed as bytes rather than lines. */
export function isBinaryFormat(format: LogFormat): boolean {
  return format === 'tensorboard' || format === 'wandb';
}

function isStore(format: LogFormat): format is TrackerStoreFormat {
  return (TRACKER_STORE_FORMATS as readonly string[]).includes(format);
}

/** The line parser of a text format; throws for a binary format (use createByteParser) or an unknown name. */
export function createLineParser(format: LogFormat, onStep: StepSink): LineParser {
  if (format === 'tensorboard' || format === 'wandb')
    throw new Error(`${format} is a binary format: use createByteParser, not createLineParser`);
  if (isStore(format)) throw new Error(`${format} is a tracker store read by main (src/main/imports/trackerStores.ts), not a line format`);
  const make = LINE_PARSERS[format];
  if (!make) throw new Error(`unknown log format "${String(format)}"; known: ${Object.keys(LINE_PARSERS).join(', ')}, tensorboard, wandb`);
  return make(onStep);
}

// Binary formats (owned by the TensorBoard parser's developer: src/core/formats/tensorboard.ts).
/** The byte parser of a binary format; throws for a text format (use createLineParser). */
export function createByteParser(format: LogFormat, onStep: StepSink): ByteParser {
  if (format === 'tensorboard') return createTensorboardParser(onStep);
  if (format === 'wandb') return createWandbParser(onStep);
  throw new Error(`${String(format)} is a text format: use createLineParser, not createByteParser`);
}

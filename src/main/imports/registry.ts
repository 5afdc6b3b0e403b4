/**
 * The parsers the importer uses, behind one interface: the pure registry in src/core/formats (detection from
 * content, one incremental parser per format, the metric mapping table) plus what main needs to know about a
 * format (binary or text). Tests can hand the importer a registry of their own.
 */
import { LOG_FORMATS, type ByteParser, type Framework, type LineParser, type LogFormat, type StepSink } from '../../core/formats/types';
import {
  createByteParser,
  createLineParser,
  describeFormats,
  detectFormat,
  guessFramework,
  isBinaryFormat,
  mapSourceStep,
} from '../../core/formats/index';

export interface MappedValues {
  readonly values: Record<string, number>;
  /** catalog key → the source key that fed it. */
  readonly keyMap: Record<string, string>;
}

export interface FormatRegistry {
  /** Every format the registry can parse (what "formats tried" lists). */
  readonly formats: readonly LogFormat[];
  /** From content (the first ~64 KB), never the file name; null when no format fits. */
  detect(head: Uint8Array): { format: LogFormat; why: string } | null;
  /** One line per format, for the "no known format" refusal. */
  describe(): string;
  /** True for formats fed as bytes (TensorBoard event files, W&B .wandb logs). */
  isBinary(format: LogFormat): boolean;
  lineParser(format: LogFormat, onStep: StepSink): LineParser;
  byteParser(format: LogFormat, onStep: StepSink): ByteParser;
  map(values: Readonly<Record<string, number>>, framework: Framework): MappedValues;
  guessFramework(keys: readonly string[]): Framework;
}

export const defaultRegistry: FormatRegistry = {
  formats: LOG_FORMATS,
  detect: (head) => detectFormat(head),
  describe: () => describeFormats(),
  isBinary: (format) => isBinaryFormat(format),
  lineParser: (format, onStep) => createLineParser(format, onStep),
  byteParser: (format, onStep) => createByteParser(format, onStep),
  map: (values, framework) => mapSourceStep(values, framework),
  guessFramework: (keys) => guessFramework(keys),
};

/**
 * The few TensorBoard protobuf messages the event-file reader and writer need, as a protobufjs JSON descriptor.
 *
 * Field numbers and types are facts from tensorboard's own .proto files (tensorboard/compat/proto/event.proto,
 * summary.proto, tensor.proto, tensor_shape.proto, types.proto). Only the fields this lab reads or writes are
 * declared; protobufjs skips the others by wire type. Payloads the lab ignores (images, audio, histograms,
 * graphs, run metadata) are declared as `bytes` — wire-compatible with their message types.
 *
 * The exporter encodes whole Events with EventType. The parser walks Event / Summary / Value itself with
 * protobufjs's Reader (see tensorboard.ts) and decodes only the nested TensorProto, SummaryMetadata and
 * SessionLog messages with these types.
 */
import protobuf from 'protobufjs/light.js';

/** tensorboard DataType values (types.proto) for the dtypes a scalar tensor summary can carry. */
export const DT = {
  FLOAT: 1,
  DOUBLE: 2,
  INT32: 3,
  UINT8: 4,
  INT16: 5,
  INT8: 6,
  STRING: 7,
  INT64: 9,
  BOOL: 10,
  BFLOAT16: 14,
  UINT16: 17,
  HALF: 19,
  UINT32: 22,
  UINT64: 23,
} as const;

const descriptor = {
  nested: {
    tensorboard: {
      nested: {
        Event: {
          oneofs: {
            what: { oneof: ['fileVersion', 'graphDef', 'summary', 'logMessage', 'sessionLog', 'taggedRunMetadata', 'metaGraphDef'] },
          },
          fields: {
            wallTime: { type: 'double', id: 1 },
            step: { type: 'int64', id: 2 },
            fileVersion: { type: 'string', id: 3 },
            graphDef: { type: 'bytes', id: 4 },
            summary: { type: 'Summary', id: 5 },
            logMessage: { type: 'bytes', id: 6 },
            sessionLog: { type: 'SessionLog', id: 7 },
            taggedRunMetadata: { type: 'bytes', id: 8 },
            metaGraphDef: { type: 'bytes', id: 9 },
          },
        },
        SessionLog: { fields: { status: { type: 'int32', id: 1 } } },
        Summary: {
          fields: { value: { rule: 'repeated', type: 'Value', id: 1 } },
          nested: {
            Value: {
              oneofs: { value: { oneof: ['simpleValue', 'obsoleteOldStyleHistogram', 'image', 'histo', 'audio', 'tensor'] } },
              fields: {
                tag: { type: 'string', id: 1 },
                simpleValue: { type: 'float', id: 2 },
                obsoleteOldStyleHistogram: { type: 'bytes', id: 3 },
                image: { type: 'bytes', id: 4 },
                histo: { type: 'bytes', id: 5 },
                audio: { type: 'bytes', id: 6 },
                tensor: { type: 'TensorProto', id: 8 },
                metadata: { type: 'SummaryMetadata', id: 9 },
              },
            },
          },
        },
        SummaryMetadata: {
          fields: { pluginData: { type: 'PluginData', id: 1 } },
          nested: { PluginData: { fields: { pluginName: { type: 'string', id: 1 } } } },
        },
        TensorProto: {
          fields: {
            dtype: { type: 'int32', id: 1 },
            tensorShape: { type: 'TensorShapeProto', id: 2 },
            tensorContent: { type: 'bytes', id: 4 },
            floatVal: { rule: 'repeated', type: 'float', id: 5 },
            doubleVal: { rule: 'repeated', type: 'double', id: 6 },
            intVal: { rule: 'repeated', type: 'int32', id: 7 },
            stringVal: { rule: 'repeated', type: 'bytes', id: 8 },
            int64Val: { rule: 'repeated', type: 'int64', id: 10 },
            boolVal: { rule: 'repeated', type: 'bool', id: 11 },
            halfVal: { rule: 'repeated', type: 'int32', id: 13 },
            uint32Val: { rule: 'repeated', type: 'uint32', id: 16 },
            uint64Val: { rule: 'repeated', type: 'uint64', id: 17 },
          },
        },
        TensorShapeProto: {
          fields: { dim: { rule: 'repeated', type: 'Dim', id: 2 }, unknownRank: { type: 'bool', id: 3 } },
          nested: { Dim: { fields: { size: { type: 'int64', id: 1 } } } },
        },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);
export const EventType = root.lookupType('tensorboard.Event');
export const TensorType = root.lookupType('tensorboard.TensorProto');
export const SummaryMetadataType = root.lookupType('tensorboard.SummaryMetadata');
export const SessionLogType = root.lookupType('tensorboard.SessionLog');
/** protobufjs's wire reader (varints, fixed-width numbers, UTF-8 strings, skipping unknown fields). */
export const Reader = protobuf.Reader;

/** An int64 as protobufjs hands it out: a number, or a Long when the `long` package is installed. */
export type Int64 = number | { toNumber(): number };

export interface TensorMsg {
  dtype: number;
  tensorShape?: { dim: { size: Int64 }[]; unknownRank?: boolean } | null;
  tensorContent: Uint8Array;
  floatVal: number[];
  doubleVal: number[];
  intVal: number[];
  stringVal: Uint8Array[];
  int64Val: Int64[];
  boolVal: boolean[];
  halfVal: number[];
  uint32Val: number[];
  uint64Val: Int64[];
}

export interface MetadataMsg {
  pluginData?: { pluginName: string } | null;
}

export function int64ToNumber(v: Int64): number {
  return typeof v === 'number' ? v : v.toNumber();
}

export const utf8 = protobuf.util.utf8;

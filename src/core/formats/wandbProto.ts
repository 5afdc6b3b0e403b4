/**
 * The few W&B internal protobuf messages the `.wandb` reader and writer need, as a protobufjs JSON descriptor.
 *
 * Field numbers are facts from wandb's own schema (wandb/proto/wandb_internal.proto, package wandb_internal; checked
 * against the records wandb 0.31's wandb-core writes). Only the fields this lab reads or writes are declared;
 * protobufjs skips every other field by its wire type, so output, stats, telemetry, files, artifacts and requests
 * decode to an empty Record.
 */
import protobuf from 'protobufjs/light.js';

const item = {
  fields: {
    key: { type: 'string', id: 1 },
    nestedKey: { rule: 'repeated', type: 'string', id: 2 },
    valueJson: { type: 'string', id: 16 },
  },
};

const descriptor = {
  nested: {
    wandb_internal: {
      nested: {
        Record: {
          oneofs: { recordType: { oneof: ['history', 'summary', 'config', 'run', 'exit', 'final', 'header', 'footer'] } },
          fields: {
            num: { type: 'int64', id: 1 },
            history: { type: 'HistoryRecord', id: 2 },
            summary: { type: 'SummaryRecord', id: 3 },
            config: { type: 'ConfigRecord', id: 5 },
            run: { type: 'RunRecord', id: 17 },
            exit: { type: 'RunExitRecord', id: 18 },
            final: { type: 'Empty', id: 20 },
            header: { type: 'HeaderRecord', id: 21 },
            footer: { type: 'Empty', id: 22 },
          },
        },
        Empty: { fields: {} },
        HeaderRecord: { fields: { versionInfo: { type: 'VersionInfo', id: 1 } } },
        VersionInfo: { fields: { producer: { type: 'string', id: 1 }, minConsumer: { type: 'string', id: 2 } } },
        HistoryRecord: { fields: { item: { rule: 'repeated', type: 'Item', id: 1 }, step: { type: 'HistoryStep', id: 2 } } },
        HistoryStep: { fields: { num: { type: 'int64', id: 1 } } },
        Item: item,
        SummaryRecord: { fields: { update: { rule: 'repeated', type: 'Item', id: 1 }, remove: { rule: 'repeated', type: 'Item', id: 2 } } },
        ConfigRecord: { fields: { update: { rule: 'repeated', type: 'Item', id: 1 }, remove: { rule: 'repeated', type: 'Item', id: 2 } } },
        RunRecord: {
          fields: {
            runId: { type: 'string', id: 1 },
            entity: { type: 'string', id: 2 },
            project: { type: 'string', id: 3 },
            config: { type: 'ConfigRecord', id: 4 },
            runGroup: { type: 'string', id: 6 },
            jobType: { type: 'string', id: 7 },
            displayName: { type: 'string', id: 8 },
            notes: { type: 'string', id: 9 },
            tags: { rule: 'repeated', type: 'string', id: 10 },
            host: { type: 'string', id: 13 },
            startingStep: { type: 'int64', id: 14 },
            startTime: { type: 'Timestamp', id: 17 },
            resumed: { type: 'bool', id: 18 },
          },
        },
        Timestamp: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
        RunExitRecord: { fields: { exitCode: { type: 'int32', id: 1 }, runtime: { type: 'int32', id: 2 } } },
      },
    },
  },
};

const root = protobuf.Root.fromJSON(descriptor);
export const WandbRecordType = root.lookupType('wandb_internal.Record');
/** protobufjs's wire reader (the history and summary walkers read items with it directly). */
export const Reader = protobuf.Reader;

/** An int64 as protobufjs hands it out: a number, or a Long when the `long` package is installed. */
export type Int64 = number | { toNumber(): number };

export function int64(v: Int64 | null | undefined): number {
  if (v === null || v === undefined) return 0;
  return typeof v === 'number' ? v : v.toNumber();
}

export interface WandbItem {
  key?: string;
  nestedKey?: string[];
  valueJson?: string;
}

export interface WandbRecordMsg {
  num?: Int64;
  history?: { item?: WandbItem[]; step?: { num?: Int64 } | null } | null;
  summary?: { update?: WandbItem[]; remove?: WandbItem[] } | null;
  config?: { update?: WandbItem[]; remove?: WandbItem[] } | null;
  run?: {
    runId?: string;
    entity?: string;
    project?: string;
    config?: { update?: WandbItem[]; remove?: WandbItem[] } | null;
    runGroup?: string;
    jobType?: string;
    displayName?: string;
    notes?: string;
    tags?: string[];
    host?: string;
    startingStep?: Int64;
    startTime?: { seconds?: Int64; nanos?: number } | null;
    resumed?: boolean;
  } | null;
  exit?: { exitCode?: number; runtime?: number } | null;
  final?: object | null;
  header?: { versionInfo?: { producer?: string; minConsumer?: string } | null } | null;
  footer?: object | null;
}

export function decodeWandbRecord(bytes: Uint8Array): WandbRecordMsg {
  return WandbRecordType.decode(bytes) as unknown as WandbRecordMsg;
}

export function encodeWandbRecord(msg: WandbRecordMsg): Uint8Array {
  return WandbRecordType.encode(WandbRecordType.fromObject(msg as Record<string, unknown>)).finish();
}

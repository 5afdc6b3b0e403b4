import { describe, expect, it } from 'vitest';
import type { ModelInspection } from '../../shared/models';
import { DEFAULT_HF_FORM, HF_RUN_FIELDS, fmtMem, fmtParams, inspectRequest, requestKey, startGate, startOverrides } from './hfModel';

const run = { preset: 'sampo', env: 'sokoban' };

function inspection(over: Partial<ModelInspection> = {}): ModelInspection {
  return {
    dir: '/models/qwen3-tiny',
    architecture: 'Qwen3ForCausalLM',
    layers: 2,
    hiddenSize: 64,
    heads: 4,
    kvHeads: 2,
    headDim: 32,
    intermediateSize: 96,
    vocabSize: 448,
    maxPositions: 512,
    dtypes: ['F16'],
    weightFiles: 1,
    chatTemplate: true,
    params: 120_000,
    trainableParams: 9_000,
    lora: { rank: 16, alpha: 32, dropout: 0.05, targetModules: ['q_proj', 'v_proj'] },
    work: { rows: 8, seqLen: 512, responseTokens: 32, refCopy: false },
    memory: { weightsBytes: 480_000, trainingStateBytes: 144_000, activationBytes: 1_000_000, totalBytes: 1_624_000 },
    machine: { totalBytes: 16 * 2 ** 30, freeBytes: 8 * 2 ** 30, backend: 'wasm', budgetBytes: 0.8 * 2 ** 32, limitedBy: 'wasm-heap' },
    fits: true,
    verdict: 'fits: needs …',
    ...over,
  };
}
const allFields = new Set<string>(HF_RUN_FIELDS);

describe('inspectRequest: the form as a models.inspect argument', () => {
  it("sends the path, the LoRA settings in the engine's target order and the run; rows and context only when typed", () => {
    expect(inspectRequest({ ...DEFAULT_HF_FORM, path: ' /models/q ', targets: ['v_proj', 'q_proj'] }, run)).toEqual({
      ok: true,
      value: { path: '/models/q', lora: { rank: 16, alpha: 32, dropout: 0.05, targetModules: ['q_proj', 'v_proj'] }, run },
    });
    expect(inspectRequest({ ...DEFAULT_HF_FORM, path: '/m', lora: false, rows: '4', context: '256' }, null)).toEqual({
      ok: true,
      value: { path: '/m', lora: null, rows: 4, seqLen: 256 },
    });
  });

  it("in the desktop app names the folder by the dialog's grant, never by the path it shows", () => {
    const grant = 'g'.repeat(24);
    expect(inspectRequest({ ...DEFAULT_HF_FORM, path: '/models/q', grant, lora: false }, null)).toEqual({
      ok: true,
      value: { grant, lora: null },
    });
    // Nothing chosen yet: the desktop app asks for its dialog, not a typed path.
    expect(inspectRequest(DEFAULT_HF_FORM, null, { desktop: true })).toMatchObject({
      ok: false,
      field: 'path',
      message: expect.stringMatching(/with "Choose folder…"/),
    });
    // A grant alone is enough (the path is only shown).
    expect(inspectRequest({ ...DEFAULT_HF_FORM, grant, lora: false }, null)).toMatchObject({ ok: true, value: { grant } });
  });

  it('names the first field to fix, with the value typed and an example', () => {
    expect(inspectRequest(DEFAULT_HF_FORM, run)).toMatchObject({ ok: false, field: 'path' });
    const f = { ...DEFAULT_HF_FORM, path: '/m' };
    expect(inspectRequest({ ...f, rows: '1.5' }, run)).toEqual({
      ok: false,
      field: 'rows',
      message: `Rows is a whole number from 1 to 65536, e.g. 1 (got "1.5"); leave it empty for the run's.`,
    });
    expect(inspectRequest({ ...f, context: 'long' }, run)).toMatchObject({ ok: false, field: 'context' });
    expect(inspectRequest({ ...f, rank: '0' }, run)).toMatchObject({
      ok: false,
      field: 'rank',
      message: expect.stringContaining('got "0"'),
    });
    expect(inspectRequest({ ...f, alpha: 'x' }, run)).toMatchObject({ ok: false, field: 'alpha' });
    expect(inspectRequest({ ...f, dropout: '1' }, run)).toMatchObject({ ok: false, field: 'dropout' });
    expect(inspectRequest({ ...f, targets: [] }, run)).toMatchObject({ ok: false, field: 'targets' });
    // Without LoRA its fields are not read.
    expect(inspectRequest({ ...f, lora: false, rank: 'x' }, run).ok).toBe(true);
  });
});

describe('startGate: Start runs only a checked folder whose estimate fits, on a trainer that has the fields', () => {
  const ok = inspectRequest({ ...DEFAULT_HF_FORM, path: '/m' }, run);
  const base = { request: ok, current: true, checking: false, error: null, inspection: inspection(), configFields: allFields };

  it("sends the folder and LoRA settings, over the user's overrides, and the settings an HF run needs under them", () => {
    const g = startGate(base);
    expect(g).toEqual({
      allowed: true,
      defaults: {
        'compute.logProbEngine': 'trainer',
        'compute.refLogProbEngine': 'trainer',
        'compute.workers': 1,
        'warmStart.source': 'none',
        'model.maxSeqLen': 512,
      },
      model: {
        'model.source': 'hf:/models/qwen3-tiny',
        'model.lora.rank': 16,
        'model.lora.alpha': 32,
        'model.lora.dropout': 0.05,
        'model.lora.targets': 'q_proj+v_proj',
      },
      grant: null,
    });
    // The desktop app: the dialog's grant rides along, for sessions.start's modelGrant.
    expect(startGate({ ...base, grant: 'g'.repeat(24) })).toMatchObject({ allowed: true, grant: 'g'.repeat(24) });
    // The user's Customise overrides win over the defaults, never over the model.
    expect(startOverrides(g, { 'model.maxSeqLen': 256, 'model.source': 'lab', 'optim.lr': 1e-5 })).toMatchObject({
      'model.maxSeqLen': 256,
      'model.source': 'hf:/models/qwen3-tiny',
      'optim.lr': 1e-5,
      'compute.workers': 1,
    });
    // Full fine-tuning: rank 0, the other LoRA fields left at their defaults.
    const full = startGate({ ...base, inspection: inspection({ lora: null }) });
    expect(full.allowed && full.model).toEqual({ 'model.source': 'hf:/models/qwen3-tiny', 'model.lora.rank': 0 });
  });

  it('refuses a run that does not fit, with the estimate in the sentence', () => {
    const verdict =
      "does not fit: needs weights 0.00 GiB + … = 75.10 GiB, over 3.20 GiB (80 % of tfjs-wasm's 4 GiB heap); use fewer rows per chunk";
    const g = startGate({ ...base, inspection: inspection({ fits: false, verdict }) });
    expect(g).toEqual({ allowed: false, reason: `Not started: the run ${verdict}` });
    expect(startOverrides(g, { a: 1 })).toEqual({ a: 1 });
  });

  it('refuses before a check, during one, after a failed one, and on an answer to an older form', () => {
    expect(startGate({ ...base, inspection: null })).toEqual({ allowed: false, reason: 'The model folder has not been checked yet.' });
    expect(startGate({ ...base, checking: true })).toMatchObject({ allowed: false, reason: expect.stringMatching(/^Still checking/) });
    expect(startGate({ ...base, current: false })).toMatchObject({ allowed: false, reason: expect.stringMatching(/^Still checking/) });
    expect(startGate({ ...base, inspection: null, error: '/m has no config.json' })).toEqual({
      allowed: false,
      reason: 'The model folder cannot be used: /m has no config.json',
    });
    expect(startGate({ ...base, request: inspectRequest(DEFAULT_HF_FORM, run) })).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/^Give the model folder/),
    });
  });

  it("refuses, saying why, while the trainer's run config lacks the Hugging Face fields", () => {
    const g = startGate({ ...base, configFields: new Set(['model.size']) });
    expect(g.allowed).toBe(false);
    if (!g.allowed)
      expect(g.reason).toMatch(/cannot train a Hugging Face model yet \(its run config has no model\.source, model\.lora\.rank/);
  });

  it('keys a request by its content', () => {
    expect(requestKey({ a: 1 })).toBe(requestKey({ a: 1 }));
    expect(requestKey({ a: 1 })).not.toBe(requestKey({ a: 2 }));
  });
});

describe('formatting', () => {
  it('memory in GiB from 1 GiB, MiB below; parameters in k, M, B', () => {
    expect(fmtMem(1.5 * 2 ** 30)).toBe('1.50 GiB');
    expect(fmtMem(3 * 2 ** 20)).toBe('3.0 MiB');
    expect(fmtParams(494_032_768)).toBe('494.0 M');
    expect(fmtParams(1_230_000_000)).toBe('1.23 B');
    expect(fmtParams(86_000)).toBe('86.0 k');
    expect(fmtParams(12)).toBe('12');
  });
});

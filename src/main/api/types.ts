/**
 * Main-side types for the API router: what a handler receives and must return.
 *
 * A handler gets its input already parsed by the contract's zod schema (so defaults and trims are applied and
 * the type is the schema's output type) plus a per-call context, and returns a `Result` — or throws
 * `ApiFailure` for an expected error, or anything else for a bug (the router turns it into INTERNAL).
 */
import type { z } from 'zod';
import type { ApiMethodName, ApiOutput, apiMethods } from '../../shared/api';
import type { Result } from '../../shared/result';

/** The parsed (schema output) input of a method. */
export type ParsedInput<M extends ApiMethodName> = z.output<(typeof apiMethods)[M]['input']>;

/** Who is calling: the transport, and transport-specific capabilities. */
export interface CallContext {
  readonly transport: 'electron' | 'browser';
  /**
   * Browser mode only: make a file on the main side downloadable by the page and return its (token-protected)
   * URL, e.g. for `bundles.export`. `null` in Electron, where the file path itself is the answer.
   */
  readonly publishDownload: ((filePath: string, fileName: string) => string) | null;
  /**
   * Browser mode only: the folders a call may name files in by path (`arlarena serve --allow-dir DIR`; none by
   * default, when a page imports only what the user uploads). Absent in Electron, which uses `pathGrants`.
   */
  readonly importRoots?: readonly string[];
  /**
   * Electron only: files come from the native dialog the main side opens (`imports.pick`), named afterwards by the
   * opaque grant it answered (electron/pathGrants.ts). With it, a call that names a path itself is refused.
   */
  readonly pathGrants?: PathGrants;
}

/** What the native dialog is opened for: one file or one folder, to import, to follow, or a model folder to train. */
export interface PickRequest {
  readonly kind: 'file' | 'folder';
  readonly purpose: 'import' | 'follow' | 'model';
}

/** A dialog's answer: the grant that names the chosen path in later calls, and the path itself to show. */
export interface PathPick {
  readonly grant: string;
  readonly path: string;
}

export interface PathGrants {
  /** Opens the dialog; null when the user cancelled it. */
  pick(request: PickRequest): Promise<PathPick | null>;
  /** The path a grant names; null for a grant this app never gave (or long forgotten). */
  path(grant: string): string | null;
}

export type Handler<M extends ApiMethodName> = (
  input: ParsedInput<M>,
  ctx: CallContext,
) => Result<ApiOutput<M>> | Promise<Result<ApiOutput<M>>>;

/** A typed map of handlers for a subset of the contract (one area: `Handlers<'runs.list' | 'runs.get'>`). */
export type Handlers<M extends ApiMethodName> = { readonly [K in M]: Handler<K> };

/** Method names of one area, e.g. `AreaMethods<'runs'>` = 'runs.list' | 'runs.get' | … */
export type AreaMethods<A extends string> = Extract<ApiMethodName, `${A}.${string}`>;

export { exportRun, type ExportOptions, type ExportResult } from './exportBundle';
export { importBundle, verifyBundle, type ImportResult, type VerifiedBundle } from './importBundle';
export { reproduceBundle, compareStreams, type ReproduceResult, type ReproduceVerdict } from './reproduce';
export { BundleError, BUNDLE_SCHEMA_VERSION, BUNDLE_EXTENSION } from './manifest';
export { scrub, scrubString } from './scrub';

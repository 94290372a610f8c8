/// <reference types="node" />
// Types for mt-eval-bridge (Node >= 20; uses @types/node for Buffer, AbortSignal and process types).
// The contract's shapes (RunConfig, TranslationResult, MethodCard, Manifest, ...) are generated from the schemas,
// one file per concept under lib/generated/, which contract.d.ts re-exports.

export type {
  Capabilities, CorpusEntry, DecisionCard, DecisionFailure, Dependency, Manifest, MethodCard, PluginReport,
  Problem, RunCard, RunConfig, Usage,
} from './lib/generated/contract.js';

// The package's own API, one file per concept:
export * from './lib/types/plugin-files.js';
export * from './lib/types/protocol.js';
export * from './lib/types/records.js';
export * from './lib/types/decisions.js';
export * from './lib/types/guest.js';
export * from './lib/types/gold.js';
export * from './lib/types/host.js';
export * from './lib/types/champollion.js';

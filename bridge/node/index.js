// mt-eval-bridge: the Node side of the mt-eval SDK. No runtime dependencies.
export { ManifestError, kebabCase, readMethodManifest } from './lib/manifest.js';
export { codeSha256 } from './lib/code-hash.js';
export { checkLicence } from './lib/contract/licences.js';
export { validatePluginFiles } from './lib/contract/plugin.js';
export { ProblemsError } from './lib/contract/words.js';
export {
  BridgeError, DEFAULT_MAX_LINE_BYTES, ErrorCode, LineSplitter, PROTOCOL_VERSION, SUPPORTED_VERSIONS,
  classify, decodeUtf8, encode, errorResponse, notification, readMessageId, request, resultResponse,
} from './lib/protocol.js';
export {
  RUN_CONFIG_DEFAULTS, ResultNotes, completeDecisionConfig, completeRunConfig, errorResult, matchResults,
  normalizeResult, resultsFor,
} from './lib/results.js';
export {
  DEFAULT_TOLERANCE, NOUL_OPTIONS, QUESTION_TYPES, checkAnswer, checkDecision, decisionError, distributionProblem,
  expectedValue, matchDecisions, numberText, optionsOf, rowsProblem,
} from './lib/decisions.js';
export { GUEST_CAPABILITIES, GuestServer } from './lib/guest.js';
export { REQUESTS, loadMethod, moduleTarget, resolveMethod, serveProcess } from './lib/method-module.js';
export { MethodLoadError } from './lib/load-errors.js';
export { GuestStartError, startGuest } from './lib/host.js';
export { GOLD_FIELDS, methodView } from './lib/gold.js';
// champollion: the same method plugins translate an app's locale files (lib/champollion/).
export { ChampollionConfigError, LocalesDirError, readChampollionConfig } from './lib/champollion/config.js';
export { LanguageError, pairLanguages } from './lib/champollion/languages.js';
export { MethodPluginNotFoundError, findMethodPlugins, loadMethodPlugin, resolveMethodPlugin } from './lib/champollion/plugins.js';
export {
  PlaceholderError, protect as protectPlaceholders, restore as restorePlaceholders,
} from './lib/champollion/placeholders.js';
export { resolvePair, translateLocales } from './lib/champollion/sync.js';
export { ProjectBusyError, acquireProjectLock } from './lib/champollion/project-lock.js';

// mt-eval-bridge: the Node side of the mt-eval SDK. No runtime dependencies.
export { ManifestError, kebabCase, readMethodManifest } from './lib/manifest.js';
export {
  BridgeError, DEFAULT_MAX_LINE_BYTES, ErrorCode, LineSplitter, PROTOCOL_VERSION, SUPPORTED_VERSIONS,
  classify, decodeUtf8, encode, errorResponse, notification, readMessageId, request, resultResponse,
} from './lib/protocol.js';
export { RUN_CONFIG_DEFAULTS, completeRunConfig, errorResult, matchResults, normalizeResult } from './lib/results.js';
export { GUEST_CAPABILITIES, GuestServer, loadMethod, resolveMethod, serveProcess } from './lib/guest.js';
export { GuestStartError, startGuest } from './lib/host.js';

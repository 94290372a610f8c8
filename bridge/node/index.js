// mt-eval-bridge: the Node side of the mt-eval SDK. No runtime dependencies.
export { ManifestError, kebabCase, readMethodManifest } from './lib/manifest.js';

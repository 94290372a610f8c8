#!/usr/bin/env node
// mt-eval-guest: serve a Node method (translate and/or decide) over mt-eval-bridge/1 on stdin/stdout. The command is
// ../lib/guest-cli.js; this CommonJS launcher only starts it, as quickly as the running Node allows.
'use strict';

// Where Node keeps a compile cache (module.enableCompileCache: Node 22.1 and later), the guest's modules and the
// method's are compiled once rather than at every start; elsewhere this does nothing. NODE_DISABLE_COMPILE_CACHE=1
// turns it off, NODE_COMPILE_CACHE=DIR moves it.
try {
  process.getBuiltinModule?.('node:module').enableCompileCache?.();
} catch {
  // (a cache that cannot be used costs only the compilation)
}

// Where require() loads ES modules without a warning (Node 20.19+, 22.13+, 23.5+), the guest's modules are read in
// one synchronous pass, and Node's ES module loader starts only for the method's own module: the guest answers
// initialize about 2 ms sooner than when they load one import at a time (benchmarks/bridge.py, guest spawn).
function requiresModulesQuietly() {
  const [major, minor] = process.versions.node.split('.').map(Number);
  return process.features.require_module === true
    && ((major === 20 && minor >= 19) || (major === 22 && minor >= 13) || (major === 23 && minor >= 5) || major >= 24);
}

const argv = process.argv.slice(2);
if (requiresModulesQuietly()) {
  require('../lib/guest-cli.js').main(argv);
} else {
  import('../lib/guest-cli.js').then(({ main }) => main(argv));
}

#!/usr/bin/env node
// mt-eval-locales: translate a champollion project's locale files (the Node twin of `mt-eval locales`). The command
// is ../lib/champollion/locales-cli.js, an ES module this CommonJS launcher imports.
'use strict';

import('../lib/champollion/locales-cli.js');

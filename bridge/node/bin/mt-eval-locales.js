#!/usr/bin/env node
// mt-eval-locales: translate a champollion project's locale files (the Node twin of `mt-eval locales`).
import { main } from '../lib/champollion/cli.js';

process.exitCode = await main(process.argv.slice(2));
// Done: a method that left a timer or a socket open (a call that timed out, say) does not keep the
// process alive for long.
setTimeout(() => process.exit(), 1000).unref();

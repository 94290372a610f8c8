#!/usr/bin/env node
// mt-eval-locales: translate a champollion project's locale files (the Node twin of `mt-eval locales`).
import { main } from '../lib/champollion/cli.js';

process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// mt-eval-guest: serve a Node method (translate and/or decide) over mt-eval-bridge/1 on stdin/stdout.
import { serveProcess } from '../lib/guest-process.js';

const USAGE = `usage: mt-eval-guest DIR              serve the plugin in DIR (its method.json names node_entry)
       mt-eval-guest --module FILE.js   serve a module exporting translate(entries, config) and/or
                                        decide(rows, config)

Speaks mt-eval-bridge/1 (JSON-RPC 2.0, one message per line) on stdin/stdout; logs go to stderr.
Options: --max-line-bytes N   longest accepted request line (default 16 MiB)`;

function parse(argv) {
  const options = {};
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { help: true };
    if (arg === '--module' || arg === '--max-line-bytes') {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      options[arg] = argv[++i];
    } else if (arg.startsWith('--module=') || arg.startsWith('--max-line-bytes=')) {
      const at = arg.indexOf('=');
      options[arg.slice(0, at)] = arg.slice(at + 1);
    } else if (arg.startsWith('-') && arg !== '-') {
      throw new Error(`unknown option ${arg}`);
    } else {
      rest.push(arg);
    }
  }
  const module = options['--module'];
  if (module ? rest.length !== 0 : rest.length !== 1) {
    throw new Error('give either a plugin directory or --module FILE.js');
  }
  const limit = options['--max-line-bytes'];
  const maxLineBytes = limit === undefined ? undefined : Number(limit);
  if (limit !== undefined && !(Number.isInteger(maxLineBytes) && maxLineBytes > 0)) {
    throw new Error(`--max-line-bytes must be a positive integer, got ${limit}`);
  }
  return { target: module ? { module } : { directory: rest[0] }, maxLineBytes };
}

let parsed;
try {
  parsed = parse(process.argv.slice(2));
} catch (error) {
  process.stderr.write(`mt-eval-guest: ${error.message}\n${USAGE}\n`);
  process.exit(2);
}
if (parsed.help) {
  process.stdout.write(`${USAGE}\n`);
} else {
  try {
    serveProcess(parsed.target, { maxLineBytes: parsed.maxLineBytes });
  } catch (error) {
    process.stderr.write(`mt-eval-guest: ${error.message}\n`);
    process.exit(2);
  }
}

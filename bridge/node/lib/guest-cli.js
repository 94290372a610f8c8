// The mt-eval-guest command, which ../bin/mt-eval-guest.js starts: serve a Node method (translate and/or decide) over
// mt-eval-bridge/1 on stdin/stdout.
import { pluginFiles, recall, remember } from './checked-plugins.js';
import { serveResolved } from './guest-process.js';
import { REQUESTS, moduleTarget } from './method-load.js';

const USAGE = `usage: mt-eval-guest DIR              serve the plugin in DIR (its method.json names node_entry)
       mt-eval-guest --module FILE.js   serve a module exporting translate(entries, config) and/or
                                        decide(rows, config)

Speaks mt-eval-bridge/1 (JSON-RPC 2.0, one message per line) on stdin/stdout; logs go to stderr.
Options: --max-line-bytes N   longest accepted request line (default 16 MiB)
With --module, a host that has checked the plugin's files names the method (the plugin's files are not read):
         --name NAME          the method's name (default: the file's base name)
         --method-id ID       its method id (default: the kebab-case of the name)
         --implements LIST    translate, decide or translate,decide (default: what the module exports)`;

const VALUED = ['--module', '--max-line-bytes', '--name', '--method-id', '--implements'];

function parse(argv) {
  const options = {};
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') return { help: true };
    const at = arg.indexOf('=');
    if (VALUED.includes(arg)) {
      if (i + 1 >= argv.length) throw new Error(`${arg} needs a value`);
      options[arg] = argv[++i];
    } else if (at > 0 && VALUED.includes(arg.slice(0, at))) {
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
  const naming = ['--name', '--method-id', '--implements'].filter((name) => options[name] !== undefined);
  if (!module && naming.length) throw new Error(`${naming[0]} goes with --module (a plugin directory names its method)`);
  const blank = naming.find((name) => options[name].trim() === '');
  if (blank !== undefined) throw new Error(`${blank} is empty: give a value, or leave ${blank} out for its default`);
  const requests = options['--implements']?.split(',').map((request) => request.trim());
  const unknown = requests?.find((request) => !Object.hasOwn(REQUESTS, request));
  if (unknown !== undefined) throw new Error(`--implements: "${unknown}" is not one of ${Object.keys(REQUESTS).join(', ')}`);
  const limit = options['--max-line-bytes'];
  const maxLineBytes = limit === undefined ? undefined : Number(limit);
  if (limit !== undefined && !(/^[0-9]+$/.test(limit) && maxLineBytes > 0)) { // (Number() also reads 0x10, 1e3, " 16")
    throw new Error(`--max-line-bytes must be a positive integer of bytes (e.g. 1048576), got ${JSON.stringify(limit)}`);
  }
  const named = { name: options['--name'], methodId: options['--method-id'], implements: requests };
  return { module, directory: rest[0], naming: named, maxLineBytes };
}

// A plugin directory's files are checked as Python checks them (./method-module.js, loaded only for it), unless these
// very files passed the checks before (./checked-plugins.js).
async function start({ module, directory, naming, maxLineBytes }) {
  if (module) {
    serveResolved(moduleTarget(module, naming), { maxLineBytes });
    return;
  }
  const remembered = recall(directory);
  const files = remembered ? null : pluginFiles(directory);
  const checks = remembered ? null : await import('./method-module.js');
  const target = remembered ?? checks.resolveMethod({ directory });
  serveResolved(target, { maxLineBytes });
  if (checks) remember(files, target);
}

/** Run mt-eval-guest with command-line arguments `argv` (those after the script's path). */
export async function main(argv) {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`mt-eval-guest: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (parsed.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  try {
    await start(parsed);
  } catch (error) {
    process.stderr.write(`mt-eval-guest: ${error.message}\n`);
    process.exit(2);
  }
}

// A guest with one protocol fault: `node wrong-parse-error.mjs COMMAND...` passes every line to the guest
// COMMAND and back, but answers a line that is not JSON itself, with -32600 where the protocol says -32700.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const guest = spawn(process.argv[2], process.argv.slice(3), { stdio: ['pipe', 'inherit', 'inherit'] });
guest.on('exit', (code) => process.exit(code ?? 1));
createInterface({ input: process.stdin }).on('line', (line) => {
  try {
    JSON.parse(line);
  } catch {
    process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } })}\n`);
    return;
  }
  guest.stdin.write(`${line}\n`);
}).on('close', () => guest.stdin.end());

import { parseSignArgs, renderSignedRequest, SIGN_USAGE } from './signed-request.js';

// Prints one line for curl: a signed JSON body, or with --query a query string; with --v2 a second line,
// the X-Signature header over it. Needs no configuration.
const command = parseSignArgs(process.argv.slice(2), Date.now());
if (command.kind === 'help') {
  process.stdout.write(SIGN_USAGE);
  process.exit(0);
}
if (command.kind === 'invalid') {
  process.stderr.write(`sign: ${command.message}\nRun 'npm run sign -- --help' for the flags.\n`);
  process.exit(2);
}

try {
  process.stdout.write(`${renderSignedRequest(command.request)}\n`);
} catch (error) {
  process.stderr.write(`sign: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}

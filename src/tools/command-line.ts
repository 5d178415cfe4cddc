import { type ParseArgsOptionsConfig, parseArgs } from 'node:util';

/** The flags of a command line, as `node:util` parseArgs reads them. */
export type FlagValues = Record<string, string | boolean | undefined>;

/** What a tool's command line asks for: its usage, its own command, or nothing it can do (why). */
export type CommandLine<T> = { kind: 'help' } | { kind: 'invalid'; message: string } | T;

/**
 * The command line of a development tool (`npm run seed`, `npm run sign`): flags only, none unknown,
 * `--help` (or `-h`) beside the tool's own. `--help` wins over everything else; a flag parseArgs refuses
 * is `invalid` with its message. `toCommand` reads the flags into the tool's command.
 */
export function parseCommandLine<T>(
  argv: readonly string[],
  options: ParseArgsOptionsConfig,
  toCommand: (values: FlagValues) => CommandLine<T>,
): CommandLine<T> {
  let values: FlagValues;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: { help: { type: 'boolean', short: 'h' }, ...options },
    }));
  } catch (error) {
    return { kind: 'invalid', message: error instanceof Error ? error.message : String(error) };
  }
  return values.help ? { kind: 'help' } : toCommand(values);
}

/** A flag's whole number (digits only, at most Number.MAX_SAFE_INTEGER), or null when it is not one. */
export function parseWholeNumber(raw: string): number | null {
  if (!/^\d+$/.test(raw)) return null;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : null;
}

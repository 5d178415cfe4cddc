/**
 * Who may use the admin plane: named operators, each with a bearer token of its own, so that the
 * audit log can say who did what. Parsed from ADMIN_TOKENS (`name:token,...`) and ADMIN_TOKEN (one
 * operator named `admin`) by config.ts; nothing else reads them.
 */
export interface AdminOperator {
  name: string;
  token: string;
}

const ADMIN_TOKEN_MIN_LENGTH = 32;

const OPERATOR_NAME = /^[A-Za-z0-9._@-]{1,64}$/;

/**
 * Words that mark a value as an example to replace rather than a secret: the project's own
 * placeholders (`change-me-to-at-least-16-characters`, `replace-me-...`) and their usual spellings.
 * A deployment that copied an example unchanged must not start with a token everyone can read.
 */
const PLACEHOLDER = /change[-_]?me|replace[-_]?me|placeholder|example|your[-_]?token|<|>/i;

/** Why a token cannot be used, or undefined when it can. */
export function adminTokenProblem(token: string): string | undefined {
  if (PLACEHOLDER.test(token)) return 'is a placeholder from an example: generate one (openssl rand -hex 32)';
  if (token.length < ADMIN_TOKEN_MIN_LENGTH) {
    return `must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters (openssl rand -hex 32)`;
  }
  if (/[\s,]/.test(token)) return 'must not contain spaces or commas';
  return undefined;
}

/** `name:token,...` → operators, or the problems found (never quoting a token). */
export function parseAdminTokens(setting: string): { operators: AdminOperator[]; problems: string[] } {
  const operators: AdminOperator[] = [];
  const problems: string[] = [];
  const entries = setting
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  entries.forEach((entry, index) => {
    const colon = entry.indexOf(':');
    const name = colon < 0 ? '' : entry.slice(0, colon);
    const token = colon < 0 ? '' : entry.slice(colon + 1);
    if (!OPERATOR_NAME.test(name)) {
      problems.push(`entry ${index + 1} must be name:token, the name of letters, digits, . _ @ -`);
      return;
    }
    const problem = adminTokenProblem(token);
    if (problem) problems.push(`the token of "${name}" ${problem}`);
    else if (operators.some((operator) => operator.name === name)) problems.push(`"${name}" is named twice`);
    else operators.push({ name, token });
  });
  return { operators, problems };
}

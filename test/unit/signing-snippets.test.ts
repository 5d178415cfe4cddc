import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Every signing snippet of docs/signing-snippets.md, extracted from the document as
 * written, signs every vector of docs/signing-test-vectors.json, in all six languages. Every toolchain
 * is part of this project's machine (.ci/run installs Go, PHP and Mono from Debian's packages): a
 * missing one fails the test. C# runs on the .NET SDK where it is installed, else on Mono.
 */

const execute = promisify(execFile);
const docs = new URL('../../docs/', import.meta.url);
const markdown = readFileSync(new URL('signing-snippets.md', docs), 'utf8');
const vectors = JSON.parse(readFileSync(new URL('signing-test-vectors.json', docs), 'utf8')) as {
  v1: Array<{ name: string; merchantId: string; secret: string; timestamp: number | string; hash: string }>;
  v2: Array<{
    name: string;
    secret: string;
    t: number;
    method: string;
    pathWithQuery: string;
    body: string;
    xSignature: string;
  }>;
};
const directory = mkdtempSync(join(tmpdir(), 'signing-snippets-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function block(language: string): string {
  const match = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``).exec(markdown);
  if (!match?.[1]) throw new Error(`docs/signing-snippets.md has no ${language} block`);
  return match[1];
}

function installed(command: string, versionFlag = '--version'): boolean {
  try {
    execFileSync(command, [versionFlag], { stdio: 'ignore', timeout: 30_000 });
    return true;
  } catch {
    return false;
  }
}

interface Language {
  name: string;
  fence: string;
  /** Writes the snippet and answers how to run it with arguments. */
  prepare(source: string): { command: string; args: string[] };
  /** Null when it runs here; else why not. */
  missing: string | null;
}

const file = (name: string, source: string) => {
  const path = join(directory, name);
  writeFileSync(path, source);
  return path;
};

/** The .NET SDK builds and runs a project; Mono compiles the file with `mcs` and runs the assembly. */
function csharpProgram(source: string): { command: string; args: string[] } {
  if (installed('dotnet')) {
    const major = execFileSync('dotnet', ['--version'], { encoding: 'utf8' }).trim().split('.')[0];
    file(
      'Sign.csproj',
      `<Project Sdk="Microsoft.NET.Sdk"><PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net${major}.0</TargetFramework></PropertyGroup></Project>`,
    );
    file('Sign.cs', source);
    return { command: 'dotnet', args: ['run', '--project', join(directory, 'Sign.csproj'), '--'] };
  }
  const assembly = join(directory, 'Sign.exe');
  execFileSync('mcs', [`-out:${assembly}`, file('Sign.cs', source)], { stdio: 'pipe', timeout: 120_000 });
  return { command: 'mono', args: [assembly] };
}

const languages: Language[] = [
  {
    name: 'Python',
    fence: 'python',
    prepare: (s) => ({ command: 'python3', args: [file('sign.py', s)] }),
    missing: installed('python3') ? null : 'python3 not installed',
  },
  {
    name: 'Node.js',
    fence: 'js',
    prepare: (s) => ({ command: process.execPath, args: [file('sign.mjs', s)] }),
    missing: null,
  },
  {
    name: 'Java',
    fence: 'java',
    prepare: (s) => ({ command: 'java', args: [file('Sign.java', s)] }),
    missing: installed('java', '-version') ? null : 'java not installed',
  },
  {
    name: 'Go',
    fence: 'go',
    prepare: (s) => ({ command: 'go', args: ['run', file('sign.go', s)] }),
    missing: installed('go', 'version') ? null : 'go not installed',
  },
  {
    name: 'PHP',
    fence: 'php',
    prepare: (s) => ({ command: 'php', args: [file('sign.php', s)] }),
    missing: installed('php') ? null : 'php not installed',
  },
  {
    name: 'C#',
    fence: 'csharp',
    prepare: csharpProgram,
    missing: installed('dotnet') || installed('mcs') ? null : 'neither the .NET SDK nor Mono (mcs) installed',
  },
];

describe.each(languages)('the $name snippet', (language) => {
  it('signs every v1 and v2 vector', async () => {
    expect(language.missing, `${language.name} is part of this machine`).toBeNull();
    const { command, args } = language.prepare(block(language.fence));
    const run = async (extra: string[]) =>
      (await execute(command, [...args, ...extra], { timeout: 120_000, cwd: directory })).stdout.trim();
    for (const vector of vectors.v1) {
      expect(await run(['v1', vector.merchantId, vector.secret, String(vector.timestamp)]), vector.name).toBe(
        vector.hash,
      );
    }
    for (const vector of vectors.v2) {
      expect(
        await run(['v2', vector.secret, String(vector.t), vector.method, vector.pathWithQuery, vector.body]),
        vector.name,
      ).toBe(vector.xSignature);
    }
  }, 180_000);
});

import { hasType, isObject, type Schema, type SchemaSet, typesOf } from './json-schema-arbitrary.js';

/**
 * Single changes to a valid object, from its JSON Schema (the subset of json-schema-arbitrary.ts): the
 * ones that take it out of the schema, each checked invalid, and the ones that take a property to the
 * edges of its schema, each checked still valid.
 */

export interface Mutation {
  what: string;
  field: string;
  body: Record<string, unknown>;
}

export const describeMutation = (mutation: Mutation) => `${mutation.field}: ${mutation.what}`;

/**
 * Single changes that take a valid object `value` out of `schema`: a required property removed, a
 * property of the wrong type, too short or long, out of its pattern, range or list size, an item of
 * a list broken, the same inside a nested object; at object level, two branches of a oneOf set at
 * once, or none of an anyOf/oneOf. Each is checked to be invalid by `matches`.
 */
export function invalidMutations(
  set: SchemaSet,
  schema: Schema,
  value: Record<string, unknown>,
  path = '',
): Mutation[] {
  const s = set.resolve(schema);
  const found: Mutation[] = [];
  const add = (what: string, field: string, body: Record<string, unknown>) =>
    found.push({ what, field: `${path}${field}`, body });
  for (const name of s.required ?? []) {
    const { [name]: _removed, ...rest } = value;
    add('missing required', name, rest);
  }
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    for (const [what, broken] of valueMutations(set, property, value[name], `${path}${name}`)) {
      add(what, name, { ...value, [name]: broken });
    }
  }
  const branches = s.oneOf ?? s.anyOf ?? [];
  const branchFields = branches.flatMap((branch) => set.resolve(branch).required ?? []);
  if (branches.length > 0) {
    add(`none of ${s.oneOf ? 'oneOf' : 'anyOf'}`, branchFields.join('/'), withoutKeys(value, branchFields));
  }
  if (s.oneOf) {
    const both = { ...value };
    for (const name of branchFields) both[name] = set.sample(set.nonNull(s.properties?.[name] ?? {}));
    add('both of a oneOf', branchFields.join('+'), both);
  }
  for (const mutation of found) {
    if (set.matches(s, mutation.body)) throw new Error(`mutation still valid: ${describeMutation(mutation)}`);
  }
  return found;
}

/**
 * Valid single changes at the edges of each property's schema (but `skip`): the longest string in
 * emoji (two UTF-16 units each), the shortest, one with NUL or with JSON and LIKE specials where the
 * schema allows them, the largest and smallest integer (far ones when unbounded), null. Only those
 * that leave the object valid.
 */
export function validBoundaries(
  set: SchemaSet,
  schema: Schema,
  value: Record<string, unknown>,
  skip: string[] = [],
): Mutation[] {
  const s = set.resolve(schema);
  const found: Mutation[] = [];
  for (const [name, property] of Object.entries(s.properties ?? {})) {
    if (skip.includes(name)) continue;
    for (const [what, edge] of edgeValues(set, property)) {
      const body = { ...value, [name]: edge };
      if (set.matches(s, body)) found.push({ what, field: name, body });
    }
  }
  return found;
}

function edgeValues(set: SchemaSet, schema: Schema): Array<[string, unknown]> {
  const s = set.resolve(schema);
  const out: Array<[string, unknown]> = [];
  for (const branch of s.anyOf ?? [s]) {
    const b = set.resolve(branch);
    const types = typesOf(b);
    if (types.includes('string') && b.format === undefined && b.enum === undefined) {
      if (b.maxLength !== undefined) out.push(['longest, in emoji', '\u{1F600}'.repeat(b.maxLength)]);
      if (b.minLength !== undefined) out.push(['shortest', 'x'.repeat(b.minLength)]);
      out.push(['with NUL', 'a\u0000b'], ['with JSON and LIKE specials', '%_\\"\u2028\uFFFF']);
    }
    if (types.includes('integer')) {
      out.push(['largest', b.maximum ?? 2 ** 60], ['smallest', b.minimum ?? -(2 ** 60)]);
    }
    if (types.includes('null')) out.push(['null', null]);
  }
  return out.filter(([, edge]) => set.matches(s, edge));
}

/** Values that break `schema` for one property, with the kind of break. */
function valueMutations(set: SchemaSet, schema: Schema, current: unknown, path: string): Array<[string, unknown]> {
  const s = set.resolve(schema);
  const out: Array<[string, unknown]> = [];
  const types = s.anyOf ? s.anyOf.flatMap((branch) => typesOf(set.resolve(branch))) : typesOf(s);
  const wrong = [true, 12_345, 'text', [], {}].find((candidate) => !types.some((type) => hasType(type, candidate)));
  if (wrong !== undefined) out.push(['wrong type', wrong]);
  for (const branch of s.anyOf ?? [s]) {
    const b = set.resolve(branch);
    if (typesOf(b).includes('string')) out.push(...stringMutations(b));
    if (typesOf(b).includes('integer')) {
      if (b.minimum !== undefined) out.push(['below minimum', b.minimum - 1]);
      if (b.maximum !== undefined) out.push(['above maximum', b.maximum + 1]);
      out.push(['not an integer', (b.minimum ?? 0) + 0.5]);
    }
    if (b.enum) out.push(['not in enum', 'NOT_A_MEMBER']);
    if (typesOf(b).includes('array')) {
      const item = set.nonNull(b.items ?? {});
      if ((b.minItems ?? 0) > 0) out.push(['empty list', []]);
      if (b.maxItems !== undefined) {
        // The shortest item that is valid: a list one too long must still fit the body limit.
        const small = set.matches(item, 'x') ? 'x' : set.sample(item);
        out.push(['too many items', new Array(b.maxItems + 1).fill(small)]);
      }
      const valid = set.sample(item);
      for (const [what, broken] of valueMutations(set, item, valid, `${path}[]`).slice(0, 3)) {
        out.push([`item: ${what}`, [valid, broken]]);
      }
    }
    if (typesOf(b).includes('object') && isObject(current)) {
      for (const nested of invalidMutations(set, b, current, `${path}.`))
        out.push([`${nested.what} (${nested.field})`, nested.body]);
    }
  }
  // What breaks one branch of an anyOf may be valid under another: keep only what breaks them all.
  return out.filter(([, broken]) => !set.matches(s, broken));
}

function stringMutations(s: Schema): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  if ((s.minLength ?? 0) > 0) out.push(['too short', '']);
  if (s.maxLength !== undefined) out.push(['too long', '\u{1F600}'.repeat(s.maxLength + 1)]);
  if (s.format === 'uuid') out.push(['not a uuid', '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5']);
  if (s.format === 'uri') out.push(['not a URL', 'not a url']);
  if (s.pattern !== undefined) {
    const pattern = new RegExp(s.pattern, 'u');
    const lengthOk = (text: string) =>
      [...text].length >= (s.minLength ?? 0) && [...text].length <= (s.maxLength ?? Number.POSITIVE_INFINITY);
    const outside = ['a\u0000b', '99999999999999999', '9999999999999999', 'not matching!'].filter(
      (text) => text.search(pattern) === -1 && lengthOk(text),
    );
    for (const text of outside) out.push(['outside pattern', text]);
  }
  return out;
}

function withoutKeys(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
}

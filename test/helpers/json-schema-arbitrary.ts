import fc from 'fast-check';

/**
 * JSON Schema, for the subset the OpenAPI documents use in request bodies: a checker, a fast-check
 * generator of valid values and a list of single-field mutations that leave the schema. Any other
 * keyword throws, so a rule added to a schema later cannot be silently ignored by the tests built on
 * this (test/integration/openapi-conformance.happy.test.ts).
 */

export type Schema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
};

const KNOWN = new Set([
  ...['$ref', 'type', 'enum', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'items'],
  ...['minItems', 'maxItems', 'properties', 'required', 'anyOf', 'oneOf', 'description', 'example'],
]);

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;

export class SchemaSet {
  constructor(private readonly schemas: Record<string, Schema>) {}

  /** The schema itself, or the component it refers to; refuses keywords this file does not know. */
  resolve(schema: Schema): Schema {
    const resolved = schema.$ref ? this.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    if (!resolved) throw new Error(`unresolved ${schema.$ref}`);
    const unknown = Object.keys(resolved).filter((key) => !KNOWN.has(key));
    if (unknown.length > 0) throw new Error(`keywords not supported by the generator: ${unknown.join(', ')}`);
    if (resolved.format !== undefined && resolved.format !== 'uuid') throw new Error(`format ${resolved.format}`);
    return resolved;
  }

  /** Whether `value` is valid under `schema` (the keywords above, as JSON Schema 2020-12 reads them). */
  matches(schema: Schema, value: unknown): boolean {
    const s = this.resolve(schema);
    if (s.type !== undefined && !typesOf(s).some((type) => hasType(type, value))) return false;
    if (s.enum !== undefined && !s.enum.includes(value)) return false;
    if (typeof value === 'string') {
      const length = [...value].length;
      if (s.minLength !== undefined && length < s.minLength) return false;
      if (s.maxLength !== undefined && length > s.maxLength) return false;
      if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(value)) return false;
      if (s.format === 'uuid' && !UUID.test(value)) return false;
    }
    if (typeof value === 'number') {
      if (s.minimum !== undefined && value < s.minimum) return false;
      if (s.maximum !== undefined && value > s.maximum) return false;
    }
    if (Array.isArray(value)) {
      if (s.minItems !== undefined && value.length < s.minItems) return false;
      if (s.maxItems !== undefined && value.length > s.maxItems) return false;
      if (s.items && !value.every((item) => this.matches(s.items as Schema, item))) return false;
    }
    if (isObject(value)) {
      if (!(s.required ?? []).every((name) => name in value)) return false;
      for (const [name, property] of Object.entries(s.properties ?? {})) {
        if (name in value && !this.matches(property, value[name])) return false;
      }
    }
    if (s.anyOf && !s.anyOf.some((branch) => this.matches(branch, value))) return false;
    if (s.oneOf && s.oneOf.filter((branch) => this.matches(branch, value)).length !== 1) return false;
    return true;
  }

  /** Valid values of `schema`; an object's optional properties are absent, null (when allowed) or set. */
  arbitrary(schema: Schema): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const base = this.arbitraryOfBase(s);
    // Object-level anyOf/oneOf (which properties must be set): generate, keep what matches.
    return s.anyOf || s.oneOf ? base.filter((value) => this.matches(s, value)) : base;
  }

  private arbitraryOfBase(s: Schema): fc.Arbitrary<unknown> {
    if (s.enum) return fc.constantFrom(...s.enum);
    if (s.anyOf && s.type === undefined) return fc.oneof(...s.anyOf.map((branch) => this.arbitrary(branch)));
    const types = typesOf(s);
    return fc.oneof(...types.map((type) => this.arbitraryOfType(type, s)));
  }

  private arbitraryOfType(type: string, s: Schema): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer': {
        const inner = fc.integer({ min: s.minimum ?? -1_000_000, max: Math.min(s.maximum ?? 1_000_000, 2 ** 31 - 1) });
        // The bounds themselves, however large, or far values when there is none: what the document
        // allows must be taken, and an integer it leaves unbounded may be anything.
        const edges = fc.constantFrom(s.minimum ?? -(2 ** 60), s.maximum ?? 2 ** 60);
        return fc.oneof({ weight: 4, arbitrary: inner }, { weight: 1, arbitrary: edges });
      }
      case 'number':
        return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
      case 'string':
        return this.stringArbitrary(s);
      case 'array': {
        const minLength = s.minItems ?? 0;
        const maxLength = Math.min(s.maxItems ?? 4, minLength + 4);
        return fc.array(this.arbitrary(s.items ?? {}), { minLength, maxLength });
      }
      case 'object':
        return this.objectArbitrary(s);
      default:
        throw new Error(`type ${type}`);
    }
  }

  private stringArbitrary(s: Schema): fc.Arbitrary<string> {
    if (s.format === 'uuid') return uuidArbitrary;
    if (s.pattern !== undefined && s.minLength === undefined && s.maxLength === undefined) {
      return fc.stringMatching(new RegExp(s.pattern));
    }
    const minLength = s.minLength ?? 0;
    const maxLength = s.maxLength ?? minLength + 40;
    const lengths = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.string({ unit: character, minLength, maxLength: Math.min(maxLength, minLength + 20) }),
      },
      // The longest allowed, in characters (code points), which may be twice as many UTF-16 units.
      { weight: 1, arbitrary: fc.string({ unit: character, minLength: maxLength, maxLength }) },
    );
    const pattern = s.pattern === undefined ? undefined : new RegExp(s.pattern, 'u');
    return pattern ? lengths.filter((text) => pattern.test(text)) : lengths;
  }

  private objectArbitrary(s: Schema): fc.Arbitrary<Record<string, unknown>> {
    const required = new Set(s.required ?? []);
    const entries = Object.entries(s.properties ?? {}).map(([name, property]) => {
      const value = this.arbitrary(property);
      // An optional property is left out half of the time.
      const arbitrary = required.has(name) ? value : fc.option(value, { nil: undefined, freq: 2 });
      return [name, arbitrary] as const;
    });
    return fc
      .record(Object.fromEntries(entries))
      .map((record) => Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)));
  }

  /**
   * Single changes that take a valid object `value` out of `schema`: a required property removed, a
   * property of the wrong type, too short or long, out of its pattern, range or list size, an item of
   * a list broken, the same inside a nested object; at object level, two branches of a oneOf set at
   * once, or none of an anyOf/oneOf. Each is checked to be invalid by `matches`.
   */
  mutations(schema: Schema, value: Record<string, unknown>, path = ''): Mutation[] {
    const s = this.resolve(schema);
    const found: Mutation[] = [];
    const add = (what: string, field: string, body: Record<string, unknown>) =>
      found.push({ what, field: `${path}${field}`, body });
    for (const name of s.required ?? []) {
      const { [name]: _removed, ...rest } = value;
      add('missing required', name, rest);
    }
    for (const [name, property] of Object.entries(s.properties ?? {})) {
      for (const [what, broken] of this.valueMutations(property, value[name], `${path}${name}`)) {
        add(what, name, { ...value, [name]: broken });
      }
    }
    const branches = s.oneOf ?? s.anyOf ?? [];
    const branchFields = branches.flatMap((branch) => this.resolve(branch).required ?? []);
    if (branches.length > 0) {
      add(`none of ${s.oneOf ? 'oneOf' : 'anyOf'}`, branchFields.join('/'), withoutKeys(value, branchFields));
    }
    if (s.oneOf) {
      const both = { ...value };
      for (const name of branchFields) both[name] = this.sample(this.nonNull(s.properties?.[name] ?? {}));
      add('both of a oneOf', branchFields.join('+'), both);
    }
    for (const mutation of found) {
      if (this.matches(s, mutation.body)) throw new Error(`mutation still valid: ${describeMutation(mutation)}`);
    }
    return found;
  }

  /**
   * Valid single changes at the edges of each property's schema (but `skip`): the longest string in
   * emoji (two UTF-16 units each), the shortest, one with NUL or with JSON and LIKE specials where the
   * schema allows them, the largest and smallest integer (far ones when unbounded), null. Only those
   * that leave the object valid.
   */
  boundaries(schema: Schema, value: Record<string, unknown>, skip: string[] = []): Mutation[] {
    const s = this.resolve(schema);
    const found: Mutation[] = [];
    for (const [name, property] of Object.entries(s.properties ?? {})) {
      if (skip.includes(name)) continue;
      for (const [what, edge] of this.edgeValues(property)) {
        const body = { ...value, [name]: edge };
        if (this.matches(s, body)) found.push({ what, field: name, body });
      }
    }
    return found;
  }

  private edgeValues(schema: Schema): Array<[string, unknown]> {
    const s = this.resolve(schema);
    const out: Array<[string, unknown]> = [];
    for (const branch of s.anyOf ?? [s]) {
      const b = this.resolve(branch);
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
    return out.filter(([, edge]) => this.matches(s, edge));
  }

  /** Values that break `schema` for one property, with the kind of break. */
  private valueMutations(schema: Schema, current: unknown, path: string): Array<[string, unknown]> {
    const s = this.resolve(schema);
    const out: Array<[string, unknown]> = [];
    const types = s.anyOf ? s.anyOf.flatMap((branch) => typesOf(this.resolve(branch))) : typesOf(s);
    const wrong = [true, 12_345, 'text', [], {}].find((candidate) => !types.some((type) => hasType(type, candidate)));
    if (wrong !== undefined) out.push(['wrong type', wrong]);
    for (const branch of s.anyOf ?? [s]) {
      const b = this.resolve(branch);
      if (typesOf(b).includes('string')) out.push(...this.stringMutations(b));
      if (typesOf(b).includes('integer')) {
        if (b.minimum !== undefined) out.push(['below minimum', b.minimum - 1]);
        if (b.maximum !== undefined) out.push(['above maximum', b.maximum + 1]);
        out.push(['not an integer', (b.minimum ?? 0) + 0.5]);
      }
      if (b.enum) out.push(['not in enum', 'NOT_A_MEMBER']);
      if (typesOf(b).includes('array')) {
        const item = this.nonNull(b.items ?? {});
        if ((b.minItems ?? 0) > 0) out.push(['empty list', []]);
        if (b.maxItems !== undefined) {
          // The shortest item that is valid: a list one too long must still fit the body limit.
          const small = this.matches(item, 'x') ? 'x' : this.sample(item);
          out.push(['too many items', new Array(b.maxItems + 1).fill(small)]);
        }
        const valid = this.sample(item);
        for (const [what, broken] of this.valueMutations(item, valid, `${path}[]`).slice(0, 3)) {
          out.push([`item: ${what}`, [valid, broken]]);
        }
      }
      if (typesOf(b).includes('object') && isObject(current)) {
        for (const nested of this.mutations(b, current, `${path}.`))
          out.push([`${nested.what} (${nested.field})`, nested.body]);
      }
    }
    // What breaks one branch of an anyOf may be valid under another: keep only what breaks them all.
    return out.filter(([, broken]) => !this.matches(s, broken));
  }

  private stringMutations(s: Schema): Array<[string, unknown]> {
    const out: Array<[string, unknown]> = [];
    if ((s.minLength ?? 0) > 0) out.push(['too short', '']);
    if (s.maxLength !== undefined) out.push(['too long', '\u{1F600}'.repeat(s.maxLength + 1)]);
    if (s.format === 'uuid') out.push(['not a uuid', '8f2a1b4e-3c5d-4e6f-8a9b-0c1d2e3f4a5']);
    if (s.pattern !== undefined) {
      const pattern = new RegExp(s.pattern, 'u');
      const lengthOk = (text: string) =>
        [...text].length >= (s.minLength ?? 0) && [...text].length <= (s.maxLength ?? Number.POSITIVE_INFINITY);
      const outside = ['a\u0000b', '99999999999999999', '9999999999999999', 'not matching!'].filter(
        (text) => !pattern.test(text) && lengthOk(text),
      );
      for (const text of outside) out.push(['outside pattern', text]);
    }
    return out;
  }

  /** The schema without its `null` type: what a mutation or a forced value should be made of. */
  private nonNull(schema: Schema): Schema {
    const s = this.resolve(schema);
    const types = typesOf(s).filter((type) => type !== 'null');
    return s.type === undefined ? s : { ...s, type: types.length === 1 ? types[0] : types, enum: nonNullEnum(s) };
  }

  private sample(schema: Schema): unknown {
    const [value] = fc.sample(this.arbitrary(schema), { numRuns: 1, seed: 40 });
    return value;
  }
}

export interface Mutation {
  what: string;
  field: string;
  body: Record<string, unknown>;
}

export const describeMutation = (mutation: Mutation) => `${mutation.field}: ${mutation.what}`;

function nonNullEnum(s: Schema): unknown[] | undefined {
  return s.enum?.filter((member) => member !== null);
}

function typesOf(s: Schema): string[] {
  if (s.type === undefined) return s.enum ? [...new Set(s.enum.map(jsonType))] : [];
  return Array.isArray(s.type) ? s.type : [s.type];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function hasType(type: string, value: unknown): boolean {
  if (type === 'integer') return Number.isInteger(value);
  return jsonType(value) === type;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function withoutKeys(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(value).filter(([key]) => !keys.includes(key)));
}

/** One character (code point): mostly ASCII, sometimes one that JSON or UTF-16 treats specially. */
const character = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom('\u0000', '"', '\\', '%', '_', 'é', '\u2028', '\u{1F600}', '\uFFFF') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

/** RFC 9562 UUIDs (version 4, variant 10), sometimes upper case: both cases are valid. */
const uuidArbitrary = fc
  .tuple(fc.uuid({ version: 4 }), fc.boolean())
  .map(([uuid, upper]) => (upper ? uuid.toUpperCase() : uuid));

import fc from 'fast-check';

/**
 * JSON Schema, for the subset the OpenAPI documents use in request bodies: a checker and a fast-check
 * generator of valid values (the changes that leave a schema, or reach its edges: json-schema-mutations.ts).
 * Any other keyword throws, so a rule added to a schema later cannot be silently ignored by the tests
 * built on this (test/integration/openapi-conformance.happy.test.ts).
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
  uniqueItems?: boolean;
  properties?: Record<string, Schema>;
  required?: string[];
  /** Only `false` is supported: no property beyond `properties`. Generated objects never carry one. */
  additionalProperties?: boolean;
  anyOf?: Schema[];
  oneOf?: Schema[];
};

const KNOWN = new Set([
  ...['$ref', 'type', 'enum', 'format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'items'],
  ...['minItems', 'maxItems', 'properties', 'required', 'anyOf', 'oneOf', 'description', 'example'],
  ...['additionalProperties', 'default', 'uniqueItems'],
]);

/**
 * Addresses a `format: uri` field (a webhook endpoint) takes: public unicast literals, since what makes
 * a URL acceptable beyond its syntax (no special-purpose address, no user information) is a rule of the
 * service that its description states and JSON Schema cannot.
 */
const PUBLIC_URLS = ['https://93.184.216.34/hooks', 'http://8.8.8.8/rewards/events?source=gateway'];

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;

export class SchemaSet {
  constructor(private readonly schemas: Record<string, Schema>) {}

  /** The schema itself, or the component it refers to; refuses keywords this file does not know. */
  resolve(schema: Schema): Schema {
    const resolved = schema.$ref ? this.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema;
    if (!resolved) throw new Error(`unresolved ${schema.$ref}`);
    const unknown = Object.keys(resolved).filter((key) => !KNOWN.has(key));
    if (unknown.length > 0) throw new Error(`keywords not supported by the generator: ${unknown.join(', ')}`);
    if (resolved.format !== undefined && !['uuid', 'uri'].includes(resolved.format)) {
      throw new Error(`format ${resolved.format}`);
    }
    if (resolved.additionalProperties === true) throw new Error('additionalProperties: true');
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
      if (s.pattern !== undefined && value.search(new RegExp(s.pattern, 'u')) === -1) return false;
      if (s.format === 'uuid' && value.search(UUID) === -1) return false;
      if (s.format === 'uri' && !URL.canParse(value)) return false;
    }
    if (typeof value === 'number') {
      if (s.minimum !== undefined && value < s.minimum) return false;
      if (s.maximum !== undefined && value > s.maximum) return false;
    }
    if (Array.isArray(value)) {
      if (s.minItems !== undefined && value.length < s.minItems) return false;
      if (s.maxItems !== undefined && value.length > s.maxItems) return false;
      if (s.items && !value.every((item) => this.matches(s.items as Schema, item))) return false;
      if (s.uniqueItems && new Set(value.map((item) => JSON.stringify(item))).size !== value.length) return false;
    }
    if (isObject(value)) {
      if (!(s.required ?? []).every((name) => name in value)) return false;
      if (s.additionalProperties === false && Object.keys(value).some((name) => !(name in (s.properties ?? {})))) {
        return false;
      }
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
        const items = this.arbitrary(s.items ?? {});
        return s.uniqueItems
          ? fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(item) })
          : fc.array(items, { minLength, maxLength });
      }
      case 'object':
        return this.objectArbitrary(s);
      default:
        throw new Error(`type ${type}`);
    }
  }

  private stringArbitrary(s: Schema): fc.Arbitrary<string> {
    if (s.format === 'uuid') return uuidArbitrary;
    if (s.format === 'uri') return fc.constantFrom(...PUBLIC_URLS);
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
    return pattern ? lengths.filter((text) => text.search(pattern) !== -1) : lengths;
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

  /** The schema without its `null` type: what a mutation or a forced value should be made of. */
  nonNull(schema: Schema): Schema {
    const s = this.resolve(schema);
    const types = typesOf(s).filter((type) => type !== 'null');
    return s.type === undefined ? s : { ...s, type: types.length === 1 ? types[0] : types, enum: nonNullEnum(s) };
  }

  /** One valid value, the same on every run. */
  sample(schema: Schema): unknown {
    const [value] = fc.sample(this.arbitrary(schema), { numRuns: 1, seed: 40 });
    return value;
  }
}

function nonNullEnum(s: Schema): unknown[] | undefined {
  return s.enum?.filter((member) => member !== null);
}

export function typesOf(s: Schema): string[] {
  if (s.type === undefined) return s.enum ? [...new Set(s.enum.map(jsonType))] : [];
  return Array.isArray(s.type) ? s.type : [s.type];
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

export function hasType(type: string, value: unknown): boolean {
  if (type === 'integer') return Number.isInteger(value);
  return jsonType(value) === type;
}

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

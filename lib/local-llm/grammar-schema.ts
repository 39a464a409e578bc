/**
 * JSON Schema → the subset node-llama-cpp turns into a grammar (GbnfJsonSchema): type (or a list of scalar
 * types), const, enum, oneOf, object properties / required / additionalProperties, array items / prefixItems /
 * min and max items, string length and date formats, `$ref` into `$defs`, descriptions. What the grammar cannot
 * express (number ranges, patterns, allOf, not, …) is dropped: the grammar then allows more than the schema,
 * and callers validate the answer against the full schema anyway (a chain step asks again with the problems).
 */

type Json = Record<string, unknown>;

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const ANY: Json = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array' },
  ],
};

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function describe(from: Json, to: Json): Json {
  return typeof from.description === 'string' ? { ...to, description: from.description } : to;
}

function convert(schema: unknown, depth: number): Json {
  if (schema === false) return { type: 'null' };
  if (!isObject(schema) || depth > 32) return ANY;
  if ('const' in schema) return describe(schema, { const: schema.const });
  if (Array.isArray(schema.enum)) return describe(schema, { enum: schema.enum });
  if (typeof schema.$ref === 'string') {
    const name = /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(schema.$ref)?.[1];
    return name ? describe(schema, { $ref: `#/$defs/${name}` }) : ANY;
  }
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(alternatives) && alternatives.length > 0)
    return describe(schema, { oneOf: alternatives.map((a) => convert(a, depth + 1)) });
  const types = Array.isArray(schema.type) ? (schema.type as unknown[]) : [schema.type];
  if (types.length > 1) {
    const scalars = types.filter((t) => typeof t === 'string' && SCALARS.has(t));
    const others = types.filter((t) => t === 'object' || t === 'array');
    if (others.length === 0) return describe(schema, { type: scalars });
    return describe(schema, {
      oneOf: [
        ...(scalars.length ? [{ type: scalars }] : []),
        ...others.map((t) => convert({ ...schema, type: t }, depth + 1)),
      ],
    });
  }
  const [type] = types;
  if (type === 'object' || (type === undefined && isObject(schema.properties))) return object(schema, depth);
  if (type === 'array' || (type === undefined && schema.items !== undefined)) return array(schema, depth);
  if (type === 'string') {
    const out: Json = { type: 'string' };
    if (schema.format === 'date-time' || schema.format === 'date' || schema.format === 'time')
      out.format = schema.format;
    else {
      if (typeof schema.minLength === 'number') out.minLength = schema.minLength;
      if (typeof schema.maxLength === 'number') out.maxLength = schema.maxLength;
    }
    return describe(schema, out);
  }
  if (typeof type === 'string' && SCALARS.has(type)) return describe(schema, { type });
  return ANY;
}

function object(schema: Json, depth: number): Json {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const out: Json = {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(properties).map(([k, v]) => [k, convert(v, depth + 1)] as const),
    ),
  };
  if (Array.isArray(schema.required))
    out.required = schema.required.filter((k) => typeof k === 'string' && k in properties);
  const extra = schema.additionalProperties;
  // An object that names no properties is a free-form map unless it says otherwise.
  if (extra === undefined) out.additionalProperties = Object.keys(properties).length === 0;
  else out.additionalProperties = typeof extra === 'boolean' ? extra : convert(extra, depth + 1);
  for (const key of ['minProperties', 'maxProperties'] as const)
    if (typeof schema[key] === 'number') out[key] = schema[key];
  return describe(schema, out);
}

function array(schema: Json, depth: number): Json {
  const out: Json = { type: 'array' };
  if (Array.isArray(schema.prefixItems))
    out.prefixItems = schema.prefixItems.map((s) => convert(s, depth + 1));
  if (schema.items !== undefined && schema.items !== true) out.items = convert(schema.items, depth + 1);
  for (const key of ['minItems', 'maxItems'] as const)
    if (typeof schema[key] === 'number') out[key] = schema[key];
  return describe(schema, out);
}

/** The grammar schema for a JSON Schema (its `$defs` / `definitions` carried along as `$defs`). */
export function toGrammarSchema(schema: unknown): Json {
  const root = convert(schema, 0);
  if (!isObject(schema)) return root;
  const defs = {
    ...(isObject(schema.definitions) ? schema.definitions : {}),
    ...(isObject(schema.$defs) ? schema.$defs : {}),
  };
  if (Object.keys(defs).length === 0) return root;
  return {
    ...root,
    $defs: Object.fromEntries(Object.entries(defs).map(([k, v]) => [k, convert(v, 1)] as const)),
  };
}

/** The grammar schema of a forced tool call: `{"name": <one of the tools>, "arguments": <its parameters>}`. */
export function toolCallSchema(tools: Array<{ name: string; parameters: unknown }>): Json {
  const call = (t: { name: string; parameters: unknown }): Json => ({
    type: 'object',
    properties: {
      name: { const: t.name },
      arguments: t.parameters ? convert(t.parameters, 1) : { type: 'object', additionalProperties: true },
    },
    required: ['name', 'arguments'],
    additionalProperties: false,
  });
  return tools.length === 1 ? call(tools[0]!) : { oneOf: tools.map(call) };
}

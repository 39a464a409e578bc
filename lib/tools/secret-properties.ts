/**
 * Which configuration properties of each tool hold secret values (request headers carry credentials). Plain data
 * kept apart from the specs, so that redacting a configuration (secrets.ts) does not load the registry and, through
 * its tools, the feature services they run on. Each spec takes its `secretProperties` from here.
 */
export const SECRET_PROPERTIES = {
  http_request: ['headers'],
} as const satisfies Record<string, readonly string[]>;

// A Map, so that a toolCode such as `constructor` finds nothing rather than an object's own property.
const BY_TOOL = new Map<string, readonly string[]>(Object.entries(SECRET_PROPERTIES));

/** The secret configuration properties of a tool; none for a tool without any or an unknown one. */
export function secretPropertiesOf(toolCode: string): readonly string[] {
  return BY_TOOL.get(toolCode) ?? [];
}

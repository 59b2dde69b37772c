// What the conventions of proto/dura/v1 say about one message or field, read from protobufjs reflection.
import protobuf from 'protobufjs';

const OPTION = {
  eventType: '(dura.v1.event).type',
  eventVersion: '(dura.v1.event).version',
  wireVersion: '(dura.v1.wire_version)',
  discriminator: '(dura.v1.discriminator)',
  variant: '(dura.v1.variant)',
  omittable: '(dura.v1.omittable)',
  requiredIn: '(dura.v1.required_in)',
  nullable: '(dura.v1.nullable)',
} as const;

/** proto3's JSON name: snake_case to lowerCamelCase, unless the field sets `json_name`. */
export function jsonName(field: protobuf.FieldBase): string {
  if (field.jsonName !== undefined) return field.jsonName;
  return field.name.replace(/_(.)/g, (_match, next: string) => next.toUpperCase());
}

/** The required-ness rule of proto/README.md. */
export function isRequired(field: protobuf.FieldBase): boolean {
  if (field.repeated || field.map) return option(field, OPTION.omittable) !== true;
  return option(field, 'proto3_optional') !== true;
}

/** A oneof the source declared, as opposed to the synthetic one protobufjs makes for `optional`. */
export function isRealOneof(field: protobuf.FieldBase): boolean {
  return field.partOf !== null && option(field, 'proto3_optional') !== true;
}

export function isOmittable(field: protobuf.FieldBase): boolean {
  return option(field, OPTION.omittable) === true;
}

/** The variant a field of a flat union belongs to, or undefined when it belongs to every variant. */
export function variantOf(field: protobuf.FieldBase): string | undefined {
  const value = option(field, OPTION.variant);
  return typeof value === 'string' ? value : undefined;
}

/** The variants in which an `optional` union field is required anyway (`(dura.v1.required_in)`). */
export function requiredIn(field: protobuf.FieldBase): string[] {
  const value = option(field, OPTION.requiredIn);
  if (typeof value !== 'string') return [];
  return value
    .split(',')
    .map((kind) => kind.trim())
    .filter((kind) => kind !== '');
}

/** The proto scalar type a nullable `google.protobuf.Value` field holds when not null, if it is marked. */
export function nullableOf(field: protobuf.FieldBase): string | undefined {
  const value = option(field, OPTION.nullable);
  return typeof value === 'string' ? value : undefined;
}

export function discriminatorOf(type: protobuf.Type): string | undefined {
  const value = option(type, OPTION.discriminator);
  return typeof value === 'string' ? value : undefined;
}

export function wireVersionOf(type: protobuf.Type): number | undefined {
  const value = option(type, OPTION.wireVersion);
  return typeof value === 'number' ? value : undefined;
}

/** The `(dura.v1.event)` option of a message, if it is an event's data. */
export function eventOf(type: protobuf.Type): { type: unknown; version: unknown } | undefined {
  if (option(type, OPTION.eventType) === undefined && option(type, OPTION.eventVersion) === undefined)
    return undefined;
  return { type: option(type, OPTION.eventType), version: option(type, OPTION.eventVersion) };
}

/** The values a string field's comment lists as `one of: "a", "b"`, or undefined without such a list. */
export function listedValues(field: protobuf.FieldBase): string[] | undefined {
  const list = /one of: ((?:"[^"]*"(?:, )?)+)/.exec(field.comment ?? '')?.[1];
  if (list === undefined) return undefined;
  return [...list.matchAll(/"([^"]*)"/g)].map((match) => match[1] ?? '');
}

/** The value or message type of a field, e.g. `string` or `.google.protobuf.Value`. */
export function typeName(field: protobuf.FieldBase): string {
  return field.resolvedType === null ? field.type : field.resolvedType.fullName;
}

/** Every message type under a namespace, nested ones included. */
export function messagesIn(namespace: protobuf.NamespaceBase): protobuf.Type[] {
  const found: protobuf.Type[] = [];
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Type) found.push(nested);
    if (nested instanceof protobuf.Namespace) found.push(...messagesIn(nested));
  }
  return found;
}

function option(object: protobuf.ReflectionObject, name: string): unknown {
  return object.options?.[name];
}

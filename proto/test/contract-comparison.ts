// Compares zod shapes with proto messages under the conventions of proto/README.md. Every
// disagreement becomes one line naming the message and the field, e.g. `dura.v1.Thought.step: ...`.
import protobuf from 'protobufjs';
import {
  discriminatorOf,
  eventOf,
  isOmittable,
  isRealOneof,
  isRequired,
  jsonName,
  listedValues,
  nullableOf,
  requiredIn,
  typeName,
  variantOf,
  wireVersionOf,
} from './proto-fields';
import { nullableProblems, requiredInProblems, requirednessProblem } from './presence-rules';
import { describe, numberProblem, quoted, sameSet, valuesProblem } from './scalar-rules';
import type { FieldShape, Shape, UnionShape } from './zod-shape';

const nameOf = (type: protobuf.Type): string => type.fullName.replace(/^\./, '');

/** Collects the disagreements of any number of comparisons, and which proto messages they reached. */
export class ContractComparison {
  private readonly found = new Set<string>();
  readonly visited = new Set<string>();

  get mismatches(): string[] {
    return [...this.found];
  }

  /** Compares a zod object or discriminated union with a proto message, recursing into nested messages. */
  message(shape: Shape, type: protobuf.Type): this {
    this.visited.add(nameOf(type));
    if (shape.kind === 'union') return this.union(shape, type);
    if (shape.kind !== 'object')
      return this.report(nameOf(type), `zod has ${describe(shape)}, not an object`);
    const discriminator = discriminatorOf(type);
    if (discriminator !== undefined) {
      return this.report(nameOf(type), `proto marks a union on "${discriminator}", zod has a plain object`);
    }
    for (const field of type.fieldsArray) {
      const variant = variantOf(field);
      if (variant !== undefined)
        this.report(`${nameOf(type)}.${jsonName(field)}`, `(dura.v1.variant) = "${variant}" outside a union`);
      if (requiredIn(field).length > 0)
        this.report(`${nameOf(type)}.${jsonName(field)}`, '(dura.v1.required_in) outside a union');
    }
    return this.fields(shape.fields, type.fieldsArray, type, nameOf(type));
  }

  /** Compares one zod variant object with the fields a flat proto union gives that variant. */
  variant(shape: Shape, type: protobuf.Type, kind: string): this {
    this.visited.add(nameOf(type));
    if (shape.kind !== 'object')
      return this.report(nameOf(type), `zod has ${describe(shape)}, not a variant object`);
    const fields = type.fieldsArray.filter((field) => [undefined, kind].includes(variantOf(field)));
    return this.fields(
      shape.fields,
      fields,
      type,
      `${nameOf(type)}[${discriminatorOf(type) ?? '?'}=${kind}]`,
      discriminatorOf(type),
      kind,
    );
  }

  /**
   * Pairs every event type with exactly one proto message whose `(dura.v1.event)` option names it,
   * checks that option's version, and compares the data shapes.
   */
  events(
    types: readonly protobuf.Type[],
    schemas: Record<string, Shape>,
    versions: Record<string, number>,
  ): this {
    const declared = new Map<string, protobuf.Type[]>();
    for (const type of types) {
      const event = eventOf(type);
      if (event === undefined) continue;
      if (typeof event.type !== 'string' || typeof event.version !== 'number') {
        this.report(
          nameOf(type),
          'its (dura.v1.event) option needs both a string `type` and a number `version`',
        );
        continue;
      }
      declared.set(event.type, [...(declared.get(event.type) ?? []), type]);
    }
    for (const [eventType, shape] of Object.entries(schemas)) {
      const [type, ...others] = declared.get(eventType) ?? [];
      if (type === undefined) {
        this.report(`event "${eventType}"`, `no proto message has (dura.v1.event).type = "${eventType}"`);
        continue;
      }
      if (others.length > 0) {
        this.report(
          `event "${eventType}"`,
          `declared by ${[type, ...others].map(nameOf).join(' and ')}; keep one`,
        );
      }
      const version = eventOf(type)?.version;
      if (version !== versions[eventType]) {
        this.report(
          nameOf(type),
          `(dura.v1.event).version is ${String(version)}, CURRENT_EVENT_VERSIONS.${eventType} is ${String(versions[eventType])}`,
        );
      }
      this.message(shape, type);
    }
    for (const [eventType, types] of declared) {
      if (!(eventType in schemas)) {
        this.report(
          types.map(nameOf).join(', '),
          `declares event "${eventType}", which has no schema in EventDataSchemas`,
        );
      }
    }
    return this;
  }

  private union(shape: UnionShape, type: protobuf.Type): this {
    const where = nameOf(type);
    const discriminator = discriminatorOf(type);
    if (discriminator !== shape.discriminator) {
      return this.report(
        where,
        `zod is a union on "${shape.discriminator}"; mark the message (dura.v1.discriminator) = "${shape.discriminator}"`,
      );
    }
    const kinds = Object.keys(shape.variants);
    const tag = type.fieldsArray.find((field) => jsonName(field) === discriminator);
    if (tag === undefined) return this.report(where, `has no discriminator field "${discriminator}"`);
    if (
      tag.type !== 'string' ||
      tag.repeated ||
      tag.map ||
      !isRequired(tag) ||
      variantOf(tag) !== undefined
    ) {
      this.report(
        `${where}.${discriminator}`,
        'the discriminator must be a required string in every variant',
      );
    }
    const listed = listedValues(tag) ?? [];
    if (!sameSet(listed, kinds)) {
      this.report(
        `${where}.${discriminator}`,
        `comment lists one of: ${quoted(listed)}; zod's variants are ${quoted(kinds)}`,
      );
    }
    for (const field of type.fieldsArray) {
      const variant = variantOf(field);
      if (variant !== undefined && !kinds.includes(variant)) {
        this.report(
          `${where}.${jsonName(field)}`,
          `belongs to variant "${variant}", which zod does not have`,
        );
      }
      for (const problem of requiredInProblems(field, kinds))
        this.report(`${where}.${jsonName(field)}`, problem);
    }
    for (const [kind, variant] of Object.entries(shape.variants)) this.variant(variant, type, kind);
    return this;
  }

  private fields(
    zodFields: Record<string, FieldShape>,
    protoFields: readonly protobuf.FieldBase[],
    type: protobuf.Type,
    label: string,
    discriminator?: string,
    kind?: string,
  ): this {
    const byName = new Map(protoFields.map((field) => [jsonName(field), field]));
    for (const [name, zodField] of Object.entries(zodFields)) {
      const field = byName.get(name);
      if (field === undefined)
        this.report(`${label}.${name}`, 'zod has this field, the proto message does not');
      else this.field(zodField, field, type, `${label}.${name}`, name === discriminator, kind);
    }
    for (const [name, field] of byName) {
      if (!(name in zodFields))
        this.report(`${label}.${name}`, `proto has this field (${field.name} = ${field.id}), zod does not`);
    }
    return this;
  }

  private field(
    zodField: FieldShape,
    field: protobuf.FieldBase,
    type: protobuf.Type,
    where: string,
    isTag: boolean,
    kind?: string,
  ): void {
    const collection = field.repeated || field.map;
    if (isRealOneof(field))
      this.report(where, 'is in a oneof; its JSON would not match zod (use a flat union, see options.proto)');
    if (isOmittable(field) && !collection)
      this.report(
        where,
        '(dura.v1.omittable) is for repeated and map fields; mark a singular field `optional`',
      );
    this.reportIf(where, requirednessProblem(zodField.required, field, kind));
    if (nullableOf(field) !== undefined && (collection || typeName(field) !== '.google.protobuf.Value')) {
      this.report(where, '(dura.v1.nullable) is for singular google.protobuf.Value fields');
    }
    const shape = zodField.shape;
    if (shape.kind === 'number' && shape.literal !== undefined && wireVersionOf(type) !== shape.literal) {
      this.report(
        where,
        `zod fixes it to ${shape.literal}, (dura.v1.wire_version) is ${String(wireVersionOf(type))}`,
      );
    }
    if (field.map) {
      const keyType = (field as protobuf.MapField).keyType;
      if (shape.kind !== 'map')
        this.report(where, `proto has map<${keyType}, ${field.type}>, zod has ${describe(shape)}`);
      else if (keyType !== 'string') this.report(where, `map keys must be strings, proto has ${keyType}`);
      else this.value(shape.value, field, `${where}{}`, false);
    } else if (field.repeated) {
      if (shape.kind !== 'array')
        this.report(where, `proto has repeated ${field.type}, zod has ${describe(shape)}`);
      else this.value(shape.element, field, `${where}[]`, false);
    } else {
      this.value(shape, field, where, isTag);
    }
  }

  private value(shape: Shape, field: protobuf.FieldBase, where: string, isTag: boolean): void {
    const proto = typeName(field);
    const expect = (wanted: string): void => {
      if (proto !== wanted)
        this.report(where, `zod has ${describe(shape)}, so proto needs ${wanted}, not ${proto}`);
    };
    switch (shape.kind) {
      case 'string':
        expect('string');
        if (!isTag) this.reportIf(where, valuesProblem(shape.values, listedValues(field)));
        return;
      case 'number':
        return this.reportIf(where, numberProblem(shape, proto));
      case 'boolean':
        return expect('bool');
      case 'json-value':
      case 'unknown':
        expect('.google.protobuf.Value');
        if (nullableOf(field) !== undefined)
          this.report(where, `zod has ${describe(shape)}; drop (dura.v1.nullable)`);
        return;
      case 'nullable':
        for (const problem of nullableProblems(shape.inner, field)) this.report(where, problem);
        return;
      case 'json-object':
        return expect('.google.protobuf.Struct');
      case 'object':
      case 'union':
        if (field.resolvedType instanceof protobuf.Type && !proto.startsWith('.google.protobuf.')) {
          this.message(shape, field.resolvedType);
        } else {
          this.report(where, `zod has ${describe(shape)}, so proto needs a dura message, not ${proto}`);
        }
        return;
      case 'array':
      case 'map':
        this.report(where, `zod nests ${describe(shape)} inside a collection, which proto3 cannot express`);
        return;
      case 'unsupported':
        this.report(where, `zod uses ${shape.why}`);
        return;
    }
  }

  private reportIf(where: string, problem: string | undefined): void {
    if (problem !== undefined) this.report(where, problem);
  }

  private report(where: string, what: string): this {
    this.found.add(`${where}: ${what}`);
    return this;
  }
}

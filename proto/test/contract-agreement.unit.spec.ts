import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import {
  AgentRefSchema,
  AgentSpecSchema,
  ApprovalPolicySchema,
  BudgetLimitsSchema,
  ChatMessageSchema,
  ChatToolCallSchema,
  CURRENT_EVENT_VERSIONS,
  DeadLetterSchema,
  DecideTaskSchema,
  DecisionSchema,
  ErrorInfoSchema,
  EventDataSchemas,
  EventMetaSchema,
  ForkRequestSchema,
  JsonValueSchema,
  ModelInfoSchema,
  ParentRefSchema,
  PayloadRefSchema,
  PinnedVersionSchema,
  PromptRecordSchema,
  RunRequestSchema,
  ScriptedAgentSchema,
  ScriptedStepSchema,
  SignalRequestSchema,
  TimerTaskSchema,
  ToolCallSchema,
  ToolTaskSchema,
  UsageSchema,
  WireEventSchema,
} from '@dura/contracts';
import { PROTO_FILES, PROTO_PACKAGE } from '../src/index';
import { ContractComparison } from './contract-comparison';
import { loadContract, protoFilesOnDisk } from './load-contract';
import { messagesIn } from './proto-fields';
import { zodShape, type Shape } from './zod-shape';

const root = loadContract(PROTO_FILES);
const messages = messagesIn(root.lookup(PROTO_PACKAGE) as protobuf.Namespace);
const message = (name: string): protobuf.Type => root.lookupType(`${PROTO_PACKAGE}.${name}`);
const eventShapes = (schemas: Record<string, z.core.$ZodType>): Record<string, Shape> =>
  Object.fromEntries(Object.entries(schemas).map(([type, schema]) => [type, zodShape(schema)]));

/** Each wire message a client or service reads or writes on its own, with the zod schema it must equal. */
const PAIRS: ReadonlyArray<readonly [string, z.core.$ZodType]> = [
  ['RunRequest', RunRequestSchema],
  ['AgentSpec', AgentSpecSchema],
  ['ScriptedStep', ScriptedStepSchema],
  ['BudgetLimits', BudgetLimitsSchema],
  ['ParentRef', ParentRefSchema],
  ['SignalRequest', SignalRequestSchema],
  ['ForkRequest', ForkRequestSchema],
  ['ToolTask', ToolTaskSchema],
  ['DecideTask', DecideTaskSchema],
  ['TimerTask', TimerTaskSchema],
  ['DeadLetter', DeadLetterSchema],
  ['EventEnvelope', WireEventSchema],
  ['EventMeta', EventMetaSchema],
  ['ErrorInfo', ErrorInfoSchema],
  ['ToolCall', ToolCallSchema],
  ['Decision', DecisionSchema],
  ['Usage', UsageSchema],
  ['ModelInfo', ModelInfoSchema],
  ['ApprovalPolicy', ApprovalPolicySchema],
  ['PinnedVersion', PinnedVersionSchema],
  ['PayloadRef', PayloadRefSchema],
  ['ChatMessage', ChatMessageSchema],
  ['ChatToolCall', ChatToolCallSchema],
  ['PromptRecord', PromptRecordSchema],
];

describe('the proto contract agrees with the zod schemas', () => {
  it('lists every .proto file in PROTO_FILES', () => {
    expect(protoFilesOnDisk()).toEqual([...PROTO_FILES].sort());
  });

  it.each(PAIRS)('%s has the same fields, required-ness and types', (name, schema) => {
    expect(new ContractComparison().message(zodShape(schema), message(name)).mismatches).toEqual([]);
  });

  it.each([
    ['scripted', ScriptedAgentSchema],
    ['agent', AgentRefSchema],
  ] as const)(
    'the "%s" variant of AgentSpec has the same fields, required-ness and types',
    (kind, schema) => {
      const comparison = new ContractComparison().variant(zodShape(schema), message('AgentSpec'), kind);
      expect(comparison.mismatches).toEqual([]);
    },
  );

  it('has exactly one data message per event type, at its current version, with the same shape', () => {
    const comparison = new ContractComparison().events(
      messages,
      eventShapes(EventDataSchemas),
      CURRENT_EVENT_VERSIONS,
    );
    expect(comparison.mismatches).toEqual([]);
  });

  it('has no message that no zod schema stands for', () => {
    const comparison = new ContractComparison().events(
      messages,
      eventShapes(EventDataSchemas),
      CURRENT_EVENT_VERSIONS,
    );
    for (const [name, schema] of PAIRS) comparison.message(zodShape(schema), message(name));
    const optionMessages = messages.filter((type) => type.filename?.endsWith('/options.proto'));
    const orphans = messages
      .filter((type) => !optionMessages.includes(type))
      .map((type) => type.fullName.slice(1))
      .filter((name) => !comparison.visited.has(name));
    expect(orphans).toEqual([]);
  });
});

describe('the comparison itself (so the agreement cannot pass vacuously)', () => {
  const compare = (schema: z.core.$ZodType, name: string): string[] =>
    new ContractComparison().message(zodShape(schema), message(name)).mismatches;

  it('reports a zod field the proto message lacks', () => {
    const drifted = EventDataSchemas.run_cancelled.extend({ note: z.string() });
    expect(compare(drifted, 'RunCancelled')).toEqual([
      'dura.v1.RunCancelled.note: zod has this field, the proto message does not',
    ]);
  });

  it('reports a field whose required-ness changed, in both directions', () => {
    const drifted = ErrorInfoSchema.extend({ message: z.string().optional(), retryable: z.boolean() });
    expect(compare(drifted, 'ErrorInfo')).toEqual([
      'dura.v1.ErrorInfo.message: zod lets it be absent, proto requires it (add `optional`)',
      'dura.v1.ErrorInfo.retryable: zod requires it, proto lets it be absent (drop `optional`)',
    ]);
    const issuesRequired = DeadLetterSchema.extend({ issues: z.array(z.string()) });
    expect(compare(issuesRequired, 'DeadLetter')).toEqual([
      'dura.v1.DeadLetter.issues: zod requires it, proto lets it be absent (drop (dura.v1.omittable) = true)',
    ]);
  });

  it('reports a changed type, a changed enum and a fractional integer', () => {
    const drifted = EventDataSchemas.wait_requested.extend({
      waitId: z.number(),
      kind: z.enum(['signal', 'timer']),
    });
    expect(compare(drifted, 'WaitRequested')).toEqual([
      'dura.v1.WaitRequested.waitId: zod has a number, so proto needs double or a 32-bit integer, not string',
      'dura.v1.WaitRequested.kind: comment lists one of: "signal", "timer", "child", "operator", "approval", "budget"; zod allows "signal", "timer"',
    ]);
    const fractional = UsageSchema.extend({ inputTokens: z.number() });
    expect(compare(fractional, 'Usage')).toEqual([
      'dura.v1.Usage.inputTokens: zod allows fractions, so proto needs double, not uint32',
    ]);
  });

  it('reports drift inside a nested message and a union variant', () => {
    const drifted = DecisionSchema.options[2].extend({
      error: ErrorInfoSchema.extend({ detail: z.string() }),
    });
    const union = z.discriminatedUnion('kind', [
      DecisionSchema.options[0],
      DecisionSchema.options[1],
      drifted,
    ]);
    expect(compare(EventDataSchemas.thought.extend({ decision: union }), 'Thought')).toEqual([
      'dura.v1.ErrorInfo.detail: zod has this field, the proto message does not',
    ]);
    const extraKind = z.discriminatedUnion('kind', [
      ...DecisionSchema.options,
      z.object({ kind: z.literal('retry') }),
    ]);
    expect(compare(extraKind, 'Decision')).toEqual([
      'dura.v1.Decision.kind: comment lists one of: "tool_calls", "complete", "fail"; zod\'s variants are "tool_calls", "complete", "fail", "retry"',
    ]);
  });

  it('reports a nullable field proto cannot write null for, and a changed nullable type', () => {
    const modelDrift = ModelInfoSchema.extend({ promptVersion: z.string().nullable() });
    expect(compare(modelDrift, 'ModelInfo')).toEqual([
      'dura.v1.ModelInfo.promptVersion: zod has a string or null; proto3 JSON writes null only for a google.protobuf.Value, so make it one marked (dura.v1.nullable) = "<scalar type>"',
    ]);
    const prefixDrift = PromptRecordSchema.extend({ prefix: z.boolean().nullable() });
    expect(compare(prefixDrift, 'PromptRecord')).toEqual([
      'dura.v1.PromptRecord.prefix: zod has a boolean or null, so (dura.v1.nullable) needs "bool", not "string"',
    ]);
    const notNullable = PromptRecordSchema.extend({ prefix: JsonValueSchema });
    expect(compare(notNullable, 'PromptRecord')).toEqual([
      'dura.v1.PromptRecord.prefix: zod has any JSON value; drop (dura.v1.nullable)',
    ]);
  });

  it('reports required-ness per union variant through (dura.v1.required_in)', () => {
    const [system, user, assistant, tool] = ChatMessageSchema.options;
    const drifted = z.discriminatedUnion('role', [
      system.extend({ content: z.string().optional() }),
      user,
      assistant.extend({ content: z.string() }),
      tool,
    ]);
    expect(compare(drifted, 'ChatMessage')).toEqual([
      'dura.v1.ChatMessage[role=system].content: zod lets it be absent, proto requires it (drop "system" from (dura.v1.required_in))',
      'dura.v1.ChatMessage[role=assistant].content: zod requires it, proto lets it be absent (drop `optional`, or add "assistant" to (dura.v1.required_in))',
    ]);
    const local = loadContract(PROTO_FILES);
    const chat = local.lookupType('dura.v1.ChatMessage');
    chat.fields.content?.setOption('(dura.v1.required_in)', 'system, user, tool, robot');
    chat.fields.tool_call_id?.setOption('(dura.v1.required_in)', 'tool');
    expect(new ContractComparison().message(zodShape(ChatMessageSchema), chat).mismatches).toEqual([
      'dura.v1.ChatMessage.content: (dura.v1.required_in) names "robot", which zod does not have',
      'dura.v1.ChatMessage.toolCallId: (dura.v1.required_in) is for `optional` singular fields',
    ]);
  });

  it('reports a proto field zod lacks and a changed wire version', () => {
    const local = loadContract(PROTO_FILES);
    local.lookupType('dura.v1.RunCancelled').add(new protobuf.Field('by_whom', 9, 'string'));
    const comparison = new ContractComparison().message(
      zodShape(EventDataSchemas.run_cancelled),
      local.lookupType('dura.v1.RunCancelled'),
    );
    expect(comparison.mismatches).toEqual([
      'dura.v1.RunCancelled.byWhom: proto has this field (by_whom = 9), zod does not',
    ]);
    expect(compare(SignalRequestSchema.extend({ v: z.literal(2) }), 'SignalRequest')).toEqual([
      'dura.v1.SignalRequest.v: zod fixes it to 2, (dura.v1.wire_version) is 1',
    ]);
  });

  it('reports a version bump without a proto bump, a missing event and an orphan event message', () => {
    const { run_started: _dropped, ...withoutRunStarted } = EventDataSchemas;
    const schemas = { ...eventShapes(withoutRunStarted), run_paused: zodShape(z.object({})) };
    const versions = { ...CURRENT_EVENT_VERSIONS, thought: 4 };
    expect(new ContractComparison().events(messages, schemas, versions).mismatches).toEqual([
      'dura.v1.Thought: (dura.v1.event).version is 3, CURRENT_EVENT_VERSIONS.thought is 4',
      'event "run_paused": no proto message has (dura.v1.event).type = "run_paused"',
      'dura.v1.RunStarted: declares event "run_started", which has no schema in EventDataSchemas',
    ]);
  });
});

/**
 * A received span as a plain object, the same whichever encoding carried it, so tracing tests assert on
 * trace ids, parent links and attributes without knowing OTLP. Also decodes OTLP/JSON
 * (`ExportTraceServiceRequest` in the protobuf JSON mapping, ids in hex as the OTLP spec requires).
 */

export type ReceivedSpanKind = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';
export type ReceivedStatusCode = 'unset' | 'ok' | 'error';

export interface ReceivedSpan {
  /** 32 lowercase hex digits. */
  traceId: string;
  /** 16 lowercase hex digits. */
  spanId: string;
  /** 16 lowercase hex digits; undefined for a root span. */
  parentSpanId: string | undefined;
  name: string;
  kind: ReceivedSpanKind;
  /** `service.name` of the resource that sent the span. */
  service: string | undefined;
  /** Instrumentation scope (the tracer's name). */
  scope: string | undefined;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string; attributes: Record<string, unknown> }[];
  status: { code: ReceivedStatusCode; message?: string };
  /** Nanoseconds since the epoch, as a decimal string (they exceed a double's exact range). */
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

export const SPAN_KINDS: readonly ReceivedSpanKind[] = [
  'unspecified',
  'internal',
  'server',
  'client',
  'producer',
  'consumer',
];
export const STATUS_CODES: readonly ReceivedStatusCode[] = ['unset', 'ok', 'error'];

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (typeof value === 'object' && value !== null ? (value as Json) : {});
const list = (value: unknown): Json[] => (Array.isArray(value) ? value.map(obj) : []);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Spans of an OTLP/JSON `ExportTraceServiceRequest`; throws when the body is not one. */
export function spansFromOtlpJson(body: unknown): ReceivedSpan[] {
  const request = obj(body);
  if (!Array.isArray(request['resourceSpans']))
    throw new Error('OTLP/JSON: expected an object with a resourceSpans array');
  return list(request['resourceSpans']).flatMap((resourceSpans) => {
    const resource = jsonAttributes(obj(resourceSpans['resource'])['attributes']);
    const service = str(resource['service.name']);
    return list(resourceSpans['scopeSpans']).flatMap((scopeSpans) => {
      const scope = str(obj(scopeSpans['scope'])['name']);
      return list(scopeSpans['spans']).map((span): ReceivedSpan => {
        const status = obj(span['status']);
        const parent = jsonId(span['parentSpanId']);
        return {
          traceId: jsonId(span['traceId']),
          spanId: jsonId(span['spanId']),
          parentSpanId: parent === '' ? undefined : parent,
          name: str(span['name']) ?? '',
          kind: SPAN_KINDS[Number(span['kind'] ?? 0)] ?? 'unspecified',
          service,
          scope,
          attributes: jsonAttributes(span['attributes']),
          events: list(span['events']).map((e) => ({
            name: str(e['name']) ?? '',
            attributes: jsonAttributes(e['attributes']),
          })),
          links: list(span['links']).map((l) => ({
            traceId: jsonId(l['traceId']),
            spanId: jsonId(l['spanId']),
            attributes: jsonAttributes(l['attributes']),
          })),
          status: {
            code: STATUS_CODES[Number(status['code'] ?? 0)] ?? 'unset',
            ...(str(status['message']) ? { message: str(status['message']) } : {}),
          },
          startTimeUnixNano: nanos(span['startTimeUnixNano']),
          endTimeUnixNano: nanos(span['endTimeUnixNano']),
        };
      });
    });
  });
}

/** A uint64 timestamp: a decimal string in OTLP/JSON, though some senders write a number. */
function nanos(value: unknown): string {
  if (typeof value === 'string' && /^\d+$/.test(value)) return value;
  return typeof value === 'number' && Number.isFinite(value) ? BigInt(Math.trunc(value)).toString() : '0';
}

/** Hex as OTLP/JSON requires; base64 (the generic protobuf JSON mapping for bytes) is accepted too. */
function jsonId(value: unknown): string {
  const text = str(value) ?? '';
  if (/^[0-9a-f]*$/i.test(text) && (text.length === 32 || text.length === 16 || text.length === 0))
    return text.toLowerCase();
  return Buffer.from(text, 'base64').toString('hex');
}

function jsonAttributes(value: unknown): Record<string, unknown> {
  return Object.fromEntries(list(value).map((kv) => [str(kv['key']) ?? '', jsonAnyValue(kv['value'])]));
}

function jsonAnyValue(value: unknown): unknown {
  const v = obj(value);
  if ('stringValue' in v) return v['stringValue'];
  if ('boolValue' in v) return v['boolValue'];
  if ('intValue' in v) {
    const n = Number(v['intValue']);
    return Number.isSafeInteger(n) ? n : String(v['intValue']);
  }
  if ('doubleValue' in v) return Number(v['doubleValue']);
  if ('arrayValue' in v) return list(obj(v['arrayValue'])['values']).map(jsonAnyValue);
  if ('kvlistValue' in v) return jsonAttributes(obj(v['kvlistValue'])['values']);
  if ('bytesValue' in v) return Buffer.from(str(v['bytesValue']) ?? '', 'base64');
  return undefined;
}

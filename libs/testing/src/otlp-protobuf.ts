/**
 * Decodes an OTLP/HTTP protobuf body (`opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest`)
 * into received spans. Field numbers are those of opentelemetry-proto's trace/v1, common/v1 and resource/v1
 * messages (the ones @opentelemetry/otlp-transformer writes); unknown fields are skipped, as protobuf requires.
 */
import { SPAN_KINDS, STATUS_CODES, type ReceivedSpan } from './otlp-span';
import {
  readFields,
  wireBytes,
  wireDouble,
  wireFixed64,
  wireHex,
  wireInt64,
  wireString,
  wireUint,
  type WireField,
} from './protobuf-wire';

/** Spans of a binary `ExportTraceServiceRequest`; throws on a malformed body. */
export function spansFromOtlpProtobuf(body: Uint8Array): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const f of readFields(body)) if (f.field === 1) spans.push(...resourceSpans(wireBytes(f)));
  return spans;
}

function resourceSpans(buf: Uint8Array): ReceivedSpan[] {
  let resource: Record<string, unknown> = {};
  const scopes: Uint8Array[] = [];
  for (const f of readFields(buf)) {
    if (f.field === 1) resource = attributesOf(wireBytes(f), 1);
    else if (f.field === 2) scopes.push(wireBytes(f));
  }
  const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : undefined;
  return scopes.flatMap((scope) => scopeSpans(scope, service));
}

function scopeSpans(buf: Uint8Array, service: string | undefined): ReceivedSpan[] {
  let scope: string | undefined;
  const spans: Uint8Array[] = [];
  for (const f of readFields(buf)) {
    if (f.field === 1) for (const s of readFields(wireBytes(f))) if (s.field === 1) scope = wireString(s);
    if (f.field === 2) spans.push(wireBytes(f));
  }
  return spans.map((s) => span(s, service, scope));
}

function span(buf: Uint8Array, service: string | undefined, scope: string | undefined): ReceivedSpan {
  const out: ReceivedSpan = {
    traceId: '',
    spanId: '',
    parentSpanId: undefined,
    name: '',
    kind: 'unspecified',
    service,
    scope,
    attributes: {},
    events: [],
    links: [],
    status: { code: 'unset' },
    startTimeUnixNano: '0',
    endTimeUnixNano: '0',
  };
  for (const f of readFields(buf)) {
    switch (f.field) {
      case 1:
        out.traceId = wireHex(f);
        break;
      case 2:
        out.spanId = wireHex(f);
        break;
      case 4:
        out.parentSpanId = wireHex(f) || undefined;
        break;
      case 5:
        out.name = wireString(f);
        break;
      case 6:
        out.kind = SPAN_KINDS[wireUint(f)] ?? 'unspecified';
        break;
      case 7:
        out.startTimeUnixNano = wireFixed64(f).toString();
        break;
      case 8:
        out.endTimeUnixNano = wireFixed64(f).toString();
        break;
      case 9:
        Object.assign(out.attributes, keyValue(wireBytes(f)));
        break;
      case 11:
        out.events.push(event(wireBytes(f)));
        break;
      case 13:
        out.links.push(link(wireBytes(f)));
        break;
      case 15:
        out.status = status(wireBytes(f));
        break;
    }
  }
  return out;
}

function event(buf: Uint8Array): ReceivedSpan['events'][number] {
  let name = '';
  for (const f of readFields(buf)) if (f.field === 2) name = wireString(f);
  return { name, attributes: attributesOf(buf, 3) };
}

function link(buf: Uint8Array): ReceivedSpan['links'][number] {
  let traceId = '';
  let spanId = '';
  for (const f of readFields(buf)) {
    if (f.field === 1) traceId = wireHex(f);
    else if (f.field === 2) spanId = wireHex(f);
  }
  return { traceId, spanId, attributes: attributesOf(buf, 4) };
}

function status(buf: Uint8Array): ReceivedSpan['status'] {
  let code: ReceivedSpan['status']['code'] = 'unset';
  let message: string | undefined;
  for (const f of readFields(buf)) {
    if (f.field === 2) message = wireString(f);
    else if (f.field === 3) code = STATUS_CODES[wireUint(f)] ?? 'unset';
  }
  return message ? { code, message } : { code };
}

/** The repeated KeyValue at `field` of a message (Resource: 1, Event: 3, Link: 4, KeyValueList: 1). */
function attributesOf(buf: Uint8Array, field: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of readFields(buf)) if (f.field === field) Object.assign(out, keyValue(wireBytes(f)));
  return out;
}

function keyValue(buf: Uint8Array): Record<string, unknown> {
  let key = '';
  let value: unknown;
  for (const f of readFields(buf)) {
    if (f.field === 1) key = wireString(f);
    else if (f.field === 2) value = anyValue(wireBytes(f));
  }
  return { [key]: value };
}

function anyValue(buf: Uint8Array): unknown {
  let value: unknown;
  for (const f of readFields(buf)) value = anyValueField(f);
  return value;
}

function anyValueField(f: WireField): unknown {
  switch (f.field) {
    case 1:
      return wireString(f);
    case 2:
      return wireUint(f) !== 0;
    case 3:
      return wireInt64(f);
    case 4:
      return wireDouble(f);
    case 5:
      return [...readFields(wireBytes(f))].filter((v) => v.field === 1).map((v) => anyValue(wireBytes(v)));
    case 6:
      return attributesOf(wireBytes(f), 1);
    case 7:
      return Buffer.from(wireBytes(f));
    default:
      return undefined;
  }
}

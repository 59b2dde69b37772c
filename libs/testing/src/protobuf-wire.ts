/**
 * Reads protobuf's binary wire format field by field. The OTLP receiver needs to decode only a handful of
 * messages, and no registry package ships the OTLP definitions any more (@opentelemetry/otlp-transformer
 * now writes protobuf by hand), so a schema-less reader plus per-message field numbers is the smallest
 * dependable way.
 */

/** One field as it appears on the wire, before the message's schema says what it means. */
export type WireField =
  | { field: number; wire: 0; varint: bigint }
  | { field: number; wire: 1; fixed64: Uint8Array }
  | { field: number; wire: 2; bytes: Uint8Array }
  | { field: number; wire: 5; fixed32: Uint8Array };

/** The fields of one message in wire order; throws on a truncated buffer or a group (unused since proto3). */
export function* readFields(buf: Uint8Array): Generator<WireField> {
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= buf.length) throw new Error('protobuf: truncated varint');
      const byte = buf[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      if (shift > 63n) throw new Error('protobuf: varint longer than 10 bytes');
    }
  };
  const take = (length: number): Uint8Array => {
    if (pos + length > buf.length) throw new Error('protobuf: truncated field');
    const slice = buf.subarray(pos, pos + length);
    pos += length;
    return slice;
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) yield { field, wire, varint: varint() };
    else if (wire === 1) yield { field, wire, fixed64: take(8) };
    else if (wire === 2) yield { field, wire, bytes: take(Number(varint())) };
    else if (wire === 5) yield { field, wire, fixed32: take(4) };
    else throw new Error(`protobuf: unsupported wire type ${wire} for field ${field}`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function wireString(field: WireField): string {
  return field.wire === 2 ? utf8.decode(field.bytes) : '';
}

export function wireBytes(field: WireField): Uint8Array {
  return field.wire === 2 ? field.bytes : new Uint8Array();
}

export function wireHex(field: WireField): string {
  return Buffer.from(wireBytes(field)).toString('hex');
}

/** An int64 varint as a number (a string when it does not fit a double exactly). */
export function wireInt64(field: WireField): number | string {
  if (field.wire !== 0) return 0;
  const signed = BigInt.asIntN(64, field.varint);
  return Number.isSafeInteger(Number(signed)) ? Number(signed) : signed.toString();
}

export function wireUint(field: WireField): number {
  return field.wire === 0 ? Number(field.varint) : 0;
}

export function wireFixed64(field: WireField): bigint {
  return field.wire === 1 ? Buffer.from(field.fixed64).readBigUInt64LE(0) : 0n;
}

export function wireDouble(field: WireField): number {
  return field.wire === 1 ? Buffer.from(field.fixed64).readDoubleLE(0) : 0;
}

import type { JsonObject, JsonValue, PayloadRef } from '@dura/contracts';

/**
 * Moves the base64 payloads of an observation's blocks (an image's or audio's `data`, an embedded
 * resource's `blob`) to the object store: each is replaced by `dataRef` / `blobRef`, the reference to its
 * decoded bytes. Content-addressed, so a repeat of the call stores nothing new.
 */
export async function storeBinaryBlocks(
  observation: JsonValue,
  storeBytes: (bytes: Uint8Array) => Promise<PayloadRef>,
): Promise<JsonValue> {
  if (!isObject(observation) || !Array.isArray(observation.content)) return observation;
  const content: JsonValue[] = [];
  for (const block of observation.content) {
    if (!isObject(block)) {
      content.push(block);
      continue;
    }
    const out: JsonObject = { ...block };
    if (typeof block.data === 'string') {
      delete out.data;
      out.dataRef = await storeBytes(Buffer.from(block.data, 'base64'));
    }
    const resource = block.resource;
    if (isObject(resource) && typeof resource.blob === 'string') {
      const { blob, ...rest } = resource;
      out.resource = { ...rest, blobRef: await storeBytes(Buffer.from(blob, 'base64')) };
    }
    content.push(out);
  }
  return { ...observation, content };
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

// The test's only I/O: finds and parses the .proto files with protobufjs, the way protoc would see them.
import { readdirSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/google/protobuf/descriptor.json' with { type: 'json' };

/** The package root: the include path (`-I`) the .proto imports are relative to. */
export const PROTO_ROOT = fileURLToPath(new URL('..', import.meta.url));

// protobufjs bundles struct.proto but not descriptor.proto, which the custom options extend.
protobuf.common('google/protobuf/descriptor.proto', descriptor);

/** Every .proto file under the package root, relative to it, with `/` separators. */
export function protoFilesOnDisk(): string[] {
  return readdirSync(join(PROTO_ROOT, 'dura'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.proto'))
    .map((file) =>
      relative(PROTO_ROOT, join(PROTO_ROOT, 'dura', file))
        .split(sep)
        .join('/'),
    )
    .sort();
}

/** Parses the files into one resolved root, keeping proto field names and `//` comments. */
export function loadContract(files: readonly string[]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) =>
    target.startsWith('google/protobuf/') || isAbsolute(target) ? target : join(PROTO_ROOT, target);
  return root.loadSync([...files], { keepCase: true, alternateCommentMode: true });
}

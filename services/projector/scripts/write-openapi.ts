// `npm run openapi`: writes the read API's OpenAPI document to services/projector/openapi.json, formatted
// as the repository formats JSON, so the committed file is the generated one.
import { writeFile } from 'node:fs/promises';
import { format, resolveConfig } from 'prettier';
import { OPENAPI_FILE, openApiDocument } from '../src/index';

const options = (await resolveConfig(OPENAPI_FILE)) ?? {};
await writeFile(
  OPENAPI_FILE,
  await format(JSON.stringify(openApiDocument()), { ...options, parser: 'json' }),
);
process.stdout.write(`wrote ${OPENAPI_FILE}\n`);

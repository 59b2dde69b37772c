import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE, openApiDocument } from '../src/index';

function refsIn(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, out);
  else if (value !== null && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') out.push(inner);
      else refsIn(inner, out);
    }
  return out;
}

describe('the OpenAPI document', () => {
  it('is committed as generated: run `npm run openapi` after changing the read API schemas', () => {
    const committed: unknown = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
    expect(committed).toEqual(openApiDocument());
  });

  it('is OpenAPI 3.1 and every $ref names a component it defines', () => {
    const doc = openApiDocument() as { openapi: string; components: { schemas: Record<string, unknown> } };
    expect(doc.openapi).toBe('3.1.0');
    const refs = [...new Set(refsIn(doc))];
    expect(refs.length).toBeGreaterThan(5);
    for (const ref of refs)
      expect(doc.components.schemas).toHaveProperty(ref.replace('#/components/schemas/', ''));
  });

  it('documents every path of the read API', () => {
    const doc = openApiDocument() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).sort()).toEqual(
      [
        '/healthz',
        '/openapi.json',
        '/projection-errors',
        '/runs',
        '/runs/{id}',
        '/runs/{id}/events',
        '/runs/{id}/events/{seq}/causes',
        '/runs/{id}/state',
        '/runs/{id}/stream',
        '/runs/{id}/signals',
        '/runs/{id}/cancel',
        '/runs/{id}/fork',
        '/runs/{id}/tokens',
        '/console/session',
        '/ui/',
        '/schedules',
        '/schedules/{id}',
        '/schedules/{id}/pause',
        '/schedules/{id}/resume',
        '/schedules/{id}/trigger',
        '/triggers',
        '/triggers/{id}',
        '/events',
        '/agents',
        '/tools',
        '/flow/limits',
        '/chat',
        '/chat/{id}/stream',
        '/chat/{id}/messages',
      ].sort(),
    );
  });
});

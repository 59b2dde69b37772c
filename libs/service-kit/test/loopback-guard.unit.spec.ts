import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loopbackRefusal } from '../src/loopback-guard';

describe('isLoopbackHost', () => {
  it('is true for the addresses only this machine reaches, false for every interface or a name', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', 'localhost', '::1'])
      expect(isLoopbackHost(host)).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', 'dura.example', '127.0.0.1.evil.example'])
      expect(isLoopbackHost(host)).toBe(false);
  });
});

describe('loopbackRefusal', () => {
  it("passes the server's own names with its port, and their pages", () => {
    for (const name of ['127.0.0.1', 'localhost', '[::1]'])
      expect(loopbackRefusal(8080, { host: `${name}:8080`, origin: `http://${name}:8080` })).toBeUndefined();
  });

  it('refuses another Host, a missing one, or its own name on another port', () => {
    for (const host of ['evil.example', 'evil.example:8080', undefined, '127.0.0.1:9090'])
      expect(loopbackRefusal(8080, { host })?.code).toBe('host_forbidden');
  });

  it('refuses an Origin of another site, an opaque one and a malformed one, unless trusted', () => {
    const host = '127.0.0.1:8080';
    for (const origin of ['https://evil.example', 'null', 'not a url', 'http://127.0.0.1:9090'])
      expect(loopbackRefusal(8080, { host, origin })?.code).toBe('origin_forbidden');
    const trusted = new Set(['https://ops.example.com']);
    expect(loopbackRefusal(8080, { host, origin: 'https://ops.example.com' }, trusted)).toBeUndefined();
  });

  it('on port 80 passes the names without a port, as browsers send them', () => {
    expect(loopbackRefusal(80, { host: 'localhost', origin: 'http://localhost' })).toBeUndefined();
    expect(loopbackRefusal(80, { host: 'localhost:80' })).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { parseBenchOptions } from './options';
import { servesWithMore } from './point-deployments';

describe('a deployment serving the next point', () => {
  const separate = { projector: 1, 'tool-gateway': 1, planner: 1 };

  it('serves a point wanting as many replicas or more (F: one gateway, then two)', () => {
    expect(servesWithMore(separate, { gateways: 1, planners: 1 })).toBe(true);
    expect(servesWithMore(separate, { gateways: 2, planners: 1 })).toBe(true);
    expect(servesWithMore({}, { gateways: 1, planners: 1 })).toBe(true);
  });

  it('does not serve a point wanting fewer replicas, or workers where it runs planners and gateways', () => {
    expect(servesWithMore({ ...separate, 'tool-gateway': 2 }, { gateways: 1, planners: 1 })).toBe(false);
    expect(servesWithMore(separate, { gateways: 1, planners: 1, workers: 1 })).toBe(false);
    expect(servesWithMore({ projector: 1, worker: 1 }, { gateways: 1, planners: 1 })).toBe(false);
  });
});

describe('--points-per-deployment', () => {
  it('is 1 at full size (each point on a fresh deployment), and the tiny run shares one among a curve', () => {
    const full = parseBenchOptions([], {});
    const tiny = parseBenchOptions(['--tiny'], {});
    if (full === 'help' || tiny === 'help') throw new Error('expected options, got help');
    expect([full.sizes.pointsPerDeployment, tiny.sizes.pointsPerDeployment]).toEqual([1, 3]);
  });
});

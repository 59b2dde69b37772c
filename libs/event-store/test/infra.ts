import { retryUntil } from '@dura/testing';
export { retryUntil };
import { useNatsConnections, useTestInfra, type TestNatsHandles } from '@dura/testing';

export { useNatsConnections, useTestInfra };
export type NatsHandles = TestNatsHandles;

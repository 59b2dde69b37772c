export { type NatsServerHandle, startNatsServer } from './nats-server';
export type { StartNatsServerOptions } from './nats-options';
export { createTestDatabase, type CreateTestDatabaseOptions, type TestDatabaseHandle } from './test-database';
export {
  type ManagedProcess,
  type ProcessExit,
  spawnManaged,
  type SpawnManagedOptions,
} from './managed-process';
export { runTsEntry, spawnTsEntry, type SpawnTsEntryOptions, type TsEntryResult } from './spawn-ts-entry';
export { type TestInfra, useTestInfra, type UseTestInfraOptions } from './use-test-infra';
export { useFakeLlmServer } from './use-fake-llm-server';
export { type TestNatsHandles, useNatsConnections } from './nats-connections';
export type { InfraMode } from './infra-mode';
export { freePort, waitForPort } from './ports';
export { repoRoot } from './repo-root';
export { eventually, retryUntil } from './eventually';
export {
  lateArrivals,
  type PaymentWitness,
  startPaymentWitness,
  type WitnessCharge,
} from './payment-witness';
export { type OtlpReceiver, type OtlpReceiverStats, startOtlpReceiver } from './otlp-receiver';
export type { ReceivedSpan, ReceivedSpanKind, ReceivedStatusCode } from './otlp-span';
export {
  type PrivatePostgresHandle,
  startPrivatePostgres,
  type StartPrivatePostgresOptions,
} from './private-postgres';
export {
  type FakeLlmReply,
  type FakeLlmRequest,
  type FakeLlmServer,
  type FakeToolCall,
  startFakeLlmServer,
} from './fake-llm-server';
export {
  type NatsClusterHandle,
  type NatsClusterNode,
  type NodeStreamState,
  startNatsCluster,
  type StartNatsClusterOptions,
} from './nats-cluster';
export {
  type ClockControl,
  createClockControl,
  type LimitedDisk,
  mountLimitedDisk,
  pauseProcess,
} from './nemesis';
export { createNetworkLab, type LabHost, type LinkFaults, type NetworkLab } from './netns';
export { openSse, type SseConnection, type SseMessage } from './sse-client';

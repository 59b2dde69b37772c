export { startNatsServer } from './nats-server';
export type { NatsServerHandle } from './nats-server';
export type { StartNatsServerOptions } from './nats-options';
export { createTestDatabase } from './test-database';
export type { TestDatabaseHandle, CreateTestDatabaseOptions } from './test-database';
export { spawnManaged } from './managed-process';
export type { ManagedProcess, ProcessExit, SpawnManagedOptions } from './managed-process';
export { runTsEntry, spawnTsEntry } from './spawn-ts-entry';
export type { SpawnTsEntryOptions, TsEntryResult } from './spawn-ts-entry';
export { useTestInfra } from './use-test-infra';
export { useFakeLlmServer } from './use-fake-llm-server';
export type { TestInfra, UseTestInfraOptions } from './use-test-infra';
export { useNatsConnections } from './nats-connections';
export type { TestNatsHandles } from './nats-connections';
export type { InfraMode } from './infra-mode';
export { freePort, waitForPort } from './ports';
export { repoRoot } from './repo-root';
export { eventually, retryUntil } from './eventually';
export { lateArrivals, startPaymentWitness } from './payment-witness';
export type { PaymentWitness, WitnessCharge } from './payment-witness';
export { startOtlpReceiver } from './otlp-receiver';
export type { OtlpReceiver, OtlpReceiverStats } from './otlp-receiver';
export type { ReceivedSpan, ReceivedSpanKind, ReceivedStatusCode } from './otlp-span';
export { startPrivatePostgres } from './private-postgres';
export type { PrivatePostgresHandle, StartPrivatePostgresOptions } from './private-postgres';
export {
  startFakeLlmServer,
  type FakeLlmServer,
  type FakeLlmReply,
  type FakeLlmRequest,
  type FakeToolCall,
} from './fake-llm-server';
export {
  startNatsCluster,
  type NatsClusterHandle,
  type NatsClusterNode,
  type NodeStreamState,
  type StartNatsClusterOptions,
} from './nats-cluster';
export {
  createClockControl,
  mountLimitedDisk,
  pauseProcess,
  type ClockControl,
  type LimitedDisk,
} from './nemesis';
export { createNetworkLab, type LabHost, type LinkFaults, type NetworkLab } from './netns';
export { openSse } from './sse-client';
export type { SseConnection, SseMessage } from './sse-client';
export { startTcpLink, type TcpLink } from './tcp-link';
export { storedMessages } from './stored-messages';
export { SERVICE_READY, startDuraService, type DuraServiceName } from './dura-service';

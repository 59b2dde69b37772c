export { defineTool, mayRunAgain, ToolError } from './tool';
export type { ToolDefinition, ToolContext, ToolSafety, ToolStatus } from './tool';
export { ToolRegistry } from './registry';
export { BUILTIN_TOOLS, builtinRegistry } from './builtin-registry';
export { createHttpRequestTool } from './builtin/http-request';
export type { HttpRequestToolOptions } from './builtin/http-request';
export { httpRequestConfigShape, egressPolicyFrom } from './egress/egress-config';
export type { HttpRequestSettings } from './egress/egress-config';
export { EgressDenied, assertEgressAllowed } from './egress/egress-policy';
export type { EgressPolicy, EgressTarget } from './egress/egress-policy';
export { parseAllowList, parseAllowEntry, ALLOW_ENTRY_FORMAT } from './egress/allow-list';
export type { AllowEntry } from './egress/allow-list';
export { classifyAddress } from './egress/address-class';
export type { AddressClass, SpecialKind } from './egress/address-class';
export { parseIp, formatIp } from './egress/ip-address';
export type { IpAddress } from './egress/ip-address';
export { systemResolver } from './egress/egress-fetch';
export type { Resolver } from './egress/egress-fetch';
export {
  buildImageTool,
  runTestsTool,
  deployTool,
  notifyTool,
  echoTool,
  failTool,
} from './builtin/demo-tools';
export { loadToolRegistry, toolModulesFrom } from './load-registry';
export { builtinToolsFor, loadServiceTools } from './service-tools';
export type { ServiceToolsConfig } from './service-tools';
export { retryDelayMs } from './retry-policy';
export type { RetryPolicy } from './retry-policy';
export {
  SECRET_TAG,
  SecretEnvelopeSchema,
  isSecretEnvelope,
  mapSecretFields,
  secretPathIssue,
  secretValuesAt,
} from './secrets/secret-fields';
export type { SecretEnvelope, SecretFields } from './secrets/secret-fields';
export {
  createSecretsBox,
  secretsBoxFor,
  SecretsConfigError,
  SECRETS_KEY_FORMAT,
} from './secrets/secrets-box';
export type { SecretsBox } from './secrets/secrets-box';
export { sealSecretFields, openSecretFields, SecretsKeyMissing } from './secrets/seal-fields';

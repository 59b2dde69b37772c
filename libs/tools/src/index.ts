export {
  defineTool,
  mayRunAgain,
  type ToolContext,
  type ToolDefinition,
  ToolError,
  type ToolSafety,
  type ToolStatus,
} from './tool';
export { ToolRegistry } from './registry';
export { BUILTIN_TOOLS, builtinRegistry } from './builtin-registry';
export { createHttpRequestTool, type HttpRequestToolOptions } from './builtin/http-request';
export { egressPolicyFrom, httpRequestConfigShape, type HttpRequestSettings } from './egress/egress-config';
export {
  assertEgressAllowed,
  EgressDenied,
  type EgressPolicy,
  type EgressTarget,
} from './egress/egress-policy';
export { ALLOW_ENTRY_FORMAT, type AllowEntry, parseAllowEntry, parseAllowList } from './egress/allow-list';
export { type AddressClass, classifyAddress, type SpecialKind } from './egress/address-class';
export { formatIp, type IpAddress, parseIp } from './egress/ip-address';
export { type Resolver, systemResolver } from './egress/egress-fetch';
export {
  buildImageTool,
  deployTool,
  echoTool,
  failTool,
  notifyTool,
  runTestsTool,
} from './builtin/demo-tools';
export { loadToolRegistry, toolModulesFrom } from './load-registry';
export { builtinToolsFor, loadServiceTools, type ServiceToolsConfig } from './service-tools';
export { retryDelayMs, type RetryPolicy } from './retry-policy';
export {
  isSecretEnvelope,
  mapSecretFields,
  SECRET_TAG,
  type SecretEnvelope,
  SecretEnvelopeSchema,
  type SecretFields,
  secretPathIssue,
  secretValuesAt,
} from './secrets/secret-fields';
export {
  createSecretsBox,
  SECRETS_KEY_FORMAT,
  type SecretsBox,
  secretsBoxFor,
  SecretsConfigError,
} from './secrets/secrets-box';
export { openSecretFields, sealSecretFields, SecretsKeyMissing } from './secrets/seal-fields';

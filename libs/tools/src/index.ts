export { defineTool, ToolError } from './tool';
export type { ToolDefinition, ToolContext, ToolSafety, ToolStatus } from './tool';
export { ToolRegistry } from './registry';
export { BUILTIN_TOOLS, builtinRegistry } from './builtin-registry';
export { httpRequestTool } from './builtin/http-request';
export {
  buildImageTool,
  runTestsTool,
  deployTool,
  notifyTool,
  echoTool,
  failTool,
} from './builtin/demo-tools';
export { loadToolRegistry, toolModulesFrom } from './load-registry';
export { loadServiceTools } from './service-tools';
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

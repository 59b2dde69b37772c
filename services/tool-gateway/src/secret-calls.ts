import { DuraError, type JsonObject, type JsonValue, type ToolTask } from '@dura/contracts';
import { openSecretFields, sealSecretFields, type SecretsBox, type ToolRegistry } from '@dura/tools';

/**
 * Where the gateway handles secrets: a call's secret argument fields are opened only for the tool itself
 * (the ledger, outbox and log keep the task as it came, sealed), and its secret result fields are sealed
 * before the result is recorded anywhere. A sealed value is opened only at a field its tool declares
 * secret, so a tool can never be handed a secret through a field it might echo into its result.
 */
export function createSecretCalls(tools: ToolRegistry, box: SecretsBox | undefined) {
  /** The task as the tool sees it; a `secret_unreadable` or `secrets_key_missing` DuraError when it cannot be. */
  function opened(task: ToolTask): ToolTask {
    const paths = tools.secretFields(task.tool).args;
    if (paths.length === 0) return task;
    const args = openSecretFields(
      task.args,
      paths,
      box,
      task.correlationId,
      `the call ${task.idempotencyKey}`,
    );
    return args === task.args ? task : { ...task, args: args as JsonObject };
  }

  /** The result as the ledger and the log may hold it. */
  function sealedResult(task: ToolTask, result: JsonValue): JsonValue {
    const paths = tools.secretFields(task.tool).result;
    if (paths.length === 0) return result;
    return sealSecretFields(result, paths, box, task.correlationId, `the result of ${task.idempotencyKey}`);
  }

  return { opened, sealedResult };
}

export type SecretCalls = ReturnType<typeof createSecretCalls>;

/** A secrets failure as a tool failure: terminal, since the same key and task will not open next time. */
export function secretFailure(err: unknown): { code: string; message: string; retryable: false } {
  if (err instanceof DuraError) return { code: err.code, message: err.message, retryable: false };
  throw err;
}

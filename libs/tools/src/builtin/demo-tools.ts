import * as z from 'zod';
import { argsHash } from '@dura/core';
import { defineTool, ToolError } from '../tool';

/**
 * Demo tools for the README's deploy pipeline. They are deterministic (results derive from the arguments),
 * touch nothing outside the process, and their effects are visible in the gateway's effect ledger.
 */
export const buildImageTool = defineTool({
  name: 'demo.build',
  description: 'Build a container image for a service at a commit.',
  input: z.object({ service: z.string().min(1), commit: z.string().min(7) }),
  safety: 'idempotent',
  execute: async ({ service, commit }) => {
    await Promise.resolve();
    return {
      imageTag: `${service}:${commit.slice(0, 7)}`,
      digest: `sha256:${argsHash({ service, commit })}`,
    };
  },
});

export const runTestsTool = defineTool({
  name: 'demo.test',
  description: 'Run the test suite against an image.',
  input: z.object({ imageTag: z.string().min(1) }),
  safety: 'idempotent',
  execute: async ({ imageTag }) => {
    await Promise.resolve();
    return { imageTag, passed: true, tests: 42 + (parseInt(argsHash({ imageTag }).slice(0, 2), 16) % 20) };
  },
});

export const deployTool = defineTool({
  name: 'demo.deploy',
  description: 'Deploy an image to an environment.',
  input: z.object({ imageTag: z.string().min(1), environment: z.enum(['staging', 'production']) }),
  safety: 'unsafe',
  execute: async ({ imageTag, environment }, ctx) => {
    await Promise.resolve();
    return {
      environment,
      imageTag,
      deploymentId: `dep-${argsHash({ key: ctx.idempotencyKey }).slice(0, 12)}`,
    };
  },
});

export const notifyTool = defineTool({
  name: 'demo.notify',
  description: 'Post a message to a team channel.',
  input: z.object({ channel: z.string().min(1), message: z.string().min(1) }),
  safety: 'unsafe',
  execute: async ({ channel, message }) => {
    await Promise.resolve();
    return { channel, delivered: true, length: message.length };
  },
});

/** Returns its arguments: the no-op tool for tests and benchmarks. */
export const echoTool = defineTool({
  name: 'echo',
  description: 'Return the arguments unchanged.',
  input: z.record(z.string(), z.unknown()),
  safety: 'read_only',
  execute: async (args) => {
    await Promise.resolve();
    return args as never;
  },
});

/** Fails on purpose; `retryable` chooses the kind of failure. For tests of failure handling. */
export const failTool = defineTool({
  name: 'demo.fail',
  description: 'Always fail with the given message.',
  input: z.object({
    message: z.string().default('failed on purpose'),
    retryable: z.boolean().default(false),
  }),
  safety: 'idempotent',
  execute: async ({ message, retryable }) => {
    await Promise.resolve();
    throw new ToolError('demo_failure', message, { retryable });
  },
});

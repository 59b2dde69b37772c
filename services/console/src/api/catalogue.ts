import { useMutation, useQuery } from '@tanstack/react-query';
import * as z from 'zod';
import { AgentListSchema, RunIdSchema, ToolListSchema, type JsonValue } from '@dura/contracts';
import { api } from './http';

/** The agents the session's tenant may start (`GET /agents`). */
export const useAgents = () =>
  useQuery({ queryKey: ['agents'], queryFn: ({ signal }) => api(AgentListSchema, '/agents', { signal }) });

/** The tools the gateways run (`GET /tools`). */
export const useTools = () =>
  useQuery({ queryKey: ['tools'], queryFn: ({ signal }) => api(ToolListSchema, '/tools', { signal }) });

const Accepted = z.object({ runId: RunIdSchema, duplicate: z.boolean() });

/** Starts a run of an agent (`POST /runs`, scope `submit`); answers the new run's id. */
export const useStartRun = (onStarted: (runId: string) => void) =>
  useMutation({
    mutationFn: (request: { name: string; version?: string; input?: JsonValue }) =>
      api(Accepted, '/runs', {
        method: 'POST',
        body: {
          agent: {
            kind: 'agent',
            name: request.name,
            ...(request.version === undefined ? {} : { version: request.version }),
          },
          ...(request.input === undefined ? {} : { input: request.input }),
        },
      }),
    onSuccess: (answer) => onStarted(answer.runId),
  });

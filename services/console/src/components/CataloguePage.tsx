import { useEffect, useMemo, useState, type FormEvent } from 'react';
import type { AgentList, ConsoleSession, ToolList } from '@dura/contracts';
import { useAgents, useStartRun, useTools } from '../api/catalogue';
import { pageTitle } from '../model/format';
import { navigate, runPath } from '../model/router';
import { formOf, initialDraft, inputOf, setDraft, type Draft, type FormErrors } from '../model/schema-form';
import { PlainTable } from './PlainTable';
import { SchemaForm } from './SchemaForm';

type Agent = AgentList['agents'][number];
type Tool = ToolList['tools'][number];

/**
 * `/ui/agents`: the agents the session's tenant may start (name, versions, kind, input schema) and the tools
 * the gateways run (safety class, limits), with a form that starts a run for a token with scope `submit`.
 */
export function CataloguePage({ session }: { session: ConsoleSession }) {
  const agents = useAgents();
  const tools = useTools();
  const [chosen, setChosen] = useState<string>();
  useEffect(() => {
    document.title = pageTitle('Agents and tools');
  }, []);
  const list = agents.data?.agents ?? [];
  const mayStart = session.scopes.includes('submit');
  return (
    <div className="catalogue">
      <h1>Agents and tools</h1>
      <p className="muted">
        What the running planners and gateways announce they serve; an agent or tool none of them serves any
        more leaves this list within minutes.
      </p>
      {mayStart && list.length > 0 && (
        <StartRun agents={list} chosen={chosen ?? list[0]?.name ?? ''} onChoose={setChosen} />
      )}
      <section aria-label="Agents">
        <h2>Agents</h2>
        {agents.error && <p className="error">{agents.error.message}</p>}
        {agents.data && list.length === 0 && <p className="muted">No agent is announced for this tenant.</p>}
        {list.length > 0 && (
          <PlainTable testId="agents" columns={['Name', 'Versions', 'Kind', 'Tools', 'Input schema']}>
            {list.map((agent) => (
              <AgentRow
                key={agent.name}
                agent={agent}
                onStart={
                  mayStart
                    ? () => {
                        setChosen(agent.name);
                        window.scrollTo({ top: 0 });
                      }
                    : undefined
                }
              />
            ))}
          </PlainTable>
        )}
      </section>
      <section aria-label="Tools">
        <h2>Tools</h2>
        {tools.error && <p className="error">{tools.error.message}</p>}
        {tools.data && tools.data.tools.length === 0 && <p className="muted">No tool is announced.</p>}
        {tools.data && tools.data.tools.length > 0 && (
          <PlainTable
            testId="tools"
            columns={['Name', 'Safety', 'Concurrency', 'Timeout', 'Attempts', 'Approval', 'Description']}
          >
            {tools.data.tools.map((tool) => (
              <ToolRow key={tool.name} tool={tool} />
            ))}
          </PlainTable>
        )}
      </section>
    </div>
  );
}

function AgentRow({ agent, onStart }: { agent: Agent; onStart: (() => void) | undefined }) {
  const newest = agent.versions.at(-1);
  return (
    <tr data-agent={agent.name}>
      <td>
        <strong>{agent.name}</strong>
        {newest?.description && <div className="muted">{newest.description}</div>}
        {onStart && (
          <button type="button" className="linkish start-link" onClick={onStart}>
            Start a run…
          </button>
        )}
      </td>
      <td data-testid="versions">{agent.versions.map((v) => v.version).join(', ')}</td>
      <td data-testid="kind">{newest?.kind}</td>
      <td>{newest?.tools.join(', ') || <span className="muted">none</span>}</td>
      <td>
        {newest?.inputSchema ? (
          <details>
            <summary>schema</summary>
            <pre className="schema">{JSON.stringify(newest.inputSchema, null, 2)}</pre>
          </details>
        ) : (
          <span className="muted">any JSON</span>
        )}
      </td>
    </tr>
  );
}

function ToolRow({ tool }: { tool: Tool }) {
  const { limits } = tool;
  const approval = limits.approval.required
    ? `required${limits.approval.timeoutSeconds ? ` within ${limits.approval.timeoutSeconds} s` : ''}${limits.approval.onTimeout ? `, then ${limits.approval.onTimeout}` : ''}`
    : 'no';
  return (
    <tr data-tool={tool.name}>
      <td className="mono">{tool.name}</td>
      <td data-testid="safety">
        <span className={`safety safety-${tool.safety}`}>{tool.safety.replace('_', ' ')}</span>
      </td>
      <td data-testid="concurrency">{limits.concurrency ?? 'unlimited'}</td>
      <td>{limits.timeoutMs / 1000} s</td>
      <td>{limits.attempts}</td>
      <td data-testid="approval">{approval}</td>
      <td className="muted">{tool.description}</td>
    </tr>
  );
}

/** Agent, version and the input as a form from the version's input schema; on success, the new run's page. */
function StartRun({
  agents,
  chosen,
  onChoose,
}: {
  agents: Agent[];
  chosen: string;
  onChoose: (name: string) => void;
}) {
  const agent = agents.find((a) => a.name === chosen) ?? agents[0];
  const [version, setVersion] = useState<string>('');
  const picked = agent?.versions.find((v) => v.version === version) ?? agent?.versions.at(-1);
  const form = useMemo(() => formOf(picked?.inputSchema), [picked]);
  const [draft, setDraftState] = useState<Draft>(() => initialDraft(form));
  const [errors, setErrors] = useState<FormErrors>({});
  useEffect(() => {
    setDraftState(initialDraft(form));
    setErrors({});
  }, [form]);
  const start = useStartRun((runId) => navigate(runPath(runId)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const { input, errors: found } = inputOf(form, draft);
    setErrors(found);
    if (!agent || Object.keys(found).length > 0) return;
    start.mutate({
      name: agent.name,
      ...(version ? { version } : {}),
      ...(input === undefined ? {} : { input }),
    });
  };
  return (
    <form className="start-run" onSubmit={submit} data-testid="start-run" noValidate>
      <h2>Start a run</h2>
      <div className="start-run-pick">
        <label>
          Agent
          <select
            name="agent"
            value={agent?.name ?? ''}
            onChange={(e) => {
              onChoose(e.target.value);
              setVersion('');
            }}
          >
            {agents.map((a) => (
              <option key={a.name} value={a.name}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Version
          <select name="version" value={version} onChange={(e) => setVersion(e.target.value)}>
            <option value="">newest ({agent?.versions.at(-1)?.version})</option>
            {agent?.versions.map((v) => (
              <option key={v.version} value={v.version}>
                {v.version}
              </option>
            ))}
          </select>
        </label>
        {picked && <span className="muted">{picked.kind} agent</span>}
      </div>
      <SchemaForm
        field={form}
        draft={draft}
        errors={errors}
        onChange={(path, value) => {
          setDraftState((d) => setDraft(d, path, value));
          // An edited field's error is stale: it is checked again on the next start.
          setErrors(({ [path]: _edited, ...rest }) => rest);
        }}
      />
      {Object.keys(errors).length > 0 && (
        <p className="error" role="alert">
          Fix the fields marked above.
        </p>
      )}
      {start.error && (
        <p className="error" role="alert" data-testid="start-error">
          {start.error.message}
        </p>
      )}
      <button type="submit" disabled={start.isPending}>
        {start.isPending ? 'Starting…' : 'Start run'}
      </button>
    </form>
  );
}

// Submits a run request (a JSON file such as requests/invoice.json) to Dura and follows the run to its end,
// printing each event: `node src/submit.ts requests/invoice.json [run-id]`. NATS_URL names the broker
// (default nats://127.0.0.1:4222); NATS_USER, NATS_CREDS_FILE, NATS_TLS_* … as for the services.
import { readFileSync } from 'node:fs';
import { connectDuraClient, formatEvent, natsSecurityFromEnv, type SubmitRunInput } from '@dura/client';

const [file, runId] = process.argv.slice(2);
if (!file) {
  console.error('usage: node src/submit.ts <request.json> [run-id]');
  process.exit(2);
}
const request = JSON.parse(readFileSync(file, 'utf8')) as SubmitRunInput;

const client = connectDuraClient({
  natsUrl: process.env['NATS_URL'] ?? 'nats://127.0.0.1:4222',
  security: natsSecurityFromEnv(),
});
try {
  // The run id is the submit's idempotency key: submitting the same id again starts nothing.
  const submitted = await client.submitRun(runId ? { ...request, runId } : request);
  console.log(`${submitted.duplicate ? 'already submitted' : 'submitted'} ${submitted.runId}`);
  let last = '';
  for await (const event of client.watchRun(submitted.runId)) {
    console.log(formatEvent(event));
    last = event.type;
  }
  // Exit 0 only for a run that completed.
  process.exitCode = last === 'run_completed' ? 0 : 1;
} finally {
  await client.close();
}

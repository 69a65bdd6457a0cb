// SPDX-License-Identifier: GPL-3.0-or-later
//
// run_task's session options through the official MCP TypeScript SDK client
// over stdio (`sightline mcp`), as an MCP host calls them: `record` (the
// task's run links a WebM recording), `keepOpen` (the session the tool
// opened outlives the task, takes further tasks on the same page, and ends
// with stop_session), and the invalid_input refusals of the options that
// apply only when the tool opens the session. Prints one TAP line per check.

import { closeSync, existsSync, openSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { bin, check, makeHome, startChild, stopChild, tap } from './common.mjs';

const LONG = { timeout: 150000 };
const { home, env } = makeHome('sightline-mcp-task-');
// TASK_STDERR=1 G_MESSAGES_DEBUG=… shows the server's log, to debug a failure.
if (process.env.TASK_STDERR && process.env.G_MESSAGES_DEBUG) env.G_MESSAGES_DEBUG = process.env.G_MESSAGES_DEBUG;

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// A WebM file begins with the EBML magic 1A 45 DF A3.
function isWebm(path) {
  if (typeof path !== 'string' || !existsSync(path)) return false;
  const fd = openSync(path, 'r');
  const head = Buffer.alloc(4);
  try {
    readSync(fd, head, 0, 4, 0);
  } finally {
    closeSync(fd);
  }
  return head.equals(Buffer.from([0x1a, 0x45, 0xdf, 0xa3]));
}

const modelScript = {
  rules: [
    { match: 'Task: Report the page heading',
      response: { tool_calls: [{ name: 'done', arguments: { verdict: 'pass', summary: 'The heading is Pricing.' } }] } },
    { match: 'Task: Open the status page',
      response: { tool_calls: [{ name: 'done', arguments: { verdict: 'pass', summary: 'The page is where it was.' } }] } },
  ],
};

async function task(client, args) {
  return client.callTool({ name: 'run_task', arguments: { goal: 'Report the page heading', maxSteps: 3, ...args } },
    undefined, LONG);
}

async function sessionStatus(client, sessionId) {
  const got = await client.callTool({ name: 'get_session', arguments: { sessionId } });
  return got.structuredContent?.status;
}

// record without keepOpen: the tool's session closes with the task, and the
// run links the recording at once.
async function recorded(client, demo) {
  const ran = await task(client, { startUrl: demo + 'pricing', record: true });
  const sessionId = ran.structuredContent?.sessionId;
  const taskId = ran.structuredContent?.task?.taskId;
  check('record: the task finishes and its session is closed', ran.isError !== true &&
    ran.structuredContent?.task?.stoppedBy === 'done' &&
    ran.structuredContent?.sessionClosed === true && /^tsk_/.test(taskId), ran);
  check('record: the task names its recording, a WebM file',
    isWebm(ran.structuredContent?.task?.video), ran.structuredContent?.task?.video);
  check('record: the closed session is not live', await sessionStatus(client, sessionId) !== 'live');
  const report = await client.callTool({ name: 'get_report', arguments: { id: taskId, waitSeconds: 0 } });
  check('record: get_report links the same recording', report.isError !== true &&
    report.structuredContent?.video === ran.structuredContent?.task?.video &&
    textOf(report).includes(`Video of the run: ${report.structuredContent?.video}`), report);
  const again = await task(client, { sessionId });
  check('record: a task on the closed session is refused', again.isError === true &&
    typeof again.structuredContent?.error?.code === 'string', again);

  const plain = await task(client, { startUrl: demo + 'pricing' });
  check('no record: the task names no recording', plain.isError !== true &&
    plain.structuredContent?.sessionClosed === true &&
    plain.structuredContent?.task?.video === undefined, plain.structuredContent);
}

// keepOpen (with record): the session stays live on the task's page, a
// second task runs on it and leaves it open, and stop_session ends it; the
// recording then joins the first task's run.
async function keptOpen(client, demo) {
  const ran = await task(client, { startUrl: demo + 'pricing', keepOpen: true, record: true });
  const sessionId = ran.structuredContent?.sessionId;
  const taskId = ran.structuredContent?.task?.taskId;
  check('keepOpen: the task finishes and its session stays open', ran.isError !== true &&
    ran.structuredContent?.task?.stoppedBy === 'done' &&
    ran.structuredContent?.sessionClosed === false && /is still open/.test(textOf(ran)), ran);
  check('keepOpen: the session is live', await sessionStatus(client, sessionId) === 'live');
  const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
  check('keepOpen: list_sessions lists it',
    listed.structuredContent?.sessions?.some((s) => s.id === sessionId && s.status === 'live'),
    listed.structuredContent);
  const open = await client.callTool({ name: 'get_report', arguments: { id: taskId, waitSeconds: 0 } });
  check('keepOpen: the report lacks the log while the session is open',
    open.structuredContent?.notes?.[0]?.startsWith('The session log is not available') === true &&
    open.structuredContent?.video === undefined, open.structuredContent);

  const second = await client.callTool({ name: 'run_task',
    arguments: { goal: 'Open the status page', sessionId, keepOpen: false } }, undefined, LONG);
  check('keepOpen: a second task runs on the same session and leaves it open',
    second.isError !== true && second.structuredContent?.sessionId === sessionId &&
    second.structuredContent?.sessionClosed === false &&
    second.structuredContent?.task?.taskId !== taskId &&
    await sessionStatus(client, sessionId) === 'live', second);
  const latest = await client.callTool({ name: 'get_task', arguments: { sessionId, waitSeconds: 0 } });
  check('keepOpen: get_task reads the session\'s latest task',
    latest.structuredContent?.taskId === second.structuredContent?.task?.taskId, latest.structuredContent);
  const first = await client.callTool({ name: 'get_task', arguments: { sessionId, taskId, waitSeconds: 0 } });
  check('keepOpen: get_task still reads the first task by id',
    first.structuredContent?.taskId === taskId && first.structuredContent?.status === 'finished',
    first.structuredContent);

  const stopped = await client.callTool({ name: 'stop_session', arguments: { sessionId } });
  check('keepOpen: stop_session closes it', stopped.structuredContent?.closed === true &&
    await sessionStatus(client, sessionId) !== 'live', stopped);
  // The recording is linked once it is written: get_report waits for it.
  let closed;
  for (const until = Date.now() + 20000; ;) {
    closed = await client.callTool({ name: 'get_report', arguments: { id: taskId, waitSeconds: 0 } });
    if (closed.structuredContent?.video !== undefined || Date.now() >= until) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  check('keepOpen: after stop_session the report has the log and the recording',
    (closed.structuredContent?.notes ?? []).length === 0 && isWebm(closed.structuredContent?.video),
    closed.structuredContent);
}

// The options that apply only when the tool opens the session.
async function refusals(client, demo) {
  const created = await client.callTool({ name: 'create_session', arguments: { startUrl: demo + 'pricing' } });
  const sessionId = created.structuredContent?.id;
  for (const [name, value] of [['record', true], ['record', false], ['startUrl', demo],
    ['headers', []], ['credentials', true]]) {
    const refused = await task(client, { sessionId, [name]: value });
    check(`refused: ${name} with sessionId is invalid_input naming it`,
      refused.isError === true && refused.structuredContent?.error?.code === 'invalid_input' &&
      textOf(refused).startsWith('[invalid_input] ') && textOf(refused).includes(name), refused);
  }
  const noStart = await task(client, { record: true });
  check('refused: record without sessionId or startUrl is invalid_input',
    noStart.isError === true && noStart.structuredContent?.error?.code === 'invalid_input', noStart);
  const notBool = await task(client, { startUrl: demo + 'pricing', keepOpen: 'yes' });
  check('refused: keepOpen that is not a boolean is invalid_input',
    notBool.isError === true && notBool.structuredContent?.error?.code === 'invalid_input', notBool);
  const unknown = await task(client, { sessionId: 'sess_nope', keepOpen: true });
  check('refused: an unknown sessionId is not_found',
    unknown.isError === true && unknown.structuredContent?.error?.code === 'not_found', unknown);
  // No session was opened by the refusals: only the one made here is live.
  const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
  const live = (listed.structuredContent?.sessions ?? []).filter((s) => s.status === 'live');
  check('refused: no refusal opened a session', live.length === 1 && live[0].id === sessionId,
    listed.structuredContent);
  await client.callTool({ name: 'stop_session', arguments: { sessionId } });
}

function startDemo() {
  return startChild('stdbuf', ['-oL', bin, 'demo-site', '--port', '0'], env, 'the demo site',
    (out) => {
      const match = out.match(/(http:\/\/127\.0\.0\.1:\d+\/)/);
      return match ? { url: match[1] } : null;
    });
}

function startModel() {
  const script = join(home, 'model-script.json');
  writeFileSync(script, JSON.stringify(modelScript));
  return startChild('stdbuf', ['-oL', process.env.SIGHTLINE_SCRIPTED_MODEL_SERVER, '--script', script],
    env, 'the scripted model', (out) => {
      const match = out.match(/OPENAI_BASE_URL=(\S+)/);
      return match ? { url: match[1] } : null;
    });
}

let demo;
let model;
try {
  if (!process.env.SIGHTLINE_SCRIPTED_MODEL_SERVER) {
    console.log('1..0 # SKIP SIGHTLINE_SCRIPTED_MODEL_SERVER is not set');
    process.exit(0);
  }
  demo = await startDemo();
  model = await startModel();
  env.SIGHTLINE_MODEL = 'openai:gpt-4.1';
  env.OPENAI_BASE_URL = model.url;
  const transport = new StdioClientTransport({ command: bin, args: ['mcp'], env, stderr: process.env.TASK_STDERR ? 'inherit' : 'ignore' });
  const client = new Client({ name: 'sightline-task-test', version: '1.0.0' });
  await client.connect(transport);
  await recorded(client, demo.url);
  await keptOpen(client, demo.url);
  await refusals(client, demo.url);
  await client.close();
} catch (error) {
  check(`no exception (${error?.message ?? error})`, false, String(error?.stack ?? error));
} finally {
  await stopChild(demo?.child);
  await stopChild(model?.child);
  rmSync(home, { recursive: true, force: true, maxRetries: 5 });
}

console.log(`1..${tap.n}`);
console.log(`${tap.passed} passed, ${tap.failed} failed`);
process.exit(tap.failed === 0 ? 0 : 1);

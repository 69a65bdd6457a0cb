// SPDX-License-Identifier: GPL-3.0-or-later
//
// Drives `sightline mcp` (stdio) and `sightline serve` (Streamable HTTP) with
// the official MCP TypeScript SDK client, as an MCP host would. Prints one
// TAP line per check and a closing "N passed, N failed" line.

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { bin, check, makeHome, startChild, startServe, stopChild, tap } from './common.mjs';

const SPEC_TOOLS = ['create_session', 'run_task', 'get_task', 'smoke_test', 'get_report',
  'list_sessions', 'get_session', 'stop_session', 'scrape', 'screenshot', 'pdf', 'crawl',
  'list_skills', 'run_skill', 'get_skill_run'];

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const { home, env } = makeHome('sightline-mcp-client-');

// What both transports must show the same way.
async function exercise(client, label, demo) {
  const info = client.getServerVersion();
  check(`${label}: server is sightline`, info?.name === 'sightline', info);
  check(`${label}: tools capability`, client.getServerCapabilities()?.tools !== undefined);

  await client.ping();
  check(`${label}: ping`, true);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  check(`${label}: the spec's 15 tools are listed`, SPEC_TOOLS.every((t) => names.includes(t)),
    names);
  check(`${label}: act, assert, wait_for and extract are listed`,
    ['act', 'assert', 'wait_for', 'extract'].every((t) => names.includes(t)));
  const runTask = tools.find((t) => t.name === 'run_task');
  check(`${label}: run_task waitSeconds is 1..90, default 90`,
    runTask.inputSchema.properties.waitSeconds.minimum === 1 &&
    runTask.inputSchema.properties.waitSeconds.maximum === 90 &&
    runTask.inputSchema.properties.waitSeconds.default === 90 &&
    runTask.inputSchema.required.includes('goal'), runTask.inputSchema.properties.waitSeconds);
  check(`${label}: every input schema refuses unknown fields`,
    tools.every((t) => t.inputSchema.additionalProperties === false));

  // Argument problems: invalid_input, with the issues.
  const tooLong = await client.callTool({ name: 'run_task', arguments: { goal: 'g', waitSeconds: 91 } });
  check(`${label}: waitSeconds 91 is invalid_input`,
    tooLong.isError === true && textOf(tooLong).startsWith('[invalid_input] ') &&
    tooLong.structuredContent?.error?.code === 'invalid_input' &&
    tooLong.structuredContent.error.details.issues[0].path[0] === 'waitSeconds', tooLong);

  const unknownField = await client.callTool({ name: 'scrape', arguments: { url: 'https://example.test', colour: 'red' } });
  check(`${label}: an unknown field is invalid_input`,
    unknownField.isError === true && unknownField.structuredContent?.error?.code === 'invalid_input',
    unknownField);

  const unknownTool = await client.callTool({ name: 'no_such_tool', arguments: {} });
  check(`${label}: an unknown tool is not_found`,
    unknownTool.isError === true && textOf(unknownTool).startsWith('[not_found] '), unknownTool);

  check(`${label}: skill_smoke_uat is listed for the built-in skill`,
    names.includes('skill_smoke_uat'), names);

  // Runner tools on the demo site: sessions, scrape, screenshot, with
  // progress asked for (over HTTP that makes the answer a stream).
  let progressSeen = 0;
  const created = await client.callTool({ name: 'create_session', arguments: { startUrl: demo } },
    undefined, { onprogress: () => { progressSeen += 1; } });
  check(`${label}: create_session opens a live sess_ session`, created.isError !== true &&
    /^sess_/.test(created.structuredContent?.id) && created.structuredContent?.status === 'live',
    created);
  const id = created.structuredContent?.id;
  const listed = await client.callTool({ name: 'list_sessions', arguments: {} });
  check(`${label}: list_sessions lists it`,
    listed.structuredContent?.sessions?.some((s) => s.id === id), listed);
  const stopped = await client.callTool({ name: 'stop_session', arguments: { sessionId: id } });
  check(`${label}: stop_session closes it`, stopped.structuredContent?.deleted === true &&
    stopped.structuredContent?.closed === true, stopped);
  const again = await client.callTool({ name: 'stop_session', arguments: { sessionId: id } });
  check(`${label}: stop_session again is safe`, again.structuredContent?.deleted === true &&
    again.structuredContent?.closed === false, again);
  const missing = await client.callTool({ name: 'get_session', arguments: { sessionId: 'sess_nope' } });
  check(`${label}: get_session of an unknown id is not_found`,
    missing.isError === true && missing.structuredContent?.error?.code === 'not_found', missing);

  const page = await client.callTool({ name: 'scrape', arguments: { url: demo + 'pricing', format: ['markdown'] } });
  check(`${label}: scrape returns the pricing page as markdown`, page.isError !== true &&
    typeof page.structuredContent?.content?.markdown === 'string' &&
    page.structuredContent.content.markdown.length > 0 &&
    page.structuredContent.metadata?.statusCode === 200, page.structuredContent ?? page);

  const shot = await client.callTool({ name: 'screenshot', arguments: { url: demo, fullPage: false } });
  const image = (shot.content ?? []).find((c) => c.type === 'image');
  check(`${label}: screenshot returns a PNG image`, shot.isError !== true && image?.mimeType === 'image/png' &&
    Buffer.from(image.data, 'base64').subarray(1, 4).toString() === 'PNG', shot.isError ? shot : image?.mimeType);

  await exerciseTests(client, label, demo);
  if (model) await exerciseAgent(client, label, demo);
}

// Calls that wait longer than the SDK's default request timeout of 60 s.
const LONG = { timeout: 150000 };

// smoke_test, get_report and the skills.
async function exerciseTests(client, label, demo) {
  const smoke = await client.callTool({ name: 'smoke_test',
    arguments: { url: demo + 'pricing', maxLinks: 0, expectText: 'Pricing' } }, undefined, LONG);
  const runId = smoke.structuredContent?.id;
  check(`${label}: smoke_test passes on the pricing page`, smoke.isError !== true &&
    smoke.structuredContent?.verdict === 'pass' && /^run_/.test(runId) &&
    textOf(smoke).startsWith(`Smoke test of ${demo}pricing PASSED in `), smoke);
  const report = await client.callTool({ name: 'get_report', arguments: { id: runId, waitSeconds: 0 } });
  check(`${label}: get_report reads the same run`, report.isError !== true &&
    report.structuredContent?.id === runId && report.structuredContent?.verdict === 'pass', report);
  const noReport = await client.callTool({ name: 'get_report', arguments: { id: 'run_nope' } });
  check(`${label}: get_report of an unknown id is not_found`,
    noReport.structuredContent?.error?.code === 'not_found', noReport);

  const skills = await client.callTool({ name: 'list_skills', arguments: {} });
  check(`${label}: list_skills lists smoke-uat`, skills.isError !== true &&
    skills.structuredContent?.skills?.[0]?.name === 'smoke-uat' &&
    skills.structuredContent.skills[0].tool === 'skill_smoke_uat', skills);
  const started = await client.callTool({ name: 'run_skill',
    arguments: { name: 'smoke-uat', inputs: { url: demo + 'pricing', maxLinks: 0 } } });
  check(`${label}: run_skill starts a run without waiting`, started.isError !== true &&
    /^run_/.test(started.structuredContent?.runId) && started.structuredContent?.status === 'running',
    started);
  const read = await client.callTool({ name: 'get_skill_run',
    arguments: { runId: started.structuredContent?.runId, waitSeconds: 60 } }, undefined, LONG);
  check(`${label}: get_skill_run waits for the verdict`, read.isError !== true &&
    read.structuredContent?.status === 'passed' && read.structuredContent?.skill === 'smoke-uat',
    read);
  const typed = await client.callTool({ name: 'skill_smoke_uat',
    arguments: { url: demo + 'status', maxLinks: 0, expectText: 'No such text anywhere',
      options: { waitSeconds: 60 } } }, undefined, LONG);
  check(`${label}: skill_smoke_uat returns a failed run as a normal result`,
    typed.isError !== true && typed.structuredContent?.status === 'failed' &&
    textOf(typed).startsWith('Skill smoke-uat, version 1, run run_'), typed);
}

// The agent on an open session and a task, with the scripted model.
async function exerciseAgent(client, label, demo) {
  const created = await client.callTool({ name: 'create_session', arguments: { startUrl: demo + 'pricing' } });
  const sessionId = created.structuredContent?.id;
  const acted = await client.callTool({ name: 'act',
    arguments: { sessionId, instruction: 'check that nothing needs doing' } }, undefined, LONG);
  check(`${label}: act passes with the agent's summary`, acted.isError !== true &&
    acted.structuredContent?.verdict === 'pass' &&
    acted.structuredContent?.summary === 'Nothing needs doing.', acted);
  const asserted = await client.callTool({ name: 'assert',
    arguments: { sessionId, assertion: 'the heading says Pricing' } }, undefined, LONG);
  check(`${label}: assert passes`, asserted.isError !== true &&
    asserted.structuredContent?.verdict === 'pass', asserted);
  const refuted = await client.callTool({ name: 'assert',
    arguments: { sessionId, assertion: 'a trial badge is shown', screenshot: false } }, undefined, LONG);
  check(`${label}: a false assert is isError ASSERTION_FAILED`, refuted.isError === true &&
    textOf(refuted).startsWith('[ASSERTION_FAILED] '), refuted);
  const waited = await client.callTool({ name: 'wait_for',
    arguments: { sessionId, condition: 'the plans are listed', interval: 100, timeout: 20000 } },
  undefined, LONG);
  check(`${label}: wait_for passes`, waited.isError !== true &&
    waited.structuredContent?.verdict === 'pass', waited);
  const extracted = await client.callTool({ name: 'extract',
    arguments: { sessionId, instruction: 'the page heading',
      schema: { type: 'object', required: ['heading'], properties: { heading: { type: 'string' } } } } },
  undefined, LONG);
  check(`${label}: extract returns the value`, extracted.isError !== true &&
    extracted.structuredContent?.value?.heading === 'Pricing', extracted);

  const task = await client.callTool({ name: 'run_task',
    arguments: { goal: 'Report the page heading', sessionId, maxSteps: 3 } }, undefined, LONG);
  check(`${label}: run_task finishes with the answer`, task.isError !== true &&
    task.structuredContent?.task?.stoppedBy === 'done' &&
    task.structuredContent.task.answer === 'The heading is Pricing.' &&
    /^tsk_/.test(task.structuredContent.task.taskId) &&
    textOf(task).startsWith('Task finished (done) in 0 steps'), task);
  const got = await client.callTool({ name: 'get_task', arguments: { sessionId, waitSeconds: 0 } });
  check(`${label}: get_task reads the finished task`, got.isError !== true &&
    got.structuredContent?.status === 'finished' &&
    got.structuredContent?.taskId === task.structuredContent?.task?.taskId, got);
  await client.callTool({ name: 'stop_session', arguments: { sessionId } });
  const taskReport = await client.callTool({ name: 'get_report',
    arguments: { id: task.structuredContent?.task?.taskId } });
  check(`${label}: get_report of the task passes`, taskReport.isError !== true &&
    taskReport.structuredContent?.verdict === 'pass' &&
    textOf(taskReport).startsWith('Task "Report the page heading" finished in '), taskReport);
}

// The scripted model server of the tests, answering by what each request
// asks, so both transports can run the same calls in any order.
const modelScript = {
  rules: [
    { match: 'Task: check that nothing needs doing',
      response: { tool_calls: [{ name: 'done', arguments: { verdict: 'pass', summary: 'Nothing needs doing.' } }] } },
    { match: 'Task: Report the page heading',
      response: { tool_calls: [{ name: 'done', arguments: { verdict: 'pass', summary: 'The heading is Pricing.' } }] } },
    { match: 'the heading says Pricing',
      response: { json: { verdict: true, explanation: 'The heading reads Pricing.', injection: null } } },
    { match: 'a trial badge is shown',
      response: { json: { verdict: false, explanation: 'No trial badge is shown.', injection: null } } },
    { match: 'the plans are listed',
      response: { json: { verdict: true, explanation: 'Three plans are listed.', injection: null } } },
    { match: 'the page heading',
      response: { json: { heading: 'Pricing' } } },
  ],
};

function startModel() {
  const server = process.env.SIGHTLINE_SCRIPTED_MODEL_SERVER;
  if (!server) return Promise.resolve(null);
  const script = join(home, 'model-script.json');
  writeFileSync(script, JSON.stringify(modelScript));
  return startChild('stdbuf', ['-oL', server, '--script', script], env, 'the scripted model',
    (out) => {
      const match = out.match(/OPENAI_BASE_URL=(\S+)/);
      return match ? { url: match[1] } : null;
    });
}

async function overStdio() {
  const transport = new StdioClientTransport({ command: bin, args: ['mcp'], env, stderr: 'ignore' });
  const client = new Client({ name: 'sightline-test', version: '1.0.0' });
  await client.connect(transport);
  check('stdio: connected and initialized', true);
  await exercise(client, 'stdio', demoUrl);
  await client.close();
  check('stdio: closed', true);
}

async function overHttp() {
  const { child, url, token } = await startServe(env, home);
  check('http: serve listens on 127.0.0.1', url.startsWith('http://127.0.0.1:'), url);
  try {
    // Without the token the SDK's connect fails.
    const anonymous = new Client({ name: 'sightline-test', version: '1.0.0' });
    let refused = false;
    try {
      await anonymous.connect(new StreamableHTTPClientTransport(new URL(url)));
    } catch (error) {
      refused = /401|Unauthorized/i.test(String(error));
    }
    check('http: no token, no session', refused);

    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    const client = new Client({ name: 'sightline-test', version: '1.0.0' });
    await client.connect(transport);
    check('http: connected with a session id', typeof transport.sessionId === 'string' &&
      transport.sessionId.length === 32, transport.sessionId);
    await exercise(client, 'http', demoUrl);
    await transport.terminateSession();
    check('http: session ended with DELETE', transport.sessionId === undefined);
    await client.close();
  } finally {
    await stopChild(child);
  }
}

// The bundled demo site on loopback: the page the runner tools load.
function startDemo() {
  // stdbuf: the line with the URL must not wait in a stdio buffer.
  return startChild('stdbuf', ['-oL', bin, 'demo-site', '--port', '0'], env, 'the demo site',
    (out) => {
      const match = out.match(/(http:\/\/127\.0\.0\.1:\d+\/)/);
      return match ? { url: match[1] } : null;
    });
}

let demoUrl;
let demo;
let model;
try {
  demo = await startDemo();
  demoUrl = demo.url;
  model = await startModel();
  if (model) {
    env.SIGHTLINE_MODEL = 'openai:gpt-4.1';
    env.OPENAI_BASE_URL = model.url;
  } else {
    console.log('# SIGHTLINE_SCRIPTED_MODEL_SERVER is not set: the agent tools are not exercised');
  }
  await overStdio();
  await overHttp();
} catch (error) {
  check(`no exception (${error?.message ?? error})`, false, String(error?.stack ?? error));
} finally {
  await stopChild(demo?.child);
  await stopChild(model?.child);
  try {
    rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  } catch (error) {
    console.error(`# could not remove ${home}: ${error.message}`);
  }
}

console.log(`1..${tap.n}`);
console.log(`${tap.passed} passed, ${tap.failed} failed`);
process.exit(tap.failed === 0 ? 0 : 1);

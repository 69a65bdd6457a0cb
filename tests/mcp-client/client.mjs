// SPDX-License-Identifier: GPL-3.0-or-later
//
// Drives `sightline mcp` (stdio) and `sightline serve` (Streamable HTTP) with
// the official MCP TypeScript SDK client, as an MCP host would. Prints one
// TAP line per check and a closing "N passed, N failed" line.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const bin = process.env.SIGHTLINE_BIN;
if (!bin) {
  console.error('SIGHTLINE_BIN is not set');
  process.exit(2);
}

const SPEC_TOOLS = ['create_session', 'run_task', 'get_task', 'smoke_test', 'get_report',
  'list_sessions', 'get_session', 'stop_session', 'scrape', 'screenshot', 'pdf', 'crawl',
  'list_skills', 'run_skill', 'get_skill_run'];

let passed = 0;
let failed = 0;
let n = 0;

function check(name, condition, detail) {
  n += 1;
  if (condition) {
    passed += 1;
    console.log(`ok ${n} - ${name}`);
  } else {
    failed += 1;
    console.log(`not ok ${n} - ${name}${detail !== undefined ? ': ' + JSON.stringify(detail) : ''}`);
  }
}

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const home = mkdtempSync(join(tmpdir(), 'sightline-mcp-client-'));
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_DATA_HOME: join(home, 'data'),
  XDG_CACHE_HOME: join(home, 'cache'),
  GSETTINGS_BACKEND: 'memory',
  NO_AT_BRIDGE: '1',
};
for (const key of ['DISPLAY', 'WAYLAND_DISPLAY', 'XAUTHORITY', 'GSETTINGS_SCHEMA_DIR',
  'ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS']) {
  if (process.env[key]) env[key] = process.env[key];
}

// Ends a child we started and waits until it is gone.
function stopChild(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(); }, 10000);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.kill('SIGTERM');
  });
}

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

  // A tool whose runner part is not built says so; it never fakes a result.
  const skills = await client.callTool({ name: 'list_skills', arguments: {} });
  check(`${label}: list_skills answers [unavailable] while the runner lacks skills`,
    skills.isError === true && textOf(skills).startsWith('[unavailable] ') &&
    skills.structuredContent?.error?.code === 'unavailable', skills);

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

function startServe() {
  return new Promise((resolve, reject) => {
    const tokenFile = join(home, 'token');
    const child = spawn(bin, ['serve', '--port', '0', '--token-file', tokenFile],
      { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('sightline serve did not start in 30 s')), 30000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/MCP endpoint: (\S+)/);
      if (match && out.includes('Bearer token:')) {
        clearTimeout(timer);
        resolve({ child, url: match[1], token: readFileSync(tokenFile, 'utf8').trim() });
      }
    });
    child.once('exit', (code) => reject(new Error(`sightline serve exited with ${code}`)));
  });
}

async function overHttp() {
  const { child, url, token } = await startServe();
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
  return new Promise((resolve, reject) => {
    // stdbuf: the line with the URL must not wait in a stdio buffer.
    const child = spawn('stdbuf', ['-oL', bin, 'demo-site', '--port', '0'],
      { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error('the demo site did not start in 30 s')), 30000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = out.match(/(http:\/\/127\.0\.0\.1:\d+\/)/);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1] });
      }
    });
    child.on('exit', (code) => reject(new Error(`the demo site exited with ${code}`)));
  });
}

let demoUrl;
let demo;
try {
  demo = await startDemo();
  demoUrl = demo.url;
  await overStdio();
  await overHttp();
} catch (error) {
  check(`no exception (${error?.message ?? error})`, false, String(error?.stack ?? error));
} finally {
  await stopChild(demo?.child);
  try {
    rmSync(home, { recursive: true, force: true, maxRetries: 5 });
  } catch (error) {
    console.error(`# could not remove ${home}: ${error.message}`);
  }
}

console.log(`1..${n}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

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
for (const key of ['DISPLAY', 'WAYLAND_DISPLAY', 'XAUTHORITY', 'GSETTINGS_SCHEMA_DIR']) {
  if (process.env[key]) env[key] = process.env[key];
}

// What both transports must show the same way.
async function exercise(client, label) {
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
  let progressSeen = 0;
  const sessions = await client.callTool({ name: 'list_sessions', arguments: {} }, undefined, {
    onprogress: () => { progressSeen += 1; },
  });
  check(`${label}: list_sessions answers [unavailable] while the runner lacks sessions`,
    sessions.isError === true && textOf(sessions).startsWith('[unavailable] ') &&
    sessions.structuredContent?.error?.code === 'unavailable', sessions);
}

async function overStdio() {
  const transport = new StdioClientTransport({ command: bin, args: ['mcp'], env, stderr: 'ignore' });
  const client = new Client({ name: 'sightline-test', version: '1.0.0' });
  await client.connect(transport);
  check('stdio: connected and initialized', true);
  await exercise(client, 'stdio');
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
    child.on('exit', (code) => reject(new Error(`sightline serve exited with ${code}`)));
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
    await exercise(client, 'http');
    await transport.terminateSession();
    check('http: session ended with DELETE', transport.sessionId === undefined);
    await client.close();
  } finally {
    child.kill('SIGTERM');
  }
}

try {
  await overStdio();
  await overHttp();
} catch (error) {
  check(`no exception (${error?.message ?? error})`, false, String(error?.stack ?? error));
} finally {
  rmSync(home, { recursive: true, force: true });
}

console.log(`1..${n}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);

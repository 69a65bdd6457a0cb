// SPDX-License-Identifier: GPL-3.0-or-later
//
// `sightline serve` under load: CLIENTS official-SDK clients over Streamable
// HTTP on loopback, each calling tools in a loop for SECONDS, while requests
// without the token or from a foreign Origin keep arriving. Checks that every
// call got its own reply, the server lived, the security checks held under
// load and its memory stayed bounded. Prints TAP, then the figures.
//
// `node load.mjs [SECONDS]` (default 20, or SIGHTLINE_LOAD_SECONDS) and
// SIGHTLINE_LOAD_CLIENTS (default 50) change the size; docs/reliability.md has
// the figures of a longer run.

import { readFileSync, rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { check, makeHome, startServe, stopChild, tap } from './common.mjs';

const CLIENTS = Number(process.env.SIGHTLINE_LOAD_CLIENTS ?? 50);
const SECONDS = Number(process.argv[2] ?? process.env.SIGHTLINE_LOAD_SECONDS ?? 20);

const { home, env } = makeHome('sightline-mcp-load-');

function rssKiB(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = status.match(/^VmRSS:\s+(\d+) kB/m);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

// CPU seconds the process has used (user + system), from /proc.
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

// One client's loop: a mix of calls that answer at once, each checked to be
// the reply to its own request.
async function clientLoop(url, token, index, deadline, stats) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: `load-${index}`, version: '1.0.0' });
  await client.connect(transport);
  stats.connected += 1;
  for (let i = 0; Date.now() < deadline; i++) {
    const started = performance.now();
    const kind = i % 4;
    stats.sent += 1;
    try {
      if (kind === 0) {
        const { tools } = await client.listTools();
        if (!tools.some((t) => t.name === 'create_session')) stats.wrong += 1;
      } else if (kind === 1) {
        const result = await client.callTool({ name: 'list_sessions', arguments: {} });
        if (result.isError) stats.wrong += 1;
      } else if (kind === 2) {
        // An id that names this client and this call comes back in the error.
        const id = `sess_load${index}x${i}`;
        const result = await client.callTool({ name: 'get_session', arguments: { sessionId: id } });
        if (result.isError !== true || !JSON.stringify(result).includes(id)) stats.wrong += 1;
      } else {
        const result = await client.callTool({ name: 'scrape', arguments: { url: 'https://example.test', colour: index } });
        if (result.isError !== true || result.structuredContent?.error?.code !== 'invalid_input') stats.wrong += 1;
      }
      stats.answered += 1;
      stats.latencies.push(performance.now() - started);
      (stats.byKind[kind] ??= []).push(performance.now() - started);
    } catch (error) {
      stats.failures.push(String(error?.message ?? error));
    }
  }
  await transport.terminateSession();
  await client.close();
  stats.closed += 1;
}

// Requests that must be refused, all through the load.
async function intruderLoop(url, token, deadline, stats) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  while (Date.now() < deadline) {
    const noToken = await fetch(url, { method: 'POST', headers, body });
    const foreign = await fetch(url, { method: 'POST', body,
      headers: { ...headers, Authorization: `Bearer ${token}`, Origin: 'https://evil.example' } });
    stats.intrusions += 2;
    if (noToken.status !== 401) stats.admitted.push(`no token: ${noToken.status}`);
    if (foreign.status !== 403) stats.admitted.push(`foreign origin: ${foreign.status}`);
    await noToken.text();
    await foreign.text();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let serve;
try {
  serve = await startServe(env, home);
  const { child, url, token } = serve;
  const stats = { connected: 0, closed: 0, sent: 0, answered: 0, wrong: 0, failures: [],
    byKind: {}, latencies: [], intrusions: 0, admitted: [] };
  const samples = [];
  const rssAtStart = rssKiB(child.pid);
  const cpuAtStart = cpuSeconds(child.pid);
  const clientCpuAtStart = process.cpuUsage();
  const sampler = setInterval(() => samples.push(rssKiB(child.pid)), 250);
  const started = Date.now();
  const deadline = started + SECONDS * 1000;

  const loops = [];
  for (let i = 0; i < CLIENTS; i++) loops.push(clientLoop(url, token, i, deadline, stats));
  loops.push(intruderLoop(url, token, deadline, stats));
  const outcomes = await Promise.allSettled(loops);
  clearInterval(sampler);
  const cpuUsed = cpuSeconds(child.pid) - cpuAtStart;
  const clientCpu = process.cpuUsage(clientCpuAtStart);
  const clientCpuUsed = (clientCpu.user + clientCpu.system) / 1e6;
  const elapsed = (Date.now() - started) / 1000;
  const rejected = outcomes.filter((o) => o.status === 'rejected').map((o) => String(o.reason));

  check(`${CLIENTS} clients connected`, stats.connected === CLIENTS, stats.connected);
  check('no client loop threw', rejected.length === 0, rejected.slice(0, 3));
  check('every call got a reply', stats.answered === stats.sent && stats.failures.length === 0,
    { sent: stats.sent, answered: stats.answered, failures: stats.failures.slice(0, 3) });
  check('every reply answered its own call', stats.wrong === 0, stats.wrong);
  check('every client ended its session', stats.closed === CLIENTS, stats.closed);
  check('no token and foreign Origin refused under load',
    stats.intrusions > 0 && stats.admitted.length === 0, stats.admitted.slice(0, 3));
  check('the server is still running', child.exitCode === null && child.signalCode === null);

  // Bounded memory: after the first quarter (sessions open, caches warm) the
  // server's resident size grows by no more than 32 MiB to the end.
  const valid = samples.filter((s) => s !== undefined);
  const warm = valid[Math.floor(valid.length / 4)];
  const peak = Math.max(...valid);
  const end = valid[valid.length - 1];
  check('memory bounded (growth after warm-up ≤ 32 MiB)', end - warm <= 32 * 1024,
    { warmKiB: warm, endKiB: end, peakKiB: peak });

  const KINDS = ['tools/list', 'list_sessions', 'get_session (unknown id)', 'scrape (invalid_input)'];
  for (const [kind, times] of Object.entries(stats.byKind)) {
    times.sort((a, b) => a - b);
    console.log(`# ${KINDS[kind]}: ${times.length} calls, p50 ${percentile(times, 0.5).toFixed(1)} ms, ` +
      `p90 ${percentile(times, 0.9).toFixed(1)} ms`);
  }
  const sorted = stats.latencies.sort((a, b) => a - b);
  console.log(`# ${CLIENTS} clients, ${elapsed.toFixed(1)} s: ${stats.answered} calls answered ` +
    `(${(stats.answered / elapsed).toFixed(0)}/s), p50 ${percentile(sorted, 0.5).toFixed(1)} ms, ` +
    `p99 ${percentile(sorted, 0.99).toFixed(1)} ms; server CPU ` +
    `${((cpuUsed * 1000) / (stats.answered + stats.intrusions)).toFixed(2)} ms per request (clients ` +
    `${((clientCpuUsed * 1000) / (stats.answered + stats.intrusions)).toFixed(2)} ms); ${stats.intrusions} intrusions refused; ` +
    `RSS start ${(rssAtStart / 1024).toFixed(1)} MiB, warm ${(warm / 1024).toFixed(1)} MiB, ` +
    `peak ${(peak / 1024).toFixed(1)} MiB, end ${(end / 1024).toFixed(1)} MiB`);
} catch (error) {
  check(`no exception (${error?.message ?? error})`, false, String(error?.stack ?? error));
} finally {
  await stopChild(serve?.child);
  rmSync(home, { recursive: true, force: true, maxRetries: 5 });
}

console.log(`1..${tap.n}`);
console.log(`# ${tap.passed} passed, ${tap.failed} failed`);
process.exit(tap.failed === 0 ? 0 : 1);

// SPDX-License-Identifier: GPL-3.0-or-later
//
// What client.mjs and load.mjs share: the sightline binary, TAP checks, a
// private home with the environment its children get, and starting and
// stopping those children (`sightline serve` among them).

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const bin = process.env.SIGHTLINE_BIN;
if (!bin) {
  console.error('SIGHTLINE_BIN is not set');
  process.exit(2);
}

// One TAP line per check; the counts are read when the script ends.
export const tap = { passed: 0, failed: 0, n: 0 };

export function check(name, condition, detail) {
  tap.n += 1;
  if (condition) {
    tap.passed += 1;
    console.log(`ok ${tap.n} - ${name}`);
  } else {
    tap.failed += 1;
    console.log(`not ok ${tap.n} - ${name}${detail !== undefined ? ': ' + JSON.stringify(detail) : ''}`);
  }
}

// A fresh home under the temporary folder and the environment every child
// runs in: that home, no real user settings, and only the display and
// sanitizer variables passed through.
export function makeHome(prefix) {
  const home = mkdtempSync(join(tmpdir(), prefix));
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
  return { home, env };
}

// Starts `command args…` and resolves with { child, ...found } once
// found = parse(all stdout so far) is not null; rejects when it exits first
// or says nothing of the kind within 30 s.
export function startChild(command, args, env, what, parse) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 30 s`)), 30000);
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const found = parse(out);
      if (found) {
        clearTimeout(timer);
        resolve({ child, ...found });
      }
    });
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

// `sightline serve` on a free loopback port: { child, url, token }.
export function startServe(env, home) {
  const tokenFile = join(home, 'token');
  return startChild(bin, ['serve', '--port', '0', '--token-file', tokenFile], env,
    'sightline serve', (out) => {
      const match = out.match(/MCP endpoint: (\S+)/);
      if (!match || !out.includes('Bearer token:')) return null;
      return { url: match[1], token: readFileSync(tokenFile, 'utf8').trim() };
    });
}

// Ends a child we started and waits until it is gone.
export function stopChild(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve(); }, 10000);
    child.once('exit', () => { clearTimeout(timer); resolve(); });
    child.kill('SIGTERM');
  });
}

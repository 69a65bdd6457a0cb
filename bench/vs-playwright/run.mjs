// SPDX-License-Identifier: GPL-3.0-or-later
// The same 50 tests in Sightline and in Playwright Test: wall time, CPU time
// and peak memory of each tool's whole process tree, with the ratios.
//
//   node bench/vs-playwright/run.mjs [--rounds N] [--workers 1,2]
//        [--sightline _build/app/sightline] [--chromium /usr/bin/chromium]
//        [--playwright tests/playwright/node_modules] [--sample-ms 50]
//        [--tests N] [--json FILE] [--keep]
//
// --tests N runs N of the 50, spread over the suite (a quick look). --keep
// leaves the temporary folder: the suite, each Sightline run's --json result
// (sightline-K.json) and each Playwright run's reports (pw-K/), for per-test
// durations across the sequence.
//
// Generates the suite (gen-suite.mjs), serves the demo site with `sightline
// demo-site` (a process of its own, counted on neither side), exports every
// test with `sightline export --to playwright`, then, alternating the two
// tools, runs `sightline run SUITE --workers N --json` and `playwright test
// --workers N` (@playwright/test's cli.js, what npx starts, on Debian's
// Chromium through launchOptions.executablePath) N rounds at each worker
// count. Each run is a cgroup v2 of its own: CPU is its cpu.stat, memory the
// largest sum over its cgroup.procs of PSS (/proc/PID/smaps_rollup) sampled
// every --sample-ms, which catches every child however it was started or
// reparented. Sightline runs with no DISPLAY, so its own Xvfb and session bus
// are counted; Playwright's headless Chromium needs no display. Both sides
// must give every test the same verdict, the one the generator meant; the
// bench lists any difference and exits with status 1.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateSuite, STEP_TIMEOUT_MS, TEST_TIMEOUT_MS } from './gen-suite.mjs';
import { argv, opt } from '../args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const ROUNDS = +opt('rounds', 3);
const WORKERS = opt('workers', '1,2').split(',').map(Number);
const SIGHTLINE = path.resolve(opt('sightline', path.join(root, '_build', 'app', 'sightline')));
const CHROMIUM = opt('chromium', '/usr/bin/chromium');
const PW_MODULES = path.resolve(opt('playwright', path.join(root, 'tests', 'playwright',
                                                             'node_modules')));
const SAMPLE_MS = +opt('sample-ms', 50);
const N_TESTS = +opt('tests', 0);
const JSON_OUT = opt('json', null);
const KEEP = argv.includes('--keep');
// no run of either tool may take longer than this
const RUN_DEADLINE_MS = 40 * 60 * 1000;
// what a tool left running after its exit is given this long to end
const LINGER_DEADLINE_MS = 10000;

const PW_CLI = path.join(PW_MODULES, '@playwright', 'test', 'cli.js');
for (const [what, file] of [['sightline', SIGHTLINE], ['chromium', CHROMIUM],
                            ['@playwright/test (build-aux/install-deps.sh runs npm ci in ' +
                             'tests/playwright)', PW_CLI]])
  if (!fs.existsSync(file)) {
    console.error(`bench/vs-playwright: no ${what} at ${file}`);
    process.exit(2);
  }
if (!(ROUNDS >= 1) || WORKERS.some((n) => !(n >= 1))) {
  console.error('bench/vs-playwright: --rounds and --workers take positive numbers');
  process.exit(2);
}

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));
const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');

// ------------------------------------------------------------ accounting

// cgroup v2: the unified hierarchy of a hybrid setup, or the whole tree.
function cgroupRoot() {
  for (const dir of ['/sys/fs/cgroup/unified', '/sys/fs/cgroup']) {
    if (!fs.existsSync(path.join(dir, 'cgroup.controllers')))
      continue;
    try {
      const probe = fs.mkdtempSync(path.join(dir, 'vspw-probe-'));
      const ok = fs.existsSync(path.join(probe, 'cpu.stat')) &&
                 fs.existsSync(path.join(probe, 'cgroup.procs'));
      fs.rmdirSync(probe);
      if (ok)
        return dir;
    } catch { /* not writable: try the next, else fall back */ }
  }
  return null;
}
const CGROUP_ROOT = cgroupRoot();
const live = new Set(); // cgroups and process groups to end if the bench is interrupted

function readText(file) {
  try { return fs.readFileSync(file, 'utf8'); } catch { return null; }
}

// What a process is, for the PSS breakdown: its executable (Chromium's
// children rewrite their command line), and Chromium's --type.
function kindOf(pid) {
  const raw = readText(`/proc/${pid}/cmdline`);
  if (raw == null)
    return null;
  let exe = '?';
  try { exe = path.basename(fs.readlinkSync(`/proc/${pid}/exe`)); } catch { }
  if (exe === 'chromium' || exe === 'chrome' || exe.startsWith('chrome_')) {
    const type = /--type=([a-z-]+)/.exec(raw);
    return type ? `chromium ${type[1]}` : 'chromium browser';
  }
  if (exe === 'node') {
    const script = raw.split('\0').slice(1).find((a) => a && !a.startsWith('-'));
    return script && /worker|process\.js|processRunner/.test(script) ? 'node worker'
                                                                     : 'node runner';
  }
  return exe;
}

function pssKb(pid) {
  const text = readText(`/proc/${pid}/smaps_rollup`);
  const m = text && /^Pss:\s+(\d+) kB/m.exec(text);
  return m ? +m[1] : null;
}

function procStat(pid) {
  const text = readText(`/proc/${pid}/stat`);
  if (!text)
    return null;
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // after the command: state(0) ppid(1) pgrp(2) session(3) … utime(11) stime(12)
  return { session: +f[3], cpuTicks: +f[11] + +f[12] };
}

// One run's processes: a cgroup of its own, else the session its leader starts.
class Accounting {
  constructor(label) {
    this.label = label;
    this.peakKb = 0;
    this.peak = {};
    this.maxProcs = 0;
    this.ticks = new Map(); // fallback CPU: the last utime+stime seen per pid
    if (CGROUP_ROOT) {
      this.dir = fs.mkdtempSync(path.join(CGROUP_ROOT, `vspw-${label}-`));
      live.add(this);
    }
  }

  get method() {
    return this.dir ? 'cgroup' : 'session';
  }

  // argv for spawn: the leader joins the cgroup before it execs the tool.
  wrap(cmd, args) {
    if (!this.dir)
      return [cmd, args];
    return ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', path.join(this.dir, 'cgroup.procs'),
                        cmd, ...args]];
  }

  pids() {
    if (this.dir) {
      const text = readText(path.join(this.dir, 'cgroup.procs')) || '';
      return text.split('\n').filter(Boolean).map(Number);
    }
    const out = [];
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name))
        continue;
      const st = procStat(name);
      if (st && st.session === this.leader) {
        out.push(+name);
        this.ticks.set(+name, st.cpuTicks);
      }
    }
    return out;
  }

  sample() {
    let total = 0;
    const kinds = {};
    const pids = this.pids();
    for (const pid of pids) {
      const kb = pssKb(pid);
      const kind = kindOf(pid);
      if (kb == null || kind == null)
        continue;
      total += kb;
      const k = (kinds[kind] ??= { n: 0, kb: 0 });
      k.n++;
      k.kb += kb;
    }
    this.maxProcs = Math.max(this.maxProcs, pids.length);
    if (total > this.peakKb) {
      this.peakKb = total;
      this.peak = kinds;
    }
    return pids.length;
  }

  cpu() {
    if (this.dir) {
      const text = readText(path.join(this.dir, 'cpu.stat')) || '';
      const get = (k) => +((new RegExp(`^${k} (\\d+)`, 'm').exec(text) || [0, 0])[1]) / 1e6;
      return { total: get('usage_usec'), user: get('user_usec'), sys: get('system_usec') };
    }
    const hz = 100;
    let t = 0;
    for (const v of this.ticks.values())
      t += v;
    return { total: t / hz, user: null, sys: null };
  }

  kill() {
    if (this.dir && fs.existsSync(path.join(this.dir, 'cgroup.kill')))
      fs.writeFileSync(path.join(this.dir, 'cgroup.kill'), '1');
    else
      for (const pid of this.pids())
        try { process.kill(pid, 'SIGKILL'); } catch { }
  }

  remove() {
    live.delete(this);
    if (this.dir)
      for (let i = 0; i < 100; i++)
        try { fs.rmdirSync(this.dir); return; } catch { spawnSync('sleep', ['0.05']); }
  }
}

function endEverything() {
  for (const a of live) {
    try { a.kill(); } catch { }
    try { a.remove(); } catch { }
  }
}

// Runs one tool's command and accounts for everything it starts.
async function measure(label, cmd, args, options) {
  const acct = new Accounting(label);
  const [c, a] = acct.wrap(cmd, args);
  const spawnedAt = Date.now();
  const t0 = now();
  const child = spawn(c, a, { ...options, stdio: ['ignore', 'pipe', 'pipe'],
                              detached: !acct.dir });
  acct.leader = child.pid;
  if (!acct.dir)
    live.add(acct);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr = (stderr + d).slice(-20000); });
  const timer = setInterval(() => acct.sample(), SAMPLE_MS);
  const deadline = setTimeout(() => { acct.kill(); }, RUN_DEADLINE_MS);
  const status = await new Promise((ok) => child.on('exit', (code, sig) =>
    ok(code ?? 128 + (os.constants.signals[sig] || 0))));
  const wall = now() - t0;
  clearTimeout(deadline);
  // what it left behind: given a while to end, then ended and named
  const lingerStart = now();
  let lingering = [];
  while (acct.sample() > 0) {
    if (now() - lingerStart > LINGER_DEADLINE_MS) {
      lingering = acct.pids().map(kindOf);
      acct.kill();
      await sleep(200);
      break;
    }
    await sleep(SAMPLE_MS);
  }
  const lingerMs = now() - lingerStart;
  clearInterval(timer);
  await new Promise((ok) => {
    if (child.stdout.readableEnded) ok();
    child.stdout.on('end', ok);
    setTimeout(ok, 2000);
  });
  const cpu = acct.cpu();
  acct.remove();
  return { label, status, spawnedAt, wall: wall / 1000, cpu, peakMb: acct.peakKb / 1024,
           peak: acct.peak, maxProcs: acct.maxProcs, lingerMs, lingering, stdout, stderr,
           method: acct.method };
}

// ------------------------------------------------------------ verdicts

const verdictOfSightline = (v) => (v === 'pass' || v === 'flaky' ? 'pass' : 'fail');
const verdictOfPlaywright = (s) => (s === 'passed' ? 'pass' : 'fail');

function sightlineVerdicts(result) {
  const out = {};
  for (const t of result.tests)
    out[path.basename(t.file)] = { verdict: verdictOfSightline(t.verdict),
                                   raw: t.verdict + (t.code ? ` ${t.code}` : '') };
  return out;
}

function playwrightVerdicts(report) {
  const out = {};
  const visit = (suite) => {
    for (const spec of suite.specs || [])
      for (const test of spec.tests || []) {
        const r = test.results[test.results.length - 1];
        const file = path.basename(spec.file || suite.file).replace(/\.spec\.ts$/,
                                                                     '.sightline.json');
        out[file] = { verdict: r ? verdictOfPlaywright(r.status) : 'fail',
                      raw: r ? r.status : 'not run' };
      }
    for (const s of suite.suites || [])
      visit(s);
  };
  for (const s of report.suites)
    visit(s);
  return out;
}

// The tests whose verdicts differ between the tools or from the design.
function compareVerdicts(expected, s, p) {
  const diffs = [];
  for (const [file, want] of Object.entries(expected)) {
    const sv = s[file];
    const pv = p[file];
    if (!sv || !pv || sv.verdict !== pv.verdict || sv.verdict !== want)
      diffs.push(`${file}: meant ${want}, sightline ${sv ? sv.raw : 'missing'}, ` +
                 `playwright ${pv ? pv.raw : 'missing'}`);
  }
  return diffs;
}

// ------------------------------------------------------------ phases (s)

const PHASES = [
  ['start', 'process start → first test starts'],
  ['setup', 'per-test setup (page / context)'],
  ['load', 'load the start page'],
  ['actions', 'actions (click, type, select…)'],
  ['expect', 'expectations'],
  ['record', 'recording after each step'],
  ['teardown', 'per-test teardown'],
  ['between', 'between tests (scheduling)'],
  ['exit', 'last test ends → process exit'],
];
const isExpectation = (instruction) => /^\s*expect\b/i.test(instruction || '');

// Sightline: its --json result (runs' startedAt, steps' startedAt and ms,
// attempts' ms), against the spawn time.
function sightlinePhases(run, result) {
  const ph = Object.fromEntries(PHASES.map(([k]) => [k, 0]));
  const spans = [];
  for (const t of result.tests)
    for (const at of t.attempts || []) {
      const rep = at.report;
      if (!rep)
        continue;
      const start = Date.parse(rep.startedAt);
      const end = start + at.ms;
      spans.push([start, end]);
      let cursor = start;
      let stepsMs = 0;
      for (const st of rep.steps || []) {
        const ms = st.ms || 0;
        stepsMs += ms;
        if (st.kind === 'load')
          ph.load += ms;
        else if (isExpectation(st.instruction))
          ph.expect += ms;
        else
          ph.actions += ms;
        if (st.startedAt) {
          const s0 = Date.parse(st.startedAt);
          if (st.kind === 'load' && cursor === start)
            ph.setup += s0 - start;
          else
            ph.record += s0 - cursor;
          cursor = s0 + ms;
        }
      }
      const runEnd = start + (rep.ms || 0);
      if (cursor === start) // no step start times: setup and recording together
        ph.record += (rep.ms || 0) - stepsMs;
      else
        ph.record += runEnd - cursor;
      ph.teardown += end - runEnd;
    }
  return finishPhases(ph, spans, run);
}

// Playwright: the phases reporter's steps (hooks, fixtures, API calls,
// expects), against the spawn time.
function playwrightPhases(run, phases) {
  const ph = Object.fromEntries(PHASES.map(([k]) => [k, 0]));
  const spans = [];
  let launch = 0; // browser launches (worker fixtures), counted in start
  for (const t of phases.tests) {
    spans.push([t.start, t.start + t.ms]);
    let loaded = false;
    for (const s of t.steps) {
      if (s.depth === 0 && s.category === 'hook') {
        // the worker's browser, started or closed inside this hook (at any depth)
        const browser = t.steps.filter((b) => b.category === 'fixture' &&
                                              b.title === 'Fixture "browser"' &&
                                              b.start >= s.start && b.start < s.start + s.ms)
                               .reduce((sum, b) => sum + b.ms, 0);
        if (/^Before/i.test(s.title)) {
          ph.setup += s.ms - browser;
          launch += browser;
          t.launch = (t.launch || 0) + browser;
        } else
          ph.teardown += s.ms - browser;
      } else if (s.depth === 0 && s.category === 'pw:api') {
        if (!loaded && /^Navigate\b/i.test(s.title)) {
          ph.load += s.ms;
          loaded = true;
        } else
          ph.actions += s.ms;
      } else if (s.depth === 0 && s.category === 'expect')
        ph.expect += s.ms;
    }
  }
  const out = finishPhases(ph, spans, run);
  // the first browser launch delays the first test's own work: call it start
  const first = phases.tests.reduce((a, t) => (a && a.start <= t.start ? a : t), null);
  if (first) {
    const firstLaunch = (first.launch || 0) / 1000;
    out.start += firstLaunch;
    out.setup += launch / 1000 - firstLaunch;
  }
  return out;
}

function finishPhases(ph, spans, run) {
  const out = {};
  for (const [k] of PHASES)
    out[k] = ph[k] / 1000;
  spans.sort((a, b) => a[0] - b[0]);
  if (spans.length) {
    out.start = (spans[0][0] - run.spawnedAt) / 1000;
    const lastEnd = Math.max(...spans.map((s) => s[1]));
    out.exit = (run.spawnedAt + run.wall * 1000 - lastEnd) / 1000;
    // idle time between one test's end and the next one's start, per lane
    // (with N workers, gaps while fewer than N tests ran)
    let between = 0;
    const lanes = [];
    for (const [s, e] of spans) {
      lanes.sort((a, b) => a - b);
      let i = lanes.findIndex((end) => end <= s);
      if (i < 0 && lanes.length < run.workers) {
        lanes.push(e);
        continue;
      }
      if (i < 0)
        i = 0;
      between += Math.max(0, s - lanes[i]);
      lanes[i] = e;
    }
    out.between = between / 1000;
  }
  return out;
}

// ------------------------------------------------------------ the bench

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sight-vspw-'));
let server = null;
const cleanup = () => {
  endEverything();
  if (server && server.exitCode == null)
    try { server.kill('SIGTERM'); } catch { }
  if (!KEEP)
    fs.rmSync(tmp, { recursive: true, force: true });
};
for (const sig of ['SIGINT', 'SIGTERM'])
  process.on(sig, () => { cleanup(); process.exit(130); });

const suiteDir = path.join(tmp, 'suite');
const pwDir = path.join(tmp, 'playwright');
let expected = generateSuite(suiteDir);
if (N_TESTS > 0) {
  // N spread over the suite, the first and the last (which fails by design) included
  const all = Object.keys(expected).sort();
  const keep = [...new Set(Array.from({ length: Math.min(N_TESTS, all.length) }, (_, i) =>
    all[Math.round(i * (all.length - 1) / Math.max(1, Math.min(N_TESTS, all.length) - 1))]))];
  for (const f of Object.keys(expected))
    if (!keep.includes(f))
      fs.rmSync(path.join(suiteDir, f));
  expected = Object.fromEntries(keep.map((f) => [f, expected[f]]));
}
const files = Object.keys(expected).sort();

// the demo site, on a port of its own, counted on neither side
const baseEnv = { ...process.env };
for (const k of ['DISPLAY', 'WAYLAND_DISPLAY', 'DBUS_SESSION_BUS_ADDRESS', 'CI'])
  delete baseEnv[k];
const portFile = path.join(tmp, 'port');
server = spawn(SIGHTLINE, ['demo-site', '--port', '0', '--port-file', portFile],
               { stdio: 'ignore', env: { ...baseEnv, SIGHTLINE_DATA_DIR: path.join(tmp, 'site') } });
const portDeadline = now() + 20000;
while (!readText(portFile)?.trim()) {
  if (now() > portDeadline || server.exitCode != null) {
    console.error('bench/vs-playwright: the demo site did not start within 20 s');
    cleanup();
    process.exit(2);
  }
  await sleep(50);
}
const baseUrl = `http://127.0.0.1:${readText(portFile).trim()}/`;

// the exported tests, with a config giving Playwright the same timeouts
fs.mkdirSync(pwDir);
for (const f of files) {
  const spec = path.join(pwDir, f.replace(/\.sightline\.json$/, '.spec.ts'));
  const r = spawnSync(SIGHTLINE, ['export', path.join(suiteDir, f), '--to', 'playwright',
                                  '--output', spec], { encoding: 'utf8', env: baseEnv });
  if (r.status !== 0 || r.stderr.includes('test.fixme')) {
    console.error(`bench/vs-playwright: sightline export ${f} failed:\n${r.stderr}`);
    cleanup();
    process.exit(2);
  }
}
fs.symlinkSync(PW_MODULES, path.join(pwDir, 'node_modules'));
fs.writeFileSync(path.join(pwDir, 'playwright.config.cjs'), `// written by bench/vs-playwright/run.mjs
const out = process.env.VSPW_OUT;
module.exports = {
  testDir: '.', testMatch: '*.spec.ts', retries: 0, timeout: ${TEST_TIMEOUT_MS},
  outputDir: out + '/test-results',
  expect: { timeout: ${STEP_TIMEOUT_MS} },
  reporter: [['json', { outputFile: out + '/results.json' }],
             [${JSON.stringify(path.join(here, 'phases-reporter.cjs'))}, { outputFile: out + '/phases.json' }]],
  use: { baseURL: ${JSON.stringify(baseUrl)}, headless: true, actionTimeout: ${STEP_TIMEOUT_MS},
         launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)},
                          args: ['--no-sandbox', '--disable-gpu'] } },
};
`);

const chromiumVersion = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).stdout.trim();
const pwVersion = JSON.parse(readText(path.join(PW_MODULES, '@playwright', 'test',
                                                'package.json'))).version;
const nFail = Object.values(expected).filter((v) => v === 'fail').length;
console.log(`bench/vs-playwright: ${files.length} tests (${nFail} fail by design), ` +
            `${ROUNDS} round(s), workers ${WORKERS.join(',')}, sampling every ${SAMPLE_MS} ms`);
console.log(`  ${SIGHTLINE}; @playwright/test ${pwVersion} on ${chromiumVersion}`);
console.log(`  accounting: ${CGROUP_ROOT ? `a cgroup v2 per run under ${CGROUP_ROOT} ` +
            '(cpu.stat; PSS of every pid in cgroup.procs)' : 'no usable cgroup v2: the ' +
            "session of each tool's process (CPU of a process after its last sample is lost)"}`);
console.log('  display: sightline runs with no DISPLAY and starts its own Xvfb and bus (counted);' +
            ' Playwright\'s headless Chromium uses none');
console.log(`  load average at start: ${loadavg()}`);

let runIndex = 0;
async function runSightline(workers) {
  const dataDir = path.join(tmp, `data-${++runIndex}`);
  const run = await measure(`s${workers}`, SIGHTLINE,
                            ['run', suiteDir, '--workers', String(workers), '--base-url', baseUrl,
                             '--json'],
                            { env: { ...baseEnv, SIGHTLINE_DATA_DIR: dataDir }, cwd: tmp });
  run.workers = workers;
  if (KEEP)
    fs.writeFileSync(path.join(tmp, `sightline-${runIndex}.json`), run.stdout);
  fs.rmSync(dataDir, { recursive: true, force: true });
  let result = null;
  try { result = JSON.parse(run.stdout); } catch { }
  if (!result || !Array.isArray(result.tests))
    throw new Error(`sightline run printed no result (status ${run.status} after ` +
                    `${run.wall.toFixed(1)} s):\n${run.stderr}`);
  run.verdicts = sightlineVerdicts(result);
  run.phases = sightlinePhases(run, result);
  delete run.stdout;
  return run;
}

async function runPlaywright(workers) {
  const out = path.join(tmp, `pw-${++runIndex}`);
  fs.mkdirSync(out);
  const run = await measure(`p${workers}`, process.execPath,
                            [PW_CLI, 'test', '-c', 'playwright.config.cjs', '--workers',
                             String(workers)],
                            { env: { ...baseEnv, VSPW_OUT: out, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
                              cwd: pwDir });
  run.workers = workers;
  const report = readText(path.join(out, 'results.json'));
  const phases = readText(path.join(out, 'phases.json'));
  if (!report || !phases)
    throw new Error(`playwright test wrote no report (status ${run.status}):\n${run.stdout}\n` +
                    run.stderr);
  run.verdicts = playwrightVerdicts(JSON.parse(report));
  run.phases = playwrightPhases(run, JSON.parse(phases));
  if (!KEEP)
    fs.rmSync(out, { recursive: true, force: true });
  delete run.stdout;
  return run;
}

const fmtKinds = (peak) => Object.entries(peak).sort((a, b) => b[1].kb - a[1].kb)
  .map(([k, v]) => `${k} ${v.n}× ${(v.kb / 1024).toFixed(0)}`).join(', ');
const line = (r) => `${r.label[0] === 's' ? 'sightline ' : 'playwright'}  wall ` +
  `${r.wall.toFixed(2).padStart(6)} s  cpu ${r.cpu.total.toFixed(2).padStart(6)} s  ` +
  `PSS ${r.peakMb.toFixed(0).padStart(5)} MB  ` +
  `${Object.values(r.verdicts).filter((v) => v.verdict === 'pass').length} pass ` +
  `${Object.values(r.verdicts).filter((v) => v.verdict !== 'pass').length} fail` +
  (r.lingering.length ? `  LEFT RUNNING: ${r.lingering.join(', ')}` : '');

const runs = [];
const differences = [];
try {
  for (let round = 1; round <= ROUNDS; round++)
    for (const w of WORKERS) {
      const order = (round + w) % 2 ? [runPlaywright, runSightline] : [runSightline, runPlaywright];
      const pair = [];
      for (const f of order) {
        const r = await f(w);
        r.round = round;
        runs.push(r);
        pair.push(r);
        console.log(`round ${round}  workers ${w}  ${line(r)}  (load ${loadavg()})`);
      }
      const s = pair.find((r) => r.label[0] === 's');
      const p = pair.find((r) => r.label[0] === 'p');
      for (const d of compareVerdicts(expected, s.verdicts, p.verdicts))
        differences.push(`round ${round}, workers ${w}: ${d}`);
    }
} catch (e) {
  console.error(`bench/vs-playwright: ${e.message}`);
  cleanup();
  process.exit(2);
}

console.log(`\nmedian of ${ROUNDS}          wall s    CPU s (user+sys)   peak PSS MB   ` +
            'processes');
const summary = {};
for (const w of WORKERS) {
  const m = {};
  for (const tool of ['s', 'p']) {
    const rs = runs.filter((r) => r.workers === w && r.label[0] === tool);
    const byPss = [...rs].sort((a, b) => a.peakMb - b.peakMb)[Math.floor((rs.length - 1) / 2)];
    m[tool] = { wall: median(rs.map((r) => r.wall)), cpu: median(rs.map((r) => r.cpu.total)),
                user: median(rs.map((r) => r.cpu.user ?? 0)),
                sys: median(rs.map((r) => r.cpu.sys ?? 0)),
                pss: median(rs.map((r) => r.peakMb)), peak: byPss.peak,
                procs: Math.max(...rs.map((r) => r.maxProcs)),
                phases: Object.fromEntries(PHASES.map(([k]) => [k, median(rs.map((r) => r.phases[k] ?? 0))])) };
    console.log(`workers ${w} ${tool === 's' ? 'sightline ' : 'playwright'} ` +
                `${m[tool].wall.toFixed(2).padStart(8)} ${m[tool].cpu.toFixed(2).padStart(8)} ` +
                `(${m[tool].user.toFixed(1)}+${m[tool].sys.toFixed(1)})`.padEnd(14) +
                `${m[tool].pss.toFixed(0).padStart(10)} ${String(m[tool].procs).padStart(12)}`);
  }
  const rw = m.s.wall / m.p.wall;
  const rp = m.s.pss / m.p.pss;
  console.log(`workers ${w} sightline/playwright  wall ${rw.toFixed(2)} ` +
              `(target ≤ 0.70: ${rw <= 0.7 ? 'met' : 'NOT met'})  CPU ` +
              `${(m.s.cpu / m.p.cpu).toFixed(2)}  PSS ${rp.toFixed(2)} ` +
              `(target ≤ 0.50: ${rp <= 0.5 ? 'met' : 'NOT met'})`);
  summary[w] = m;
}

console.log('\npeak PSS by process kind, MB (the run with the median peak; count× MB)');
for (const w of WORKERS)
  for (const tool of ['s', 'p'])
    console.log(`  workers ${w} ${tool === 's' ? 'sightline ' : 'playwright'}: ` +
                fmtKinds(summary[w][tool].peak));

console.log('\nwhere the wall time goes, s (medians; per-test phases summed over the tests, ' +
            'so with 2 workers they add up to more than the wall time)');
const head = WORKERS.map((w) => `S w${w}`.padStart(8) + `P w${w}`.padStart(8)).join('');
console.log(''.padEnd(40) + head);
for (const [k, label] of PHASES)
  console.log(label.padEnd(40) + WORKERS.map((w) =>
    summary[w].s.phases[k].toFixed(2).padStart(8) + summary[w].p.phases[k].toFixed(2).padStart(8))
    .join(''));
console.log('wall'.padEnd(40) + WORKERS.map((w) =>
  summary[w].s.wall.toFixed(2).padStart(8) + summary[w].p.wall.toFixed(2).padStart(8)).join(''));
console.log(`\nload average at the end: ${loadavg()}`);

if (JSON_OUT)
  fs.writeFileSync(JSON_OUT, JSON.stringify({ baseUrl, expected, runs, summary,
                                              load: os.loadavg() }, null, 2));
cleanup();
if (differences.length) {
  console.log(`\nVERDICTS DIFFER (${differences.length}):`);
  for (const d of differences)
    console.log('  ' + d);
  process.exit(1);
}
console.log(`verdicts: the same on both sides in every run, as designed ` +
            `(${files.length - nFail} pass, ${nFail} fail)`);

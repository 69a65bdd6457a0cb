// SPDX-License-Identifier: GPL-3.0-or-later
// Action → observation latency: Sightline against Playwright on Chromium.
//
//   node bench/act/run.mjs --sightline _build/bench/sight-bench-act [--runs N] [--rounds R]
//                          [--pages form.html,cards-1000.html] [--chromium /usr/bin/chromium]
//                          [--pixels]
//
// Serves bench/observe's generated pages (node bench/observe/gen-pages.mjs)
// on 127.0.0.1, each with a button #bench-add appended that adds an element
// when clicked. On Debian's Chromium (playwright-core, headless): the median
// of `page.click('#bench-add')` followed by `page.locator('body')
// .ariaSnapshot()`; and sight-bench-act on the same URL: a click by ref
// through SightWebPage's perform (actionability, events, settling) followed by
// a fresh default observation. The two sides alternate, R rounds of N runs
// each per page. Prints both medians, their ratio (target ≤ 1), the phases of
// each side (Sightline: dispatch, the action in the page, settle, observe) and
// why Sightline's clicks settled.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argv, opt } from '../args.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = +opt('runs', 10);
const ROUNDS = +opt('rounds', 3);
const PIXELS = argv.includes('--pixels');
const PAGES = opt('pages', 'form.html,cards-1000.html').split(',');
const SIGHTLINE = opt('sightline', join(root, '_build', 'bench', 'sight-bench-act'));
const CHROMIUM = opt('chromium', '/usr/bin/chromium');
const pagesDir = join(root, 'bench', 'observe', 'pages');

// playwright-core from bench/observe's node_modules, else the global @playwright/test.
const candidates = [join(root, 'bench', 'observe', 'package.json'),
                    '/usr/lib/node_modules/@playwright/test/package.json'];
let chromium = null;
for (const c of candidates) {
  try { ({ chromium } = createRequire(c)('playwright-core')); break; } catch { }
}
if (!chromium) {
  console.error('playwright-core not found: npm ci in bench/observe, or install @playwright/test');
  process.exit(2);
}
if (!existsSync(join(pagesDir, PAGES[0]))) {
  console.error(`no pages in ${pagesDir}: run  node bench/observe/gen-pages.mjs  first`);
  process.exit(2);
}

const BUTTON = `<button id="bench-add" type="button">Add row</button>
<script>
document.getElementById('bench-add').addEventListener('click', () => {
  const p = document.createElement('p');
  p.textContent = 'Added row ' + document.querySelectorAll('.bench-row').length;
  p.className = 'bench-row';
  document.getElementById('bench-add').before(p);
});
</script>`;

const server = http.createServer((q, r) => {
  const name = decodeURIComponent(q.url.split('?')[0]).replace(/^\/+/, '');
  if (name.includes('/') || name.includes('..')) { r.statusCode = 404; r.end(); return; }
  try {
    let html = readFileSync(join(pagesDir, name), 'utf8');
    html = html.includes('</body>') ? html.replace('</body>', BUTTON + '</body>') : html + BUTTON;
    r.setHeader('Content-Type', 'text/html; charset=utf-8');
    r.end(html);
  } catch { r.statusCode = 404; r.end('not found'); }
});
await new Promise(ok => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}/`;

const median = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const now = () => Number(process.hrtime.bigint()) / 1e6;

// One round of each side per page, alternating: Playwright, then Sightline,
// ROUNDS times, so both see the same load on this shared machine.
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
                                        args: ['--no-sandbox'] });
const pw = Object.fromEntries(PAGES.map(n => [n, { pairMs: [], clickMs: [], observeMs: [] }]));
const sight = Object.fromEntries(PAGES.map(n => [n, { settleReasons: {} }]));

async function playwrightRound(name) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base + name, { waitUntil: 'load' });
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = now();
    await page.click('#bench-add');
    const t1 = now();
    await page.locator('body').ariaSnapshot();
    const t2 = now();
    if (i === 0)
      continue;  // warm-up
    pw[name].pairMs.push(t2 - t0);
    pw[name].clickMs.push(t1 - t0);
    pw[name].observeMs.push(t2 - t1);
  }
  await page.close();
}

function sightlineRound(name) {
  return new Promise((resolve, reject) => {
    const child = spawn(SIGHTLINE, ['--runs', String(RUNS), ...(PIXELS ? ['--pixels'] : []),
                                    base + name],
                        { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', d => { out += d; });
    child.on('close', code => {
      if (code !== 0) { reject(new Error(`${SIGHTLINE} exited with ${code}`)); return; }
      for (const line of out.trim().split('\n')) {
        const row = JSON.parse(line);
        const into = sight[row.url.slice(base.length)];
        for (const [key, value] of Object.entries(row)) {
          if (Array.isArray(value))
            (into[key] = into[key] || []).push(...value);
        }
        for (const [reason, n] of Object.entries(row.settleReasons))
          into.settleReasons[reason] = (into.settleReasons[reason] || 0) + n;
      }
      resolve();
    });
  });
}

for (let r = 0; r < ROUNDS; r++) {
  for (const name of PAGES) {
    await playwrightRound(name);
    await sightlineRound(name);
  }
}
await browser.close();
server.close();

const ms = a => median(a).toFixed(1);
console.log(`${ROUNDS} alternating rounds of ${RUNS} runs per side and page; medians in ms`);
console.log('page               pw click+aria   sightline perform+observe   ratio');
for (const name of PAGES) {
  const p = pw[name], s = sight[name];
  console.log(`${name.padEnd(18)} ${ms(p.pairMs).padStart(13)} ${ms(s.pairMs).padStart(27)} ` +
              `${(median(s.pairMs) / median(p.pairMs)).toFixed(2).padStart(7)}`);
}
console.log('\nphases (medians of each phase, ms):');
for (const name of PAGES) {
  const p = pw[name], s = sight[name];
  console.log(`${name}: playwright click ${ms(p.clickMs)} + aria ${ms(p.observeMs)}; ` +
              `sightline dispatch ${ms(s.dispatchMs)} + action ${ms(s.actionMs)} + ` +
              `settle ${ms(s.settleMs)} + observe ${ms(s.observeMs)} ` +
              `(click ${ms(s.clickMs)}, ratio ${(median(s.clickMs) / median(p.clickMs)).toFixed(2)}; ` +
              `observe ratio ${(median(s.observeMs) / median(p.observeMs)).toFixed(2)}); ` +
              `settled by ${Object.entries(s.settleReasons).map(([k, n]) => `${k} ×${n}`).join(', ')}`);
}
for (const name of PAGES) {
  const s = sight[name];
  if (s.pixelsMs && s.pixelsMs.length)
    console.log(`${name}: pixel-aware wait after a click ${ms(s.pixelsMs)} ms; with no action ` +
                `in the last second (the full change window) ${ms(s.pixelsAloneMs)} ms`);
}

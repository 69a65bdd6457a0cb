// SPDX-License-Identifier: GPL-3.0-or-later
// Action → observation latency: Sightline against Playwright on Chromium.
//
//   node bench/act/run.mjs --sightline _build/bench/sight-bench-act [--runs N]
//                          [--pages form.html,cards-1000.html] [--chromium /usr/bin/chromium]
//
// Serves bench/observe's generated pages (node bench/observe/gen-pages.mjs)
// on 127.0.0.1, each with a button #bench-add appended that adds an element
// when clicked. On Debian's Chromium (playwright-core, headless): the median
// of `page.click('#bench-add')` followed by `page.locator('body')
// .ariaSnapshot()`. Then runs sight-bench-act on the same URLs: a click by ref
// through SightWebPage's perform (actionability, events, settling) followed by
// a fresh default observation. Prints both and their ratio (target ≤ 1).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf('--' + name);
  return i >= 0 ? argv[i + 1] : def;
};
const RUNS = +opt('runs', 15);
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

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true,
                                        args: ['--no-sandbox'] });
const playwright = {};
for (const name of PAGES) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(base + name, { waitUntil: 'load' });
  const times = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = now();
    await page.click('#bench-add');
    await page.locator('body').ariaSnapshot();
    if (i > 0)
      times.push(now() - t0);
  }
  playwright[name] = median(times);
  await page.close();
}
await browser.close();

const sight = {};
await new Promise((resolve, reject) => {
  const child = spawn(SIGHTLINE, ['--runs', String(RUNS), ...PAGES.map(n => base + n)],
                      { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', d => { out += d; });
  child.on('close', code => {
    if (code !== 0) { reject(new Error(`${SIGHTLINE} exited with ${code}`)); return; }
    for (const line of out.trim().split('\n')) {
      const row = JSON.parse(line);
      sight[row.url.slice(base.length)] = row;
    }
    resolve();
  });
});
server.close();

console.log('page               pw click+aria ms   sightline perform+observe ms   (click alone)   ratio');
for (const name of PAGES) {
  const s = sight[name];
  console.log(`${name.padEnd(18)} ${playwright[name].toFixed(1).padStart(16)} ` +
              `${s.pairMs.toFixed(1).padStart(30)} ${('(' + s.clickMs.toFixed(1) + ')').padStart(15)} ` +
              `${(s.pairMs / playwright[name]).toFixed(2).padStart(7)}`);
}

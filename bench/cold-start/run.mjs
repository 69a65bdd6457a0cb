// SPDX-License-Identifier: GPL-3.0-or-later
// Cold start to the first screenshot: `sightline screenshot URL -o FILE` against
// a Node program that launches Playwright's Chromium (Debian's, headless), opens
// the same URL, waits for "load", writes the screenshot and closes. Whole
// processes, from spawn to exit, alternating, with the median of each and the
// ratio (issue #25: at most 0.5).
//
//   node bench/cold-start/run.mjs --sightline _build/app/sightline [--runs N]
//                                 [--page form.html] [--chromium /usr/bin/chromium]
//
// The page is one of bench/observe's generated pages (node bench/observe/gen-pages.mjs),
// served from 127.0.0.1 by this script. Each side's image must be a PNG, or the bench fails.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argv, opt } from '../args.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = +opt('runs', 7);
const PAGE = opt('page', 'form.html');
const SIGHTLINE = opt('sightline', join(root, '_build', 'app', 'sightline'));
const CHROMIUM = opt('chromium', '/usr/bin/chromium');
const pagesDir = join(root, 'bench', 'observe', 'pages');
const playwrightFrom = join(root, 'bench', 'observe', 'package.json');

if (!existsSync(join(pagesDir, PAGE))) {
  console.error(`no ${PAGE} in ${pagesDir}: run  node bench/observe/gen-pages.mjs  first`);
  process.exit(2);
}
if (!existsSync(join(root, 'bench', 'observe', 'node_modules', 'playwright-core'))) {
  console.error('playwright-core not found: npm ci in bench/observe');
  process.exit(2);
}

const server = http.createServer((req, res) => {
  const file = join(pagesDir, (req.url.split('?')[0].slice(1) || PAGE));
  if (!file.startsWith(pagesDir) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/${PAGE}`;
const work = mkdtempSync(join(tmpdir(), 'sight-cold-'));

// The Playwright side as its own process, so both sides pay for starting a program.
const playwrightScript = `
const { createRequire } = require('node:module');
const { chromium } = createRequire(${JSON.stringify(playwrightFrom)})('playwright-core');
(async () => {
  const browser = await chromium.launch({ executablePath: ${JSON.stringify(CHROMIUM)},
                                          args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  await page.goto(process.argv[1], { waitUntil: 'load' });
  await page.screenshot({ path: process.argv[2] });
  await browser.close();
})().catch((e) => { console.error(e); process.exit(1); });
`;

function timed(cmd, args, out) {
  rmSync(out, { force: true });
  const start = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => { err += d; });
    const deadline = setTimeout(() => child.kill('SIGKILL'), 60000);
    child.on('exit', (code, signal) => {
      clearTimeout(deadline);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const png = existsSync(out) && readFileSync(out).subarray(1, 4).toString() === 'PNG';
      if (code !== 0 || !png)
        reject(new Error(`${cmd} ${args.join(' ')}: exit ${code ?? signal}, png ${png}\n${err}`));
      else
        resolve(ms);
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const sight = [];
const pw = [];
try {
  for (let i = 0; i < RUNS; i++) {
    const s = join(work, 's.png');
    const p = join(work, 'p.png');
    // Alternate which side goes first, so neither always finds the caches warm.
    const sides = [
      async () => sight.push(await timed(SIGHTLINE, ['screenshot', url, '-o', s], s)),
      async () => pw.push(await timed(process.execPath, ['-e', playwrightScript, url, p], p)),
    ];
    if (i % 2) sides.reverse();
    for (const side of sides) await side();
  }
} finally {
  server.close();
  rmSync(work, { recursive: true, force: true });
}

const ms = (x) => x.toFixed(0).padStart(6);
console.log(`cold start to first screenshot, ${PAGE}, ${RUNS} runs each, alternating`);
console.log(`            median    min    max`);
console.log(`sightline   ${ms(median(sight))} ${ms(Math.min(...sight))} ${ms(Math.max(...sight))}  ms`);
console.log(`playwright  ${ms(median(pw))} ${ms(Math.min(...pw))} ${ms(Math.max(...pw))}  ms`);
console.log(`ratio (target <= 0.50): ${(median(sight) / median(pw)).toFixed(2)}`);

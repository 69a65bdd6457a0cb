// SPDX-License-Identifier: GPL-3.0-or-later
// Every node against Chromium's own accessibility tree: snapshot.js runs in
// Debian's Chromium on each page of a folder (default bench/observe/fidelity:
// hand-written pages, each about a class of tricky markup; the observation
// fixtures are another good folder), its listed elements are marked, and
// each node of CDP's Accessibility.getFullAXTree with a role of substance is
// compared by (role, name) with the node Sightline lists for that element.
// Prints each difference, then per page and in all how many agree; nodes
// only Sightline lists are printed apart (not counted). run.mjs's agreement
// line is the same comparison for interactive elements on the large pages.
//
//   node fidelity.mjs [--pages-dir DIR] [--snapshot FILE] [--chromium PATH]
//
// --snapshot: another snapshot.js (an older commit's: git show REV:PATH),
// for a before/after in one machine's run.
import { chromium } from 'playwright-core';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { opt } from '../args.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const src = readFileSync(opt('snapshot', join(here, '..', '..', 'src', 'engine', 'js', 'snapshot.js')),
                         'utf8');
const dir = opt('pages-dir', join(here, 'fidelity'));
const CHROMIUM = opt('chromium', '/usr/bin/chromium');

// Chromium's roles with no counterpart a page author sets (text runs, its
// internal structure) or that Sightline spells apart (described in
// docs/observation.md): not compared.
const SKIP = new Set(['generic', 'StaticText', 'InlineTextBox', 'none', 'LineBreak', 'RootWebArea',
  'paragraph', 'LabelText', 'ListMarker', 'Figcaption', 'DescriptionList', 'Iframe', 'Video',
  'Legend', 'rowgroup', 'Abbr', 'Section', 'Canvas', 'time', 'strong', 'emphasis', 'code', 'Ruby',
  'sectionheader', 'sectionfooter', 'blockquote', 'caption', 'group', 'svg', 'MenuListPopup']);
const CHROME_ROLE = { image: 'img', MenuListOption: 'option', DisclosureTriangle: 'button',
  PopUpButton: 'button', ToggleButton: 'button', textField: 'textbox', ColorWell: 'button',
  Date: 'textbox', InputTime: 'textbox', DateTime: 'textbox', MathMLMath: 'math' };
const OURS_ONLY_SKIP = new Set(['generic', 'paragraph', 'group', 'none', 'caption', 'rowgroup']);

const server = http.createServer((q, r) => {
  const name = decodeURIComponent(q.url.split('?')[0]).replace(/^\/+/, '');
  if (name.includes('/') || name.includes('..')) { r.statusCode = 404; r.end(); return; }
  try {
    const body = readFileSync(join(dir, name));
    r.setHeader('Content-Type', 'text/html; charset=utf-8');
    r.end(body);
  } catch { r.statusCode = 404; r.end('not found'); }
});
await new Promise(res => server.listen(0, '127.0.0.1', res));
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });

let total = 0, agree = 0;
const perPage = [];
for (const file of readdirSync(dir).filter(f => f.endsWith('.html')).sort()) {
  const page = await browser.newPage();
  await page.goto(base + file);
  // Playwright evaluates in the page's own world: a page that replaces its
  // globals (the hostile fixtures) cannot be asked this way.
  const ours = await page.evaluate(`(async () => { ${src}
    const r = __sight.snapshot.observe ({ text: 'none' });
    const byRef = {};
    const rec = ns => { for (const n of ns || []) {
      if (n.role && n.ref && !n.ref.startsWith ('f')) {
        const el = __sight.snapshot.resolve (n.ref);
        if (el && el.setAttribute && !el.hasAttribute ('data-sight-ref')) {
          el.setAttribute ('data-sight-ref', n.ref);
          byRef[n.ref] = [n.role, n.name || ''];
        }
      }
      rec (n.children);
    } };
    rec (r.tree.children);
    return byRef; })()`).catch(e => {
    console.log(`${file}: not compared (${String(e.message).split('\n')[0]})`);
    return null;
  });
  if (ours === null) {
    await page.close();
    continue;
  }
  const cdp = await page.context().newCDPSession(page);
  const dom = await cdp.send('DOM.getDocument', { depth: -1, pierce: true });
  const refOf = new Map(), tagOf = new Map();
  // Nodes of Chromium's user-agent shadow trees (date fields, select
  // popups) are not page elements: they stay unmapped and are left out.
  const walk = n => {
    if (n.attributes)
      for (let i = 0; i < n.attributes.length; i += 2)
        if (n.attributes[i] === 'data-sight-ref') refOf.set(n.backendNodeId, n.attributes[i + 1]);
    if (n.localName) tagOf.set(n.backendNodeId, n.localName);
    for (const c of n.children || []) walk(c);
    for (const c of n.shadowRoots || []) if (c.shadowRootType !== 'user-agent') walk(c);
  };
  walk(dom.root);
  const { nodes } = await cdp.send('Accessibility.getFullAXTree');
  const seen = new Set();
  let t = 0, a = 0;
  for (const ax of nodes) {
    if (ax.ignored || ax.backendDOMNodeId === undefined || !tagOf.has(ax.backendDOMNodeId)) continue;
    let role = ax.role ? ax.role.value : '';
    role = CHROME_ROLE[role] || role;
    if (SKIP.has(role) || role.startsWith('MathML')) continue;
    // ASCII whitespace collapsed, as Sightline does (NBSP stays).
    const name = (ax.name ? String(ax.name.value || '') : '').replace(/[ \t\n\f\r]+/g, ' ').trim();
    const ref = refOf.get(ax.backendDOMNodeId);
    const o = ref ? ours[ref] : null;
    if (ref) seen.add(ref);
    t++;
    if (o && o[0] === role && o[1] === name) { a++; continue; }
    console.log(`${file} <${tagOf.get(ax.backendDOMNodeId)}> chromium ${JSON.stringify([role, name])}` +
                ` sightline ${o ? JSON.stringify(o) : '(not listed)'}`);
  }
  for (const [ref, o] of Object.entries(ours))
    if (!seen.has(ref) && !OURS_ONLY_SKIP.has(o[0]))
      console.log(`${file} ${ref} only sightline ${JSON.stringify(o)}`);
  perPage.push([file, a, t]);
  total += t; agree += a;
  await page.close();
}
console.log('\n(role, name) agreement with Chromium\'s accessibility tree, every node:');
for (const [file, a, t] of perPage)
  console.log(`  ${file.padEnd(16)} ${a}/${t}` + (t ? ` (${(100 * a / t).toFixed(1)}%)` : ''));
console.log(`  all pages: ${agree}/${total} (${(100 * agree / total).toFixed(2)}%)`);
await browser.close();
server.close();

// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a script body for `sight-bench-observe --probe FILE`: an instrumented
// copy of snapshot.js (self time and calls per function of the walk and per
// engine call: getComputedStyle's properties, getBoundingClientRect,
// getAttribute, ...) that times the bare walk and one observe() in the page.
// The wrappers cost more than the small calls they time: read the rows as
// where the calls are, and primitives.js for what each costs unwrapped.
//
//   node profile.mjs ../../src/engine/js/snapshot.js > /tmp/profile.js
//   xvfb-run -a ../../_build/bench/sight-bench-observe --runs 1 --probe /tmp/profile.js URL...
import { readFileSync } from 'node:fs';
const src = readFileSync(process.argv[2], 'utf8');
const fns = ['cssOf','cursorOf','isPlain','contentOf','roleOf','computeRole','implicitRole','nameOf','contentName','textAlt','labelledByName','nativeName','labelsName','labelsOf','descriptionOf','setStates','boxOf','contentsBox','refOf','finishNode','inViewport','isSecure','pseudoText','fullText','compactText','stripInternal','visit','visitGuarded','inContext','hasAuthorName','anyFocusable','hasAnyGlobalAria','embeddedValue','charge','childName','hasInteractive','countInto','chainLine','nodeLine'];
const inject = `
  const __P = {}; const __S = [];
  const __rec = (name, dt) => { const c = __S.pop (); const p = __P[name] || (__P[name] = { self: 0, calls: 0 }); p.self += dt - c; p.calls++; if (__S.length) __S[__S.length - 1] += dt; };
  const __wrap = (name, f) => function (a, b, c, d, e, g) { const t0 = performance.now (); __S.push (0); try { return f.call (this, a, b, c, d, e, g); } finally { __rec (name, performance.now () - t0); } };
  ${fns.map(f => `${f} = __wrap ('${f}', ${f});`).join('\n  ')}
  const __native = (proto, key, name) => { const d = Object.getOwnPropertyDescriptor (proto, key); if (!d) return; if (d.value) { const f = d.value; proto[key] = function (...a) { const t0 = performance.now (); __S.push (0); try { return f.apply (this, a); } finally { __rec (name, performance.now () - t0); } }; } else if (d.get) { const g = d.get; Object.defineProperty (proto, key, { get () { const t0 = performance.now (); __S.push (0); try { return g.call (this); } finally { __rec (name, performance.now () - t0); } }, configurable: true }); } };
  __native (Window.prototype, 'getComputedStyle', 'N:getComputedStyle');
  __native (Element.prototype, 'getBoundingClientRect', 'N:getBoundingClientRect');
  __native (Element.prototype, 'checkVisibility', 'N:checkVisibility');
  __native (Element.prototype, 'getAttributeNames', 'N:getAttributeNames');
  __native (Range.prototype, 'getBoundingClientRect', 'N:range.getBoundingClientRect');
  __native (Element.prototype, 'getAttribute', 'N:getAttribute');
  __native (Element.prototype, 'hasAttribute', 'N:hasAttribute');
  __native (Element.prototype, 'closest', 'N:closest');
  __native (Element.prototype, 'matches', 'N:matches');
  __native (Element.prototype, 'querySelector', 'N:querySelector');
  __native (Node.prototype, 'firstChild', 'N:firstChild');
  __native (Node.prototype, 'nextSibling', 'N:nextSibling');
  __native (Element.prototype, 'localName', 'N:localName');
  __native (Node.prototype, 'nodeType', 'N:nodeType');
  { let p = Object.getPrototypeOf (getComputedStyle (document.body)); while (p && !Object.getOwnPropertyDescriptor (p, 'display')) p = Object.getPrototypeOf (p);
    if (p) for (const k of ['display', 'visibility', 'cursor', 'content']) __native (p, k, 'N:style.' + k); }
  G.__sightProf = __P;
`;
const marker = '  G.__sight.snapshot = {';
if (!src.includes(marker)) throw new Error('marker');
let body = src.replace(marker, inject + marker).replace("const VERSION = 1;", "const VERSION = 'prof';");
body = body + `
const tb = performance.now (); __sight.snapshot.bareWalk (); const bare = performance.now () - tb;
const t0 = performance.now ();
const r = __sight.snapshot.observe ({ text: 'compact' });
const total = performance.now () - t0;
const P = globalThis.__sightProf;
const rows = Object.keys (P).map (k => [k, Math.round (P[k].self), P[k].calls]).sort ((a, b) => b[1] - a[1]);
return { bare: Math.round (bare), total: Math.round (total), timing: r.timing, elements: r.counts.elements, nodes: r.counts.nodes, rows };
`;
process.stdout.write(body);

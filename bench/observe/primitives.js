/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A script body for `sight-bench-observe --probe primitives.js`: what each
 * kind of engine call the observation makes costs over every element of the
 * page, unwrapped, median of 3, against the bare walk in the same script. */
const els = [];
const rec = el => { els.push (el); for (let c = el.firstElementChild; c; c = c.nextElementSibling) rec (c); };
const med = a => { const s = [...a].sort ((x, y) => x - y); return s[Math.floor (s.length / 2)]; };
const T = {};
const time = (k, f) => { const t0 = performance.now (); f (); (T[k] = T[k] || []).push (performance.now () - t0); };
const win = window;
for (let r = 0; r < 3; r++) {
  time ('bare walk (children recursion)', () => { els.length = 0; rec (document.documentElement); });
  time ('getComputedStyle + display', () => { for (const e of els) win.getComputedStyle (e).display; });
  time ('getComputedStyle + display + visibility', () => { for (const e of els) { const d = win.getComputedStyle (e); d.display; d.visibility; } });
  time ('... + cursor', () => { for (const e of els) { const d = win.getComputedStyle (e); d.display; d.visibility; d.cursor; } });
  time ('getBoundingClientRect, every element', () => { for (const e of els) e.getBoundingClientRect (); });
  time ('getBoundingClientRect, every other element', () => { for (let i = 0; i < els.length; i += 2) els[i].getBoundingClientRect (); });
  time ('12 getAttribute', () => { for (const e of els) { for (const a of ['role','aria-label','aria-labelledby','aria-labeledby','title','aria-hidden','inert','tabindex','onclick','aria-describedby','aria-description','placeholder']) e.getAttribute (a); } });
  time ('hasAttributes + getAttributeNames', () => { for (const e of els) if (e.hasAttributes ()) e.getAttributeNames (); });
  const wm = new WeakMap (); for (const e of els) wm.set (e, 'x');
  time ('WeakMap.get', () => { for (const e of els) wm.get (e); });
  const m = new Map ();
  time ('Map.set', () => { for (const e of els) m.set (e, 1); });
  time ('node object + children array', () => { const out = []; for (const e of els) out.push ({ ref: 'e1', role: 'generic', box: [1, 2, 3, 4], children: [] }); });
  time ('textContent', () => { for (const e of els) if (e.localName === 'a' || e.localName === 'td') e.textContent; });
}
const out = { elements: els.length };
for (const k in T) out[k] = Math.round (med (T[k]));
return out;

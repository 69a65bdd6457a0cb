// SPDX-License-Identifier: GPL-3.0-or-later
// Writes a script body for `sight-bench-observe --probe FILE`: two versions
// of snapshot.js in one page script, their observe() (JSON.stringify
// included) alternated in turn with the bare walk, first one then the other
// first, ROUNDS times; prints the medians and each one's ratio to the bare
// walk. The load moves less between calls of one script than between runs.
//
//   git show main:src/engine/js/snapshot.js > /tmp/old.js
//   node ab.mjs /tmp/old.js ../../src/engine/js/snapshot.js [ROUNDS] > /tmp/ab.js
//   xvfb-run -a ../../_build/bench/sight-bench-observe --runs 1 --probe /tmp/ab.js URL...
import { readFileSync } from 'node:fs';
const [oldFile, newFile, rounds = '7'] = process.argv.slice(2);
const body = readFileSync(oldFile, 'utf8') +
  '\nconst A = __sight.snapshot; delete __sight.snapshot;\n' +
  readFileSync(newFile, 'utf8') + `
const B = __sight.snapshot;
const med = a => { const s = [...a].sort ((x, y) => x - y); return s[Math.floor (s.length / 2)]; };
const T = { bare: [], old: [], new: [] };
for (let r = 0; r < ${Number(rounds)}; r++) {
  let t = performance.now (); A.bareWalk (); T.bare.push (performance.now () - t);
  for (const X of r % 2 ? [A, B] : [B, A]) {
    t = performance.now (); JSON.stringify (X.observe ({ text: 'compact' }));
    (X === A ? T.old : T.new).push (performance.now () - t);
  }
}
const o = {}; for (const k in T) o[k] = Math.round (med (T[k]));
o.oldPerBare = +(o.old / o.bare).toFixed (2); o.newPerBare = +(o.new / o.bare).toFixed (2);
o.newPerOld = +(o.new / o.old).toFixed (2);
return o;
`;
process.stdout.write(body);

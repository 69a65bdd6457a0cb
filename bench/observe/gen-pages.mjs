// SPDX-License-Identifier: GPL-3.0-or-later
// Writes the observation benchmark's pages into a directory (default ./pages).
// Deterministic: a fixed-seed generator, so every run and both engines see the
// same bytes.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2] || new URL('./pages', import.meta.url).pathname;
mkdirSync(out, { recursive: true });

let seed = 0x5eed;
const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
const pick = a => a[Math.floor(rnd() * a.length)];
const ADJ = ['Sturdy', 'Compact', 'Quiet', 'Bright', 'Classic', 'Modern', 'Rugged', 'Smart', 'Light', 'Deluxe'];
const NOUN = ['Kettle', 'Lamp', 'Backpack', 'Chair', 'Speaker', 'Blender', 'Jacket', 'Monitor', 'Mug', 'Tent'];
const COLOR = ['red', 'blue', 'green', 'black', 'white', 'grey', 'orange'];
const esc = s => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

const CSS = `
body{font:14px/1.4 sans-serif;margin:0}
header,footer{padding:8px 16px;background:#eee}
nav a{margin-right:12px}
.grid{display:grid;grid-template-columns:repeat(4,1fr);gap:12px;padding:12px}
.card{border:1px solid #ccc;padding:8px}
.card .media{height:80px;background:#ddd}
.card .media img{width:60px;height:60px}
.price{font-weight:bold}
.tile{cursor:pointer}
.sr-only{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
table{border-collapse:collapse} td,th{border:1px solid #ccc;padding:2px 6px}
`;

function page(title, body, extraHead = '') {
  return `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>` +
    `<style>${CSS}</style>${extraHead}</head><body>${body}</body></html>\n`;
}

function chrome(inner) {
  return `<header><a href="/" aria-label="Home">Shop</a>` +
    `<nav aria-label="Main"><a href="/new">New</a><a href="/sale">Sale</a><a href="/help">Help</a></nav>` +
    `<form role="search" aria-label="Site"><input type="search" name="q" placeholder="Search products">` +
    `<button type="submit">Search</button></form></header>` +
    `<main>${inner}</main>` +
    `<footer><p>© Example Shop</p><a href="/privacy">Privacy</a> <a href="/terms">Terms</a></footer>`;
}

function cards(n) {
  let s = `<h1>Products</h1><div class="filters"><label><input type="checkbox" name="stock"> In stock</label>` +
    `<label for="sort">Sort by</label><select id="sort"><option>Relevance</option><option>Price</option></select></div>` +
    `<div class="grid">`;
  for (let i = 1; i <= n; i++) {
    const name = `${pick(ADJ)} ${pick(NOUN)} ${i}`;
    const price = (5 + Math.floor(rnd() * 500)) + '.' + String(Math.floor(rnd() * 100)).padStart(2, '0');
    s += `<article class="card"><div class="media"><img src="data:," alt="${esc(name)} in ${pick(COLOR)}"></div>` +
      `<div class="body"><h3><a href="/p/${i}">${esc(name)}</a></h3>` +
      `<p>${pick(['Ships tomorrow', 'Back in stock', 'Limited edition', 'Customer favourite'])}.</p>` +
      `<div class="foot"><span class="price">$${price}</span> ` +
      `<button type="button" aria-label="Add ${esc(name)} to cart">Add</button></div></div></article>`;
  }
  return page(`Products (${n})`, chrome(s + '</div>'));
}

function table(n) {
  let s = `<h1>Orders</h1><table><caption>Orders (${n})</caption><thead><tr>` +
    `<th>Order</th><th>Customer</th><th>Total</th><th>Status</th><th>Actions</th></tr></thead><tbody>`;
  for (let i = 1; i <= n; i++) {
    s += `<tr><td>#${10000 + i}</td><td>${pick(['Ada', 'Brian', 'Chen', 'Dana', 'Eli'])} ${pick(['Ng', 'Olsen', 'Park', 'Quinn'])}</td>` +
      `<td>$${Math.floor(rnd() * 900) + 10}</td><td>${pick(['paid', 'shipped', 'refunded'])}</td>` +
      `<td><a href="/orders/${i}">View</a> <button type="button">Refund</button></td></tr>`;
  }
  return page(`Orders (${n})`, chrome(s + '</tbody></table>'));
}

function form() {
  let s = `<h1>Account settings</h1><form aria-label="Settings" action="/save">`;
  s += `<fieldset><legend>Profile</legend>`;
  const fields = ['First name', 'Last name', 'Display name', 'Company', 'Job title', 'City',
    'Street', 'Postcode', 'Website', 'Phone'];
  fields.forEach((f, i) => {
    const type = f === 'Website' ? 'url' : f === 'Phone' ? 'tel' : 'text';
    s += `<div><label for="f${i}">${f}</label> <input id="f${i}" type="${type}" name="f${i}"${i === 0 ? ' required' : ''}></div>`;
  });
  s += `<div><label>Email <input type="email" name="email" value="ada@example.test"></label></div>`;
  s += `<div><input type="text" name="nick" placeholder="Nickname"></div>`;
  s += `<div><input type="text" name="ref" title="Referral code"></div>`;
  s += `<div><span id="bio-l">Biography</span><textarea name="bio" aria-labelledby="bio-l"></textarea></div>`;
  s += `</fieldset><fieldset><legend>Security</legend>`;
  s += `<div><label for="pw">Current password</label><input id="pw" type="password" autocomplete="current-password"></div>`;
  s += `<div><label for="npw">New password</label><input id="npw" type="password" autocomplete="new-password"></div>`;
  s += `<div><label for="otp">One-time code</label><input id="otp" type="text" inputmode="numeric" autocomplete="one-time-code"></div>`;
  s += `</fieldset><fieldset><legend>Preferences</legend>`;
  s += `<div><label for="lang">Language</label><select id="lang"><option>English</option><option selected>Français</option><option>Deutsch</option></select></div>`;
  s += `<div><label for="tz">Time zones</label><select id="tz" multiple size="3"><option>UTC</option><option>CET</option><option>PST</option></select></div>`;
  for (const c of ['Newsletter', 'Product updates', 'Security alerts', 'Weekly digest'])
    s += `<div><label><input type="checkbox" name="${c}"${c === 'Security alerts' ? ' checked' : ''}> ${c}</label></div>`;
  s += `<div role="radiogroup" aria-label="Theme">`;
  for (const t of ['Light', 'Dark', 'System'])
    s += `<label><input type="radio" name="theme" value="${t}"${t === 'System' ? ' checked' : ''}> ${t}</label>`;
  s += `</div>`;
  s += `<div><label for="vol">Volume</label><input id="vol" type="range" min="0" max="10" value="7"></div>`;
  s += `<div><label for="qty">Seats</label><input id="qty" type="number" value="3"></div>`;
  s += `<div><label for="bd">Birthday</label><input id="bd" type="date"></div>`;
  s += `<div><label for="c1">Colour</label><input id="c1" type="text" list="colours"><datalist id="colours"><option>red</option></datalist></div>`;
  s += `<div><label for="dis">Plan</label><input id="dis" type="text" value="Pro" disabled></div>`;
  s += `<div><label for="ro">Account id</label><input id="ro" type="text" value="A-1" readonly></div>`;
  s += `<div><label for="inv">Tax id</label><input id="inv" type="text" aria-invalid="true" aria-describedby="inv-h"><span id="inv-h">Must be 9 digits</span></div>`;
  s += `<div><input type="checkbox" id="terms" aria-describedby="terms-d"><label for="terms">I accept the terms</label><span id="terms-d" hidden>Required to save</span></div>`;
  s += `</fieldset><div><input type="submit" value="Save changes"> <input type="reset"> <button type="button" disabled>Delete account</button>` +
    ` <input type="image" alt="Help" src="data:,"></div></form>`;
  return page('Account settings', chrome(s));
}

function dashboard() {
  const s = `<h1>Dashboard</h1>
<div class="toolbar" role="toolbar" aria-label="Actions">
 <button type="button" aria-haspopup="menu" aria-expanded="false" aria-controls="m1">File</button>
 <ul role="menu" id="m1" hidden><li role="menuitem">New</li><li role="menuitem">Open</li></ul>
 <button type="button" aria-haspopup="menu" aria-expanded="true" aria-controls="m2">View</button>
 <ul role="menu" id="m2" aria-label="View"><li role="menuitem">Zoom in</li><li role="menuitemcheckbox" aria-checked="true">Show grid</li><li role="menuitemradio" aria-checked="false">Compact</li></ul>
 <button type="button" aria-pressed="true">Bold</button>
</div>
<div role="tablist" aria-label="Reports">
 <button role="tab" id="t1" aria-selected="true" aria-controls="p1">Overview</button>
 <button role="tab" id="t2" aria-selected="false" aria-controls="p2" tabindex="-1">Sales</button>
 <button role="tab" id="t3" aria-selected="false" aria-controls="p3" tabindex="-1">Traffic</button>
</div>
<div role="tabpanel" id="p1" aria-labelledby="t1"><h2>Overview</h2>
 <progress value="30" max="100" aria-label="Upload"></progress>
 <meter value="0.6" aria-label="Disk usage">60%</meter>
 <div class="tile" onclick="void 0">Open calendar</div>
 <span class="tile">Refresh data</span>
 <div tabindex="0">Focusable note</div>
 <details><summary>More details</summary><p>Hidden until opened</p></details>
 <details open><summary>Shown details</summary><p>Visible detail text</p></details>
 <div role="switch" aria-checked="true" tabindex="0" aria-label="Live updates"></div>
 <div role="slider" aria-valuenow="40" aria-valuemin="0" aria-valuemax="100" aria-label="Brightness" tabindex="0"></div>
 <a href="/reports" title="All reports"><img src="data:," alt=""></a>
 <a href="/help"><svg width="10" height="10"><title>Help centre</title></svg></a>
 <button type="button"><span class="sr-only">Close panel</span><span aria-hidden="true">×</span></button>
</div>
<div role="tabpanel" id="p2" aria-labelledby="t2" hidden><button>Export sales</button></div>
<div role="tabpanel" id="p3" aria-labelledby="t3" style="display:none"><button>Export traffic</button></div>
<div style="visibility:hidden"><button>Invisible</button><span style="visibility:visible"><button>Visible child</button></span></div>
<div aria-hidden="true"><button>Aria hidden</button></div>
<div inert><button>Inert button</button></div>
<div hidden><a href="/x">Hidden link</a></div>
<dialog open aria-labelledby="dlg-t"><h2 id="dlg-t">Invite teammates</h2><label>Email <input type="email"></label><button>Send invite</button></dialog>
<ul role="tree" aria-label="Folders"><li role="treeitem" aria-expanded="true" aria-level="1">Inbox</li><li role="treeitem" aria-level="2">Archive</li></ul>
<div role="grid" aria-label="Schedule"><div role="row"><div role="gridcell" tabindex="0">Mon</div><div role="gridcell">Tue</div></div></div>
<div role="combobox" aria-expanded="false" aria-label="Assignee" tabindex="0"></div>
<div role="listbox" aria-label="Priority"><div role="option" aria-selected="true">High</div><div role="option">Low</div></div>
<p>Status: <output>ready</output></p>
`;
  return page('Dashboard', chrome(s));
}

function shadow() {
  const s = `<h1>Components</h1>
<x-card id="c1"><span slot="title">Slotted title</span></x-card>
<x-card id="c2"><span slot="title">Second card</span></x-card>
<x-search></x-search>
<iframe src="frame.html" title="Embedded form" width="400" height="200"></iframe>
<iframe id="xo" title="Other origin" width="100" height="50"></iframe>
<script>
/* localhost and 127.0.0.1 are different origins on the same server. */
document.getElementById ('xo').src = location.protocol + '//localhost:' + location.port + '/frame.html';
customElements.define('x-card', class extends HTMLElement {
  constructor () { super (); const r = this.attachShadow ({ mode: 'open' });
    r.innerHTML = '<section aria-label="Card"><h2><slot name="title"></slot></h2><button>Shadow action</button><a href="/more">Read more</a></section>'; }
});
customElements.define('x-search', class extends HTMLElement {
  constructor () { super (); const r = this.attachShadow ({ mode: 'open' });
    r.innerHTML = '<label for="q">Find</label><input id="q" type="search"><button aria-labelledby="lbl">Go</button><span id="lbl" hidden>Run search</span>'; }
});
</script>`;
  return page('Components', chrome(s));
}

const frame = page('Frame', `<form><label>Coupon <input type="text" name="coupon"></label><button>Apply</button><a href="/x">Terms</a></form>`);

const pages = {
  'form.html': form(),
  'cards-100.html': cards(100),
  'cards-1000.html': cards(1000),
  'cards-5000.html': cards(5000),
  'cards-20000.html': cards(20000),
  'table-500.html': table(500),
  'table-5000.html': table(5000),
  'dashboard.html': dashboard(),
  'shadow.html': shadow(),
  'frame.html': frame,
};
for (const [name, html] of Object.entries(pages)) {
  writeFileSync(join(out, name), html);
}
console.log(`wrote ${Object.keys(pages).length} pages to ${out}`);

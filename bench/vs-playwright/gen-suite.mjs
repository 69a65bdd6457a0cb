// SPDX-License-Identifier: GPL-3.0-or-later
// Writes bench/vs-playwright's suite: 50 model-free Sightline test files over
// the bundled demo site (sign-in, sign-up, navigation, forms, expectations of
// text, visibility, value, checked state and URL), three of which fail by
// design, so that "the same verdicts" on both sides means something.
//
//   node bench/vs-playwright/gen-suite.mjs OUT_DIR
//
// OUT_DIR gets NN-name.sightline.json for each test, a sightline.json project
// file (the test and step timeouts both tools are given) and expected.json
// (file -> "pass" | "fail"). The demo site keeps no state but sign-in sessions
// (one per page's cookie jar), and every sign-up uses its own name and email,
// so the tests can run in any order on any number of workers.
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The step timeout of both tools: Sightline's defaults.actionTimeout (every
// direct step, expectations poll until it), Playwright's actionTimeout and
// expect timeout. A test that fails by design waits this long on both sides.
export const STEP_TIMEOUT_MS = 5000;
export const TEST_TIMEOUT_MS = 60000;

const EMAIL = 'member@example.test';
const PASSWORD = 'harbor-trial-2024';

const q = (text) => JSON.stringify(text);
const signIn = (email = EMAIL, password = PASSWORD) => [
  `type ${q(email)} into Email`,
  `type ${q(password)} into Password`,
  'click the Sign in button',
];
const signupAccount = (id) => [
  `type ${q('User ' + id)} into Full name`,
  `type ${q(id.toLowerCase() + '@example.test')} into Work email`,
  'click Continue',
];
const signupWorkspace = (id, terms = true) => [
  `type ${q('Workspace ' + id)} into Workspace name`,
  ...(terms ? ['check "I accept the terms of service"'] : []),
  'click Continue',
];

// [id, name, start path, steps, verdict]
const tests = [
  // sign-in
  ['s01', 'sign-in: a member signs in and sees the workspace', '/login',
   [...signIn(), 'expect URL contains /dashboard', 'expect text "Northwind Logistics"',
    'expect text "Trial"']],
  ['s02', 'sign-in: the dashboard welcomes the member by email', '/login',
   [...signIn(), 'expect text "Welcome back, member@example.test."']],
  ['s03', 'sign-in: a wrong password shows an error', '/login',
   [...signIn(EMAIL, 'wrong-password-s03'), 'expect text "Wrong email or password"',
    'expect URL contains /login']],
  ['s04', 'sign-in: after a wrong password the email stays filled', '/login',
   [...signIn(EMAIL, 'wrong-password-s04'), `expect Email has value ${q(EMAIL)}`]],
  ['s05', 'sign-in: an unknown email is refused', '/login',
   [...signIn('nobody-s05@example.test'), 'expect text "Check both and try again."',
    'expect no text "Northwind Logistics"']],
  ['s06', 'sign-in: a member signs out', '/login',
   [...signIn(), 'expect URL contains /dashboard', 'click Sign out', 'expect URL contains /login',
    'expect the "Sign in to your workspace" heading visible']],
  ['s07', 'sign-in: Enter in the password field signs in', '/login',
   [`type ${q(EMAIL)} into Email`, `type ${q(PASSWORD)} into Password`,
    'press Enter in the Password field', 'expect URL contains /dashboard']],
  ['s08', 'sign-in: the dashboard lists the projects', '/login',
   [...signIn(), 'expect text "Route planner v2"', 'expect text "At risk"',
    'expect the "Add project" button visible']],
  ['s09', 'sign-in: a member adds a project', '/login',
   [...signIn(), 'click Add project', 'expect text "New project 4"']],
  ['s10', 'sign-in: a member adds two projects', '/login',
   [...signIn(), 'click Add project', 'click Add project', 'expect text "New project 5"']],
  ['s11', 'sign-in: the dashboard needs a session', '/dashboard',
   ['expect URL contains /login', 'expect the Sign in button visible']],
  ['s12', 'sign-in: the session survives a visit to pricing', '/login',
   [...signIn(), 'go to /pricing', 'expect text "Talk to us"', 'go back',
    'expect text "Northwind Logistics"']],
  // navigation
  ['n01', 'navigation: the Pricing link opens the plans', '/login',
   ['click the Pricing link', 'expect URL contains /pricing', 'expect text "Starter"',
    'expect the "Choose Team" link visible', 'expect no text "Page not found"']],
  ['n02', 'navigation: the Start a trial link opens the sign-up form', '/login',
   ['click the "Start a trial" link', 'expect URL contains /signup',
    'expect the "Start your free trial" heading visible']],
  ['n03', 'navigation: the Docs link answers not found', '/pricing',
   ['click the Docs link', 'expect text "Page not found"',
    'expect the "Back to sign in" link visible']],
  ['n04', 'navigation: the status page lists the services', '/login',
   ['click the Status link', 'expect URL contains /status', 'expect text "System status"',
    'expect text "Degraded"']],
  ['n05', 'navigation: the logo leads back to sign in', '/pricing',
   ['click the Harbor link', 'expect the "Sign in to your workspace" heading visible']],
  ['n06', 'navigation: back and forward', '/login',
   ['click the Pricing link', 'expect URL contains /pricing', 'go back',
    'expect URL contains /login', 'go forward', 'expect URL contains /pricing']],
  ['n07', 'navigation: a reload keeps the page', '/pricing',
   ['reload', 'expect URL contains /pricing', 'expect text "Talk to us"']],
  ['n08', 'navigation: the trial guide link', '/pricing',
   ['click the "trial guide" link', 'expect URL contains /signup']],
  ['n09', 'navigation: go to a page by its path', '/login',
   ['go to /status', 'expect text "Live health of Harbor"']],
  ['n10', 'navigation: Choose Starter opens sign-up for that plan', '/pricing',
   ['click the "Choose Starter" link', 'expect URL contains plan=starter',
    'expect the "Start your free trial" heading visible']],
  ['n11', 'navigation: scrolling to the bottom shows the footer', '/pricing',
   ['scroll to the bottom', 'expect text "No data leaves this machine"']],
  ['n12', 'navigation: the sign-in form links to the trial', '/login',
   ['click the "Start a free trial" link', 'expect URL contains /signup',
    'expect text "Three short steps"']],
  // sign-up
  ['u01', 'sign-up: a visitor starts a Starter trial', '/signup',
   [...signupAccount('U01'), 'type "Workspace U01" into Workspace name', 'select "Starter" in Plan',
    'check "I accept the terms of service"', 'click Continue', 'expect text "Workspace U01"',
    'click Create workspace', 'expect text "Your workspace is ready"',
    'expect text "14-day trial of the Starter plan"']],
  ['u02', 'sign-up: the Team plan is the default', '/signup',
   [...signupAccount('U02'), ...signupWorkspace('U02'), 'click Create workspace',
    'expect text "trial of the Team plan"']],
  ['u03', 'sign-up: an Enterprise trial for a large team', '/signup',
   [...signupAccount('U03'), 'type "Workspace U03" into Workspace name',
    'select "21 or more" in Team size', 'select "Enterprise" in Plan',
    'check "I accept the terms of service"', 'click Continue', 'expect text "21 or more"',
    'click Create workspace', 'expect text "Enterprise plan"']],
  ['u04', 'sign-up: the full name is required', '/signup',
   ['click Continue', 'expect text "Enter your full name."']],
  ['u05', 'sign-up: a malformed email is refused', '/signup',
   ['type "User U05" into Full name', 'type "not-an-email" into Work email', 'click Continue',
    'expect text "Enter a valid work email."']],
  ['u06', 'sign-up: the workspace name is required', '/signup',
   [...signupAccount('U06'), 'check "I accept the terms of service"', 'click Continue',
    'expect text "Name your workspace."']],
  ['u07', 'sign-up: the terms must be accepted', '/signup',
   [...signupAccount('U07'), ...signupWorkspace('U07', false),
    'expect text "Accept the terms of service to continue."']],
  ['u08', 'sign-up: Back keeps what was typed', '/signup',
   [...signupAccount('U08'), 'click Back', 'expect Full name has value "User U08"',
    'expect Work email has value "u08@example.test"']],
  ['u09', 'sign-up: the review lists the email', '/signup',
   [...signupAccount('U09'), ...signupWorkspace('U09'), 'expect text "u09@example.test"',
    'expect the "Create workspace" button visible']],
  ['u10', 'sign-up: the second step is shown after Continue', '/signup',
   [...signupAccount('U10'), 'expect text "Step 2 of 3"',
    'expect the Workspace name field visible']],
  ['u11', 'sign-up: Choose Team on pricing leads to a Team trial', '/pricing',
   ['click the "Choose Team" link', ...signupAccount('U11'), ...signupWorkspace('U11'),
    'click Create workspace', 'expect text "Team plan"']],
  ['u12', 'sign-up: the done notice waits for the end', '/signup',
   ['expect no text "Your workspace is ready"', ...signupAccount('U12'),
    ...signupWorkspace('U12'), 'expect no text "Your workspace is ready"',
    'click Create workspace', 'expect text "Your workspace is ready"']],
  ['u13', 'sign-up: the review can go back to the workspace', '/signup',
   [...signupAccount('U13'), ...signupWorkspace('U13'), 'click Back',
    'expect Workspace name has value "Workspace U13"']],
  // forms
  ['f01', 'forms: typing fills the Email field', '/login',
   ['type "f01@example.test" into Email', 'expect Email has value "f01@example.test"']],
  ['f02', 'forms: clearing empties the Email field', '/login',
   ['type "f02@example.test" into Email', 'clear Email', 'expect Email has value ""']],
  ['f03', 'forms: fill replaces what the field held', '/login',
   ['fill Email with "first-f03@example.test"', 'fill Email with "second-f03@example.test"',
    'expect Email has value "second-f03@example.test"']],
  ['f04', 'forms: the Full name field keeps what was typed', '/signup',
   ['type "User F04" into Full name', 'expect Full name has value "User F04"']],
  ['f05', 'forms: the terms start unchecked', '/signup',
   [...signupAccount('F05'), 'expect "I accept the terms of service" unchecked']],
  ['f06', 'forms: the terms check and uncheck', '/signup',
   [...signupAccount('F06'), 'check "I accept the terms of service"',
    'expect "I accept the terms of service" checked', 'uncheck "I accept the terms of service"',
    'expect "I accept the terms of service" unchecked']],
  ['f07', 'forms: the Sign in button is enabled', '/login',
   ['expect the Sign in button enabled', 'expect the Email field visible']],
  ['f08', 'forms: the team size shows in the review', '/signup',
   [...signupAccount('F08'), 'type "Workspace F08" into Workspace name',
    'select "6–20 people" in Team size', 'check "I accept the terms of service"',
    'click Continue', 'expect text "6–20 people"']],
  ['f09', 'forms: the Work email field keeps what was typed', '/signup',
   ['type "f09@example.test" into Work email', 'expect Work email has value "f09@example.test"']],
  ['f10', 'forms: the workspace name shows in the review', '/signup',
   [...signupAccount('F10'), ...signupWorkspace('F10'), 'expect text "Workspace F10"',
    'expect text "User F10"']],
  // fail by design
  ['x01', 'fails by design: the dashboard shows no Enterprise plan', '/login',
   [...signIn(), 'expect URL contains /dashboard', 'expect text "Plan: Enterprise"'], 'fail'],
  ['x02', 'fails by design: a wrong password does not reach the dashboard', '/login',
   [...signIn(EMAIL, 'wrong-password-x02'), 'expect URL contains /dashboard'], 'fail'],
  ['x03', 'fails by design: the terms are not checked by themselves', '/signup',
   [...signupAccount('X03'), 'expect "I accept the terms of service" checked'], 'fail'],
];

export function generateSuite(dir) {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir))
    if (f.endsWith('.sightline.json'))
      rmSync(join(dir, f));
  const expected = {};
  tests.forEach(([id, name, url, steps, verdict = 'pass'], i) => {
    const file = `${String(i + 1).padStart(2, '0')}-${id}.sightline.json`;
    const test = { name, url, steps: steps.map((text) => ({ do: text })) };
    writeFileSync(join(dir, file), JSON.stringify(test, null, 2) + '\n');
    expected[file] = verdict;
  });
  writeFileSync(join(dir, 'sightline.json'), JSON.stringify({
    defaults: { timeout: TEST_TIMEOUT_MS, actionTimeout: STEP_TIMEOUT_MS },
  }, null, 2) + '\n');
  writeFileSync(join(dir, 'expected.json'), JSON.stringify(expected, null, 2) + '\n');
  return expected;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.length !== 3) {
    console.error('usage: node gen-suite.mjs OUT_DIR');
    process.exit(2);
  }
  const expected = generateSuite(process.argv[2]);
  const n = Object.keys(expected).length;
  const failing = Object.values(expected).filter((v) => v === 'fail').length;
  console.log(`${n} tests (${failing} fail by design) in ${process.argv[2]}`);
}

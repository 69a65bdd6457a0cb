// SPDX-License-Identifier: GPL-3.0-or-later
// A Playwright Test reporter for bench/vs-playwright: Playwright's own JSON
// reporter keeps only test.step steps, so this one keeps every step's
// category (hook, fixture, pw:api, expect), title, start and duration, with
// the runner's begin and end, to split each test's wall time into phases.
// Options: { outputFile }.
const { writeFileSync } = require('node:fs');
const { basename } = require('node:path');

class PhasesReporter {
  constructor(options = {}) {
    this.outputFile = options.outputFile;
    this.out = { begin: 0, end: 0, exit: 0, tests: [] };
  }

  printsToStdio() {
    return false;
  }

  onBegin() {
    this.out.begin = Date.now();
  }

  onTestEnd(test, result) {
    const steps = [];
    const walk = (list, depth, parent) => {
      for (const s of list) {
        steps.push({ category: s.category, title: s.title, depth, parent,
                     start: s.startTime.getTime(), ms: s.duration });
        walk(s.steps, depth + 1, s.title);
      }
    };
    walk(result.steps, 0, null);
    this.out.tests.push({ file: basename(test.location.file), status: result.status,
                          workerIndex: result.workerIndex, parallelIndex: result.parallelIndex,
                          start: result.startTime.getTime(), ms: result.duration, steps });
  }

  onEnd() {
    this.out.end = Date.now();
  }

  onExit() {
    this.out.exit = Date.now();
    writeFileSync(this.outputFile, JSON.stringify(this.out));
  }
}

module.exports = PhasesReporter;

// SPDX-License-Identifier: GPL-3.0-or-later
// The benches' command line: `--name VALUE` options and bare `--flag`s.
export const argv = process.argv.slice(2);

// The value after --NAME, else DEF.
export const opt = (name, def) => {
  const i = argv.indexOf('--' + name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : def;
};

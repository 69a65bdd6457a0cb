#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Validates flatpak/dev.sightline.Sightline.json, since the GNOME runtime cannot
be downloaded here to build it: the JSON parses, the runtime provides what the
app links (GTK 4, libadwaita, WebKitGTK 6.0, libsoup 3), the sandbox holds only
the permissions the app needs, and the app module builds the local checkout.

Usage: check-flatpak.py SOURCE_ROOT APP_ID"""

import json
import os
import re
import sys

root, app_id = sys.argv[1], sys.argv[2]
path = os.path.join(root, 'flatpak', app_id + '.json')
failures = []


def check(cond, message):
    print(('ok - ' if cond else 'not ok - ') + message)
    if not cond:
        failures.append(message)


with open(path, encoding='utf-8') as f:
    manifest = json.load(f)  # a syntax error fails here, with line and column

check(manifest.get('id', manifest.get('app-id')) == app_id, 'the manifest id is ' + app_id)
check(manifest.get('command') == 'sightline', 'the command is sightline')
check(manifest.get('runtime') == 'org.gnome.Platform', 'the runtime is org.gnome.Platform')
check(manifest.get('sdk') == 'org.gnome.Sdk', 'the SDK is org.gnome.Sdk')

# WebKitGTK 6.0 (GTK 4) is in the GNOME runtime from 44 on; so are libadwaita,
# libsoup 3, json-glib, libsecret and SQLite (from the freedesktop base).
version = str(manifest.get('runtime-version', ''))
check(re.fullmatch(r'\d+', version) is not None and int(version) >= 44,
      f'runtime-version {version!r} is a GNOME release of 44 or later (webkitgtk-6.0)')

# Least privilege: exactly the sockets and devices a browser-test app needs.
required = {'--share=network', '--share=ipc', '--socket=wayland', '--socket=fallback-x11',
            '--device=dri'}
finish = manifest.get('finish-args', [])
check(len(finish) == len(set(finish)), 'finish-args has no duplicates')
check(required <= set(finish), 'finish-args grants network, ipc, wayland, fallback-x11 and dri')
extra = [a for a in finish if a not in required]
check(not extra, f'finish-args grants nothing more (extra: {extra})')
forbidden = re.compile(r'^--(filesystem=|socket=(x11|session-bus|system-bus|pulseaudio|ssh-auth)'
                       r'|device=all|talk-name=org\.freedesktop\.Flatpak|allow=devel)')
check(not [a for a in finish if forbidden.match(a)],
      'no host filesystem, plain x11, bus sockets or device=all')

modules = manifest.get('modules', [])
check(isinstance(modules, list) and modules, 'the manifest has modules')
app = modules[-1] if modules else {}
check(isinstance(app, dict) and app.get('name') == 'sightline', 'the last module is sightline')
check(app.get('buildsystem') == 'meson', 'the app module builds with meson')
sources = app.get('sources', [])
dirs = [s for s in sources if isinstance(s, dict) and s.get('type') == 'dir']
check(len(dirs) == 1, 'the app module is built from a local directory (type dir)')
if dirs:
    checkout = os.path.normpath(os.path.join(os.path.dirname(path), dirs[0].get('path', '')))
    meson_build = os.path.join(checkout, 'meson.build')
    skip = dirs[0].get('skip', [])
    check('_build' in skip and '.flatpak-builder' in skip,
          'the dir source skips the build folders (_build, .flatpak-builder)')
    check(os.path.isfile(meson_build) and
          "project('sightline'" in open(meson_build, encoding='utf-8').read(),
          'the dir source is this checkout (its meson.build declares sightline)')

# Every -Dname=value names a real option of meson_options.txt.
with open(os.path.join(root, 'meson_options.txt'), encoding='utf-8') as f:
    options = set(re.findall(r"option\s*\(\s*'([^']+)'", f.read()))
for opt in app.get('config-opts', []):
    m = re.match(r'-D([^=]+)=', opt)
    if m:
        check(m.group(1) in options, f'config-opt {opt} is an option of meson_options.txt')

# Other modules (none today) must pin what they download.
for mod in modules[:-1]:
    if isinstance(mod, dict):
        for src in mod.get('sources', []):
            if isinstance(src, dict) and src.get('type') in ('archive', 'file'):
                check('sha256' in src, f"module {mod.get('name')}: {src.get('url')} pins a sha256")

print(f'{len(failures)} failed')
sys.exit(1 if failures else 0)

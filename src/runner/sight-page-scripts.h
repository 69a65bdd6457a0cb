/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The runner's page scripts (src/runner/js), compiled into a GResource:
 * returns the text of @name ("scrape.js", "turndown.js", …). */
const char *sight_page_script (const char *name);

G_END_DECLS

/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* `sightline serve` while the app runs: asks the running instance (the
 * GApplication on the session bus) to serve MCP from its window, where the
 * sessions its clients open appear live. Returns the endpoint; NULL with no
 * error when no instance runs (or there is no session bus), NULL with
 * ENVIRONMENT_UNAVAILABLE when it runs but could not serve. */
char *sight_serve_attach (GError **error);

G_END_DECLS

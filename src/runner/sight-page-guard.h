/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

#include "sight-project.h"
#include "sight-web-page.h"

G_BEGIN_DECLS

/* The one place that decides where a page a run opens may go, for every
 * runner that opens one (test files, smoke tests, sessions and so the
 * skills, tasks and MCP tools on them, `sightline step`): @allow_hosts when
 * given (MCP's allowHosts: hosts or origins), else the origin of @start_url
 * plus @project's allowedOrigins ("*" there: anywhere); a NULL @project is
 * the project file found from the current folder, and when that file cannot
 * be read the start origin alone (the step that reads it reports why). The
 * list goes to WebKit's policy handler and subresource filter
 * (sight_web_page_set_allowed_origins): navigations, redirects, popups,
 * frames and subresources elsewhere are refused and logged, and the steps
 * record them. A page with no allowHosts and no http(s) start URL is left
 * unguarded. Fails (INVALID_ARGUMENT) only for an @allow_hosts entry that is
 * no host or origin. Call it once, when the page is made, before its first
 * load. */
gboolean sight_page_guard (SightWebPage       *page,
                           SightProject       *project,
                           const char         *start_url,
                           const char * const *allow_hosts,
                           GError            **error);

G_END_DECLS

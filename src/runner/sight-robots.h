/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* robots.txt as RFC 9309 specifies it: groups by user-agent product token,
 * the longest matching rule wins, allow wins a tie, `*` and `$` in paths,
 * at most 500 KiB parsed. */
typedef struct _SightRobots SightRobots;

#define SIGHT_ROBOTS_MAX_BYTES (500 * 1024)

/* Rules of @text (may be NULL) that apply to @user_agent's product token. */
SightRobots *sight_robots_parse            (const char  *text,
                                            gsize        length,
                                            const char  *user_agent);
/* What the RFC says to do when robots.txt could not be read: a 4xx status
 * allows everything; 5xx or an unreachable server disallows everything. */
SightRobots *sight_robots_new_for_status   (guint        http_status);
gboolean     sight_robots_is_allowed       (SightRobots *self,
                                            const char  *path_and_query);
/* Sitemap: lines, absolute URLs (borrowed, NULL-terminated). */
const char * const *sight_robots_get_sitemaps (SightRobots *self);
void         sight_robots_free             (SightRobots *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightRobots, sight_robots_free)

G_END_DECLS

/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Which origins a page may navigate to: its own frames, redirects and popups
 * included. Each entry is an origin ("https://shop.example", "http://127.0.0.1:8765":
 * scheme, host and port must match) or a bare host ("shop.example": that host
 * over http or https on any port). about:blank and about:srcdoc are always
 * allowed; a blob: URL counts as the origin that made it; data:, file: and
 * anything else without a listed origin are refused. */
typedef struct _SightOriginPolicy SightOriginPolicy;

SightOriginPolicy *sight_origin_policy_new     (const char * const *entries,
                                                GError            **error);
SightOriginPolicy *sight_origin_policy_ref     (SightOriginPolicy  *self);
void               sight_origin_policy_unref   (SightOriginPolicy  *self);
gboolean           sight_origin_policy_allows  (SightOriginPolicy  *self,
                                                const char         *uri);
/* The same list as a WebKit content rule list (JSON) for subresources
 * (images, scripts, styles, fonts, media, fetch/XHR, beacons, WebSockets):
 * every URL blocked, then each origin let through (its ws:/wss: twin too),
 * and data:, blob: and about:, which stay inside the page. Documents and
 * popups are left to the navigation policy. */
char              *sight_origin_policy_to_content_rules (SightOriginPolicy *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SightOriginPolicy, sight_origin_policy_unref)

G_END_DECLS

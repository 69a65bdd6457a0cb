/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* The bundled demo site's one member account. */
#define SIGHT_DEMO_SITE_EMAIL    "member@example.test"
#define SIGHT_DEMO_SITE_PASSWORD "harbor-trial-2024"

#define SIGHT_TYPE_DEMO_SITE (sight_demo_site_get_type ())
G_DECLARE_FINAL_TYPE (SightDemoSite, sight_demo_site, SIGHT, DEMO_SITE, GObject)

/* Harbor, a small project-tracking product, served on 127.0.0.1 from the
 * binary's resources: / and /login (sign-in form), /dashboard (after sign-in:
 * workspace "Northwind Logistics", plan Team, a Trial badge), /pricing,
 * /signup (a three-step form), /status (logs a console error and throws),
 * and a Docs link in the header that answers 404. No external requests. */
SightDemoSite *sight_demo_site_new      (void);
/* Listens on @port (0 picks a free one) on the thread-default main context. */
gboolean       sight_demo_site_start    (SightDemoSite  *self,
                                         guint           port,
                                         GError        **error);
void           sight_demo_site_stop     (SightDemoSite  *self);
guint          sight_demo_site_get_port (SightDemoSite  *self);
/* "http://127.0.0.1:PORT/", or NULL when not started. */
const char    *sight_demo_site_get_url  (SightDemoSite  *self);

G_END_DECLS

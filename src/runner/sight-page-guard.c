/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-page-guard"

#include "config.h"

#include "sight-page-guard.h"

#include "sight-secrets.h"

gboolean
sight_page_guard (SightWebPage       *page,
                  SightProject       *project,
                  const char         *start_url,
                  const char * const *allow_hosts,
                  GError            **error)
{
  g_autoptr(SightProject) found = NULL;
  g_autoptr(GPtrArray) origins = NULL;
  g_autofree char *start = NULL;
  const char * const *extra;

  g_return_val_if_fail (SIGHT_IS_WEB_PAGE (page), FALSE);

  if (allow_hosts != NULL && allow_hosts[0] != NULL)
    return sight_web_page_set_allowed_origins (page, allow_hosts, error);

  start = start_url != NULL ? sight_origin_normalize (start_url) : NULL;
  if (start == NULL ||
      (!g_str_has_prefix (start, "http://") && !g_str_has_prefix (start, "https://")))
    return TRUE;
  if (project == NULL)
    {
      g_autofree char *cwd = g_get_current_dir ();
      g_autoptr(GError) unread = NULL;

      project = found = sight_project_load_for (cwd, &unread);
      if (project == NULL)
        g_debug ("No project file to widen the allowed origins: %s", unread->message);
    }
  extra = project != NULL ? sight_project_get_allowed_origins (project) : NULL;
  if (extra != NULL && g_strv_contains (extra, "*"))
    return TRUE;

  origins = g_ptr_array_new_with_free_func (g_free);
  g_ptr_array_add (origins, g_steal_pointer (&start));
  for (guint i = 0; extra != NULL && extra[i] != NULL; i++)
    g_ptr_array_add (origins, g_strdup (extra[i]));
  g_ptr_array_add (origins, NULL);
  /* The start origin and the project's are normalized already. */
  return sight_web_page_set_allowed_origins (page, (const char * const *) origins->pdata, error);
}

/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-session-agent"

#include "config.h"

#include "sight-session-agent.h"

#include "sight-error.h"
#include "sight-project.h"

#define AGENT_KEY "sight-session-agent"
#define BUSY_KEY "sight-session-busy"

SightAgent *
sight_session_get_agent (SightSession  *session,
                         GError       **error)
{
  SightAgent *agent;
  g_autoptr(SightProject) project = NULL;
  g_autofree char *cwd = NULL;

  g_return_val_if_fail (SIGHT_IS_SESSION (session), NULL);

  if (sight_session_get_status (session) != SIGHT_SESSION_LIVE)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "sessionId: the session %s has ended", sight_session_get_id (session));
      return NULL;
    }
  agent = g_object_get_data (G_OBJECT (session), AGENT_KEY);
  if (agent != NULL)
    return agent;

  cwd = g_get_current_dir ();
  project = sight_project_load_for (cwd, error);
  if (project == NULL)
    return NULL;
  agent = sight_agent_new (project, sight_session_get_page (session));
  g_object_set_data_full (G_OBJECT (session), AGENT_KEY, agent, g_object_unref);
  return agent;
}

gboolean
sight_session_claim (SightSession  *session,
                     const char    *what,
                     GError       **error)
{
  const char *holder;

  g_return_val_if_fail (SIGHT_IS_SESSION (session), FALSE);

  holder = g_object_get_data (G_OBJECT (session), BUSY_KEY);
  if (holder != NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "sessionId: the session %s is busy with %s; wait for it to finish",
                   sight_session_get_id (session), holder);
      return FALSE;
    }
  g_object_set_data_full (G_OBJECT (session), BUSY_KEY, g_strdup (what), g_free);
  sight_session_touch (session);
  return TRUE;
}

void
sight_session_release (SightSession *session)
{
  g_return_if_fail (SIGHT_IS_SESSION (session));

  g_object_set_data (G_OBJECT (session), BUSY_KEY, NULL);
  sight_session_touch (session);
}

void
_sight_session_drop_agent (SightSession *session)
{
  SightAgent *agent;

  g_return_if_fail (SIGHT_IS_SESSION (session));

  agent = g_object_get_data (G_OBJECT (session), AGENT_KEY);
  if (agent == NULL)
    return;
  sight_agent_stop (agent, "the session was stopped");
  g_object_set_data (G_OBJECT (session), AGENT_KEY, NULL);
}

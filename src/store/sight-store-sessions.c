/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include "sight-error.h"
#include "sight-store-private.h"

/* ---------------------------------------------------------------- sessions */

static void
bind_session (StoreCore     *core,
              sqlite3_stmt  *stmt,
              gconstpointer  record)
{
  const SightSessionRecord *s = record;

  _sight_store_bind_text (stmt, 1, s->id);
  _sight_store_bind_text_take (stmt, 2, _sight_store_redact (core, s->title));
  sqlite3_bind_int64 (stmt, 3, core->own_pid);
  sqlite3_bind_int64 (stmt, 4, (gint64) core->own_start);
  sqlite3_bind_int64 (stmt, 5, s->created_at ? s->created_at : g_get_real_time ());
}

static gpointer
job_open_session (StoreCore  *core,
                  gpointer    data,
                  GError    **error)
{
  return _sight_store_insert (core,
                              "INSERT INTO sessions (id, title, status, owner_pid, owner_start,"
                              "  created_at) VALUES (?, ?, 'open', ?, ?, ?)",
                              bind_session, data, error)
             ? GINT_TO_POINTER (TRUE)
             : NULL;
}

char *
sight_store_open_session (SightStore                *self,
                          const SightSessionRecord  *session,
                          GError                   **error)
{
  SightSessionRecord *copy;
  char *id;

  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  copy = _sight_store_session_copy (session);
  if (copy->id == NULL)
    copy->id = _sight_store_new_id ("sess_");
  id = g_strdup (copy->id);
  if (!_sight_store_run_sync (self, NULL, job_open_session, copy,
                              (GDestroyNotify) sight_session_record_free, error))
    g_clear_pointer (&id, g_free);
  return id;
}

static gpointer
job_end_session (StoreCore  *core,
                 gpointer    data,
                 GError    **error)
{
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!_sight_store_begin_write (core->db, error))
    return NULL;
  stmt = _sight_store_prepare (
      core->db, "UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ?", error);
  ok = stmt != NULL;
  if (ok)
    {
      sqlite3_bind_int64 (stmt, 1, g_get_real_time ());
      _sight_store_bind_text (stmt, 2, data);
      ok = _sight_store_step_done (core->db, stmt, error);
    }
  return _sight_store_commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

gboolean
sight_store_end_session (SightStore  *self,
                         const char  *session_id,
                         GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (session_id != NULL, FALSE);

  return _sight_store_run_sync (self, NULL, job_end_session, g_strdup (session_id), g_free, error)
         != NULL;
}

static gpointer
job_list_sessions (StoreCore  *core,
                   gpointer    data,
                   GError    **error)
{
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_session_record_free);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  int rc;

  stmt = _sight_store_prepare (core->db,
                               "SELECT id, title, status, created_at, ended_at FROM sessions"
                               " ORDER BY created_at DESC LIMIT ?", error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int (stmt, 1, GPOINTER_TO_UINT (data) ? (int) GPOINTER_TO_UINT (data) : -1);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightSessionRecord *s = g_new0 (SightSessionRecord, 1);

      s->id = _sight_store_col_text (stmt, 0);
      s->title = _sight_store_col_text (stmt, 1);
      s->status = _sight_store_col_text (stmt, 2);
      s->created_at = sqlite3_column_int64 (stmt, 3);
      s->ended_at = sqlite3_column_int64 (stmt, 4);
      g_ptr_array_add (sessions, s);
    }
  if (rc != SQLITE_DONE)
    {
      g_propagate_error (error, _sight_store_db_error (core->db, "listing sessions"));
      return NULL;
    }
  return g_steal_pointer (&sessions);
}

GPtrArray *
sight_store_list_sessions (SightStore  *self,
                           guint        limit,
                           GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  return _sight_store_run_sync (self, NULL, job_list_sessions, GUINT_TO_POINTER (MIN (limit, G_MAXINT)), NULL, error);
}

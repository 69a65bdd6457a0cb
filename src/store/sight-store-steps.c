/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include "sight-error.h"
#include "sight-store-private.h"

/* ------------------------------------------------------------------- steps */

static char *
default_label (const SightStepRecord *s)
{
  if (s->label)
    return g_strdup (s->label);
  return g_strdup (s->kind);
}

static void
bind_step (StoreCore     *core,
           sqlite3_stmt  *stmt,
           gconstpointer  record)
{
  const SightStepRecord *s = record;

  _sight_store_bind_text (stmt, 1, s->run_id);
  sqlite3_bind_int (stmt, 2, s->index);
  _sight_store_bind_text (stmt, 3, s->kind ? s->kind : "step");
  _sight_store_bind_text_take (stmt, 4, _sight_store_redact (core, default_label (s)));
  _sight_store_bind_text_take (stmt, 5, _sight_store_redact (core, s->instruction));
  _sight_store_bind_text_take (stmt, 6, _sight_store_redact (core, s->options_json));
  _sight_store_bind_text (stmt, 7, sight_run_verdict_to_string (s->verdict));
  _sight_store_bind_text_take (stmt, 8, _sight_store_redact (core, s->budget_json));
  sqlite3_bind_int64 (stmt, 9, s->started_at ? s->started_at : g_get_real_time ());
}

static gpointer
job_add_step (StoreCore  *core,
              gpointer    data,
              GError    **error)
{
  return _sight_store_insert (core,
                              "INSERT INTO steps (run_id, idx, kind, label, instruction, options,"
                              "  verdict, budget, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              bind_step, data, error)
             ? GINT_TO_POINTER (TRUE)
             : NULL;
}

void
sight_store_add_step_async (SightStore            *self,
                            const SightStepRecord *step,
                            GCancellable          *cancellable,
                            GAsyncReadyCallback    callback,
                            gpointer               user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (step != NULL && step->run_id != NULL);

  _sight_store_run_async (self, step->run_id, sight_store_add_step_async, job_add_step,
                          _sight_store_step_copy (step), (GDestroyNotify)sight_step_record_free,
                          NULL, cancellable, callback, user_data);
}

static gpointer
job_finish_step (StoreCore  *core,
                 gpointer    data,
                 GError    **error)
{
  SightStepRecord *s = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  gboolean ok;

  if (!_sight_store_begin_write (core->db, error))
    return NULL;
  stmt = _sight_store_prepare (
      core->db,
      "UPDATE steps SET verdict = ?, code = ?, explanation = ?, usage = ?,"
      "  cache = ?, budget = COALESCE (?, budget), model_calls = ?, actions = ?,"
      "  target_x = ?, target_y = ?, target_width = ?, target_height = ?,"
      "  finished_at = ?, instruction = COALESCE (?, instruction),"
      "  label = COALESCE (?, label), options = COALESCE (?, options) "
      "WHERE run_id = ? AND idx = ?",
      error);
  ok = stmt != NULL;
  if (ok)
    {
      _sight_store_bind_text (stmt, 1, sight_run_verdict_to_string (s->verdict));
      _sight_store_bind_text (stmt, 2, s->code);
      _sight_store_bind_text_take (stmt, 3, _sight_store_redact (core, s->explanation));
      _sight_store_bind_text_take (stmt, 4, _sight_store_redact (core, s->usage_json));
      _sight_store_bind_text_take (stmt, 5, _sight_store_redact (core, s->cache_json));
      _sight_store_bind_text_take (stmt, 6, _sight_store_redact (core, s->budget_json));
      sqlite3_bind_int (stmt, 7, s->model_calls);
      sqlite3_bind_int (stmt, 8, s->actions);
      if (s->has_target)
        {
          sqlite3_bind_double (stmt, 9, s->target_x);
          sqlite3_bind_double (stmt, 10, s->target_y);
          sqlite3_bind_double (stmt, 11, s->target_width);
          sqlite3_bind_double (stmt, 12, s->target_height);
        }
      sqlite3_bind_int64 (stmt, 13, s->finished_at ? s->finished_at : g_get_real_time ());
      _sight_store_bind_text_take (stmt, 14, _sight_store_redact (core, s->instruction));
      _sight_store_bind_text_take (stmt, 15, _sight_store_redact (core, s->label));
      _sight_store_bind_text_take (stmt, 16, _sight_store_redact (core, s->options_json));
      _sight_store_bind_text (stmt, 17, s->run_id);
      sqlite3_bind_int (stmt, 18, s->index);
      ok = _sight_store_step_done (core->db, stmt, error);
      if (ok && sqlite3_changes (core->db) == 0)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "No step %u in run %s", s->index, s->run_id);
          ok = FALSE;
        }
    }
  return _sight_store_commit_or_rollback (core->db, ok, error) ? GINT_TO_POINTER (TRUE) : NULL;
}

void
sight_store_finish_step_async (SightStore            *self,
                               const SightStepRecord *step,
                               GCancellable          *cancellable,
                               GAsyncReadyCallback    callback,
                               gpointer               user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (step != NULL && step->run_id != NULL);

  _sight_store_run_async (self, step->run_id, sight_store_finish_step_async, job_finish_step, _sight_store_step_copy (step),
                          (GDestroyNotify) sight_step_record_free, NULL,
                          cancellable, callback, user_data);
}

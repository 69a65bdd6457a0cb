/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include <string.h>

#include "sight-json.h"
#include "sight-error.h"
#include "sight-store-private.h"

/* ------------------------------------------------------------------ writes */

static char *
notes_to_json (char **notes)
{
  g_autoptr(JsonBuilder) b = NULL;
  g_autoptr(JsonNode) root = NULL;

  if (notes == NULL)
    return NULL;
  b = json_builder_new ();
  json_builder_begin_array (b);
  for (guint i = 0; notes[i]; i++)
    json_builder_add_string_value (b, notes[i]);
  json_builder_end_array (b);
  root = json_builder_get_root (b);
  return json_to_string (root, FALSE);
}

static char **
notes_from_json (const char *text)
{
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GStrvBuilder) b = NULL;
  JsonArray *array;

  if (text == NULL || (node = sight_json_parse (text, -1, SIGHT_JSON_MAX_DEPTH, NULL)) == NULL ||
      !JSON_NODE_HOLDS_ARRAY (node))
    return NULL;
  array = json_node_get_array (node);
  b = g_strv_builder_new ();
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      const char *s = json_array_get_string_element (array, i);
      if (s)
        g_strv_builder_add (b, s);
    }
  return g_strv_builder_end (b);
}

static void
bind_run (StoreCore     *core,
          sqlite3_stmt  *stmt,
          gconstpointer  record)
{
  const SightRunRecord *r = record;

  _sight_store_bind_text (stmt, 1, r->id);
  _sight_store_bind_text (stmt, 2, r->session_id);
  _sight_store_bind_text (stmt, 3, r->kind ? r->kind : "test");
  _sight_store_bind_text_take (stmt, 4, _sight_store_redact (core, r->name));
  _sight_store_bind_text_take (stmt, 5, _sight_store_redact (core, r->url));
  sqlite3_bind_int64 (stmt, 6, core->own_pid);
  sqlite3_bind_int64 (stmt, 7, (gint64) core->own_start);
  sqlite3_bind_int64 (stmt, 8, r->started_at ? r->started_at : g_get_real_time ());
}

static gpointer
job_open_run (StoreCore  *core,
              gpointer    data,
              GError    **error)
{
  return _sight_store_insert (core,
                              "INSERT INTO runs (id, session_id, kind, name, url, verdict,"
                              "  owner_pid, owner_start, started_at)"
                              " VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)",
                              bind_run, data, error)
             ? GINT_TO_POINTER (TRUE)
             : NULL;
}

static SightRunRecord *
prepare_run (const SightRunRecord *run)
{
  SightRunRecord *copy = sight_run_record_copy (run);

  if (copy->id == NULL)
    copy->id = _sight_store_new_id ("run_");
  return copy;
}

char *
sight_store_open_run (SightStore            *self,
                      const SightRunRecord  *run,
                      GError               **error)
{
  SightRunRecord *copy;
  char *id;

  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  g_return_val_if_fail (run != NULL, NULL);

  copy = prepare_run (run);
  id = g_strdup (copy->id);
  if (!_sight_store_run_sync (self, NULL, job_open_run, copy, (GDestroyNotify) sight_run_record_free, error))
    g_clear_pointer (&id, g_free);
  return id;
}

char *
sight_store_open_run_async (SightStore           *self,
                            const SightRunRecord *run,
                            GCancellable         *cancellable,
                            GAsyncReadyCallback   callback,
                            gpointer              user_data)
{
  SightRunRecord *copy;
  char *id;

  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  g_return_val_if_fail (run != NULL, NULL);

  copy = prepare_run (run);
  /* Taken before the job is queued: the store's thread frees @copy once it
   * is done, which may be before this thread runs again. */
  id = g_strdup (copy->id);
  _sight_store_run_async (self, NULL, sight_store_open_run_async, job_open_run, copy,
                          (GDestroyNotify) sight_run_record_free, NULL,
                          cancellable, callback, user_data);
  return id;
}

static gpointer
job_finish_run (StoreCore  *core,
                gpointer    data,
                GError    **error)
{
  SightRunRecord *r = data;
  g_autoptr(sqlite3_stmt) steps = NULL;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *notes = notes_to_json (r->notes);
  g_autofree char *unstored = g_strdup (g_hash_table_lookup (core->unstored, r->id));
  gint64 finished = r->finished_at ? r->finished_at : g_get_real_time ();
  gboolean ok;

  /* A write of the run failed: what is stored is not the run, so it ends
   * as an error that says so, and the caller hears it. */
  if (unstored != NULL)
    _sight_store_run_mark_unstored (r, unstored);
  ok = _sight_store_begin_write (core->db, error);
  if (!ok)
    goto failed;
  steps = _sight_store_prepare (core->db,
                                "UPDATE steps SET verdict = 'interrupted', finished_at = ?"
                                " WHERE run_id = ? AND verdict = 'running'", error);
  ok = steps != NULL;
  if (ok)
    {
      sqlite3_bind_int64 (steps, 1, finished);
      _sight_store_bind_text (steps, 2, r->id);
      ok = _sight_store_step_done (core->db, steps, error);
    }
  if (ok)
    {
      stmt = _sight_store_prepare (
          core->db,
          "UPDATE runs SET verdict = ?, code = ?, explanation = ?, final_url = ?,"
          "  answer = ?, notes = ?, finished_at = ? WHERE id = ?",
          error);
      ok = stmt != NULL;
    }
  if (ok)
    {
      _sight_store_bind_text (stmt, 1, sight_run_verdict_to_string (r->verdict));
      _sight_store_bind_text (stmt, 2, r->code);
      _sight_store_bind_text_take (stmt, 3, _sight_store_redact (core, r->explanation));
      _sight_store_bind_text_take (stmt, 4, _sight_store_redact (core, r->final_url));
      _sight_store_bind_text_take (stmt, 5, _sight_store_redact (core, r->answer));
      _sight_store_bind_text_take (stmt, 6, _sight_store_redact (core, notes));
      sqlite3_bind_int64 (stmt, 7, finished);
      _sight_store_bind_text (stmt, 8, r->id);
      ok = _sight_store_step_done (core->db, stmt, error);
      if (ok && sqlite3_changes (core->db) == 0)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "No run %s", r->id);
          ok = FALSE;
        }
    }
  ok = _sight_store_commit_or_rollback (core->db, ok, error);

failed:
  if (!ok)
    {
      _sight_store_note_unstored (core, r->id, *error);
      if (g_hash_table_contains (core->unstored, r->id))
        g_prefix_error (error, UNSTORED);
      return NULL;
    }
  if (unstored != NULL)
    {
      /* The database says it now. */
      g_hash_table_remove (core->unstored, r->id);
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   UNSTORED "%s", unstored);
      return NULL;
    }
  return GINT_TO_POINTER (TRUE);
}

gboolean
sight_store_finish_run (SightStore            *self,
                        const SightRunRecord  *run,
                        GError               **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), FALSE);
  g_return_val_if_fail (run != NULL && run->id != NULL, FALSE);

  return _sight_store_run_sync (self, NULL, job_finish_run, sight_run_record_copy (run),
                                (GDestroyNotify) sight_run_record_free, error) != NULL;
}

void
sight_store_finish_run_async (SightStore           *self,
                              const SightRunRecord *run,
                              GCancellable         *cancellable,
                              GAsyncReadyCallback   callback,
                              gpointer              user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (run != NULL && run->id != NULL);

  _sight_store_run_async (self, NULL, sight_store_finish_run_async, job_finish_run,
                          sight_run_record_copy (run), (GDestroyNotify)sight_run_record_free, NULL,
                          cancellable, callback, user_data);
}

/* ------------------------------------------------------------------- reads */

#define RUN_COLUMNS \
  "r.id, r.session_id, r.kind, r.name, r.url, r.verdict, r.code, r.explanation," \
  " r.final_url, r.answer, r.notes, r.started_at, r.finished_at"

static SightRunRecord *
run_from_row (StoreCore    *core,
              sqlite3_stmt *stmt)
{
  const char *unstored;
  SightRunRecord *r = g_new0 (SightRunRecord, 1);
  g_autofree char *verdict = NULL;
  g_autofree char *notes = NULL;

  r->id = _sight_store_col_text (stmt, 0);
  r->session_id = _sight_store_col_text (stmt, 1);
  r->kind = _sight_store_col_text (stmt, 2);
  r->name = _sight_store_col_text (stmt, 3);
  r->url = _sight_store_col_text (stmt, 4);
  verdict = _sight_store_col_text (stmt, 5);
  r->verdict = _sight_store_verdict_parse (verdict);
  r->code = _sight_store_col_text (stmt, 6);
  r->explanation = _sight_store_col_text (stmt, 7);
  r->final_url = _sight_store_col_text (stmt, 8);
  r->answer = _sight_store_col_text (stmt, 9);
  notes = _sight_store_col_text (stmt, 10);
  r->notes = notes_from_json (notes);
  r->started_at = sqlite3_column_int64 (stmt, 11);
  r->finished_at = sqlite3_column_int64 (stmt, 12);
  sight_usage_init (&r->usage);
  unstored = r->id != NULL ? g_hash_table_lookup (core->unstored, r->id) : NULL;
  if (unstored != NULL)
    _sight_store_run_mark_unstored (r, unstored);
  return r;
}

typedef struct {
  guint    limit;
  char    *verdict;
  gboolean unindexed;
} ListRunsData;

static void
list_runs_data_free (ListRunsData *d)
{
  g_free (d->verdict);
  g_free (d);
}

static gpointer
job_list_runs (StoreCore  *core,
               gpointer    data,
               GError    **error)
{
  ListRunsData *d = data;
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_run_record_free);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autofree char *sql = NULL;
  int rc;

  /* rowid breaks ties: it is part of the started_at indexes, so the newest
   * rows come straight off the index without sorting the table. */
  sql = g_strdup_printf ("WITH r AS (SELECT * FROM runs %s %s"
                         "  ORDER BY started_at DESC, rowid DESC LIMIT ?1) "
                         "SELECT " RUN_COLUMNS ", COUNT (s.idx),"
                         "  TOTAL (s.verdict = 'pass'), TOTAL (s.verdict IN ('fail', 'error')),"
                         "  TOTAL (s.verdict = 'skipped'), TOTAL (s.model_calls), TOTAL (s.actions) "
                         "FROM r LEFT JOIN steps s ON s.run_id = r.id "
                         "GROUP BY r.id ORDER BY r.started_at DESC, r.id DESC",
                         d->unindexed ? "NOT INDEXED" : "",
                         d->verdict ? "WHERE verdict = ?2" : "");
  stmt = _sight_store_prepare (core->db, sql, error);
  if (stmt == NULL)
    return NULL;
  sqlite3_bind_int (stmt, 1, d->limit ? (int) MIN (d->limit, G_MAXINT) : -1);
  if (d->verdict)
    _sight_store_bind_text (stmt, 2, d->verdict);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightRunRecord *r = run_from_row (core, stmt);

      r->n_steps = sqlite3_column_int (stmt, 13);
      r->n_steps_passed = (guint) sqlite3_column_double (stmt, 14);
      r->n_steps_failed = (guint) sqlite3_column_double (stmt, 15);
      r->n_steps_skipped = (guint) sqlite3_column_double (stmt, 16);
      r->model_calls = (guint) sqlite3_column_double (stmt, 17);
      r->actions = (guint) sqlite3_column_double (stmt, 18);
      g_ptr_array_add (runs, r);
    }
  if (rc != SQLITE_DONE)
    {
      g_propagate_error (error, _sight_store_db_error (core->db, "listing runs"));
      return NULL;
    }
  return g_steal_pointer (&runs);
}

static ListRunsData *
list_runs_data_new (guint       limit,
                    const char *verdict,
                    gboolean    unindexed)
{
  ListRunsData *d = g_new0 (ListRunsData, 1);

  d->limit = limit;
  d->verdict = g_strdup (verdict);
  d->unindexed = unindexed;
  return d;
}

GPtrArray *
sight_store_list_runs (SightStore  *self,
                       guint        limit,
                       const char  *verdict_filter,
                       GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  return _sight_store_run_sync (self, NULL, job_list_runs, list_runs_data_new (limit, verdict_filter, FALSE),
                                (GDestroyNotify) list_runs_data_free, error);
}

GPtrArray *
_sight_store_list_runs_unindexed (SightStore  *self,
                                  guint        limit,
                                  GError     **error)
{
  return _sight_store_run_sync (self, NULL, job_list_runs, list_runs_data_new (limit, NULL, TRUE),
                                (GDestroyNotify) list_runs_data_free, error);
}

void
sight_store_list_runs_async (SightStore          *self,
                             guint                limit,
                             const char          *verdict_filter,
                             GCancellable        *cancellable,
                             GAsyncReadyCallback  callback,
                             gpointer             user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));

  _sight_store_run_async (self, NULL, sight_store_list_runs_async, job_list_runs,
                          list_runs_data_new (limit, verdict_filter, FALSE),
                          (GDestroyNotify) list_runs_data_free, (GDestroyNotify) g_ptr_array_unref,
                          cancellable, callback, user_data);
}

GPtrArray *
sight_store_list_runs_finish (SightStore    *self,
                              GAsyncResult  *result,
                              GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* One stored model call as usage: its counts, whether the provider gave
 * them, its reported cost and Sightline's estimate. */
static SightUsage
model_call_usage (const SightModelCallRecord *m)
{
  SightUsage usage;

  sight_usage_init (&usage);
  usage.model_calls = 1;
  usage.input_tokens = (guint64) MAX (m->input_tokens, 0);
  usage.output_tokens = (guint64) MAX (m->output_tokens, 0);
  if (m->input_tokens < 0 || m->output_tokens < 0)
    usage.token_accounting = SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND;
  usage.has_cost = m->cost_micros >= 0;
  usage.cost_micro_usd = (guint64) MAX (m->cost_micros, 0);
  usage.has_estimated_cost = m->has_estimated_cost && m->estimated_cost_micros >= 0;
  usage.estimated_cost_micro_usd = (guint64) MAX (m->estimated_cost_micros, 0);
  return usage;
}

static gpointer
job_load_run (StoreCore  *core,
              gpointer    data,
              GError    **error)
{
  const char *run_id = data;
  g_autoptr(SightRunData) d = g_new0 (SightRunData, 1);
  g_autoptr(sqlite3_stmt) stmt = NULL;
  SightUsage steps_usage, calls_usage;
  gboolean steps_have_usage = FALSE;
  guint64 step_calls = 0, actions = 0;
  int rc;

  sight_usage_init (&steps_usage);
  sight_usage_init (&calls_usage);
  /* One read transaction, so the parts agree with each other. */
  if (!_sight_store_exec_sql (core->db, "BEGIN", error))
    return NULL;

  stmt
      = _sight_store_prepare (core->db, "SELECT " RUN_COLUMNS " FROM runs r WHERE r.id = ?", error);
  if (stmt == NULL)
    goto fail;
  _sight_store_bind_text (stmt, 1, run_id);
  if (sqlite3_step (stmt) != SQLITE_ROW)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "No run %s in the run database", run_id);
      goto fail;
    }
  d->run = run_from_row (core, stmt);
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->steps = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_step_record_free);
  stmt = _sight_store_prepare (
      core->db,
      "SELECT run_id, idx, kind, label, instruction, options, verdict, code,"
      "  explanation, usage, cache, budget, model_calls, actions, target_x, target_y,"
      "  target_width, target_height, started_at, finished_at"
      " FROM steps WHERE run_id = ? ORDER BY idx",
      error);
  if (stmt == NULL)
    goto fail;
  _sight_store_bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightStepRecord *s = g_new0 (SightStepRecord, 1);
      g_autofree char *verdict = NULL;

      s->run_id = _sight_store_col_text (stmt, 0);
      s->index = sqlite3_column_int (stmt, 1);
      s->kind = _sight_store_col_text (stmt, 2);
      s->label = _sight_store_col_text (stmt, 3);
      s->instruction = _sight_store_col_text (stmt, 4);
      s->options_json = _sight_store_col_text (stmt, 5);
      verdict = _sight_store_col_text (stmt, 6);
      s->verdict = _sight_store_verdict_parse (verdict);
      s->code = _sight_store_col_text (stmt, 7);
      s->explanation = _sight_store_col_text (stmt, 8);
      s->usage_json = _sight_store_col_text (stmt, 9);
      s->cache_json = _sight_store_col_text (stmt, 10);
      s->budget_json = _sight_store_col_text (stmt, 11);
      s->model_calls = sqlite3_column_int (stmt, 12);
      s->actions = sqlite3_column_int (stmt, 13);
      s->has_target = sqlite3_column_type (stmt, 14) != SQLITE_NULL;
      s->target_x = sqlite3_column_double (stmt, 14);
      s->target_y = sqlite3_column_double (stmt, 15);
      s->target_width = sqlite3_column_double (stmt, 16);
      s->target_height = sqlite3_column_double (stmt, 17);
      s->started_at = sqlite3_column_int64 (stmt, 18);
      s->finished_at = sqlite3_column_int64 (stmt, 19);

      d->run->n_steps++;
      if (s->verdict == SIGHT_RUN_VERDICT_PASS)
        d->run->n_steps_passed++;
      else if (s->verdict == SIGHT_RUN_VERDICT_FAIL || s->verdict == SIGHT_RUN_VERDICT_ERROR)
        d->run->n_steps_failed++;
      else if (s->verdict == SIGHT_RUN_VERDICT_SKIPPED)
        d->run->n_steps_skipped++;
      step_calls = sight_usage_saturating_add (step_calls, s->model_calls);
      actions = sight_usage_saturating_add (actions, s->actions);
      if (s->usage_json != NULL)
        {
          g_autoptr(JsonNode) node = json_from_string (s->usage_json, NULL);
          SightUsage usage;

          if (sight_usage_from_json (node, &usage))
            {
              sight_usage_add (&steps_usage, &usage);
              steps_have_usage = TRUE;
            }
        }
      g_ptr_array_add (d->steps, s);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->observations = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_observation_record_free);
  stmt = _sight_store_prepare (
      core->db,
      "SELECT id, run_id, step_idx, phase, url, title, tree, tree_text, screenshot,"
      "  screenshot_mime, width, height, scale, created_at"
      " FROM observations WHERE run_id = ? ORDER BY id",
      error);
  if (stmt == NULL)
    goto fail;
  _sight_store_bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightObservationRecord *o = g_new0 (SightObservationRecord, 1);
      g_autoptr(GBytes) tree = _sight_store_col_bytes (stmt, 6);
      g_autoptr(GBytes) text = _sight_store_col_bytes (stmt, 7);

      o->id = sqlite3_column_int64 (stmt, 0);
      o->run_id = _sight_store_col_text (stmt, 1);
      o->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      o->phase = _sight_store_col_text (stmt, 3);
      o->url = _sight_store_col_text (stmt, 4);
      o->title = _sight_store_col_text (stmt, 5);
      o->tree_json = _sight_store_decompress_text (tree);
      o->tree_text = _sight_store_decompress_text (text);
      o->screenshot = _sight_store_col_bytes (stmt, 8);
      o->screenshot_mime = _sight_store_col_text (stmt, 9);
      o->width = sqlite3_column_int (stmt, 10);
      o->height = sqlite3_column_int (stmt, 11);
      o->scale = sqlite3_column_double (stmt, 12);
      o->created_at = sqlite3_column_int64 (stmt, 13);
      g_ptr_array_add (d->observations, o);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->model_calls = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_model_call_record_free);
  stmt = _sight_store_prepare (
      core->db,
      "SELECT id, run_id, step_idx, provider, model, request, response, input_tokens,"
      "  output_tokens, cost_micros, latency_ms, request_id, created_at, estimated_cost_micros"
      " FROM model_calls WHERE run_id = ? ORDER BY id",
      error);
  if (stmt == NULL)
    goto fail;
  _sight_store_bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightModelCallRecord *m = g_new0 (SightModelCallRecord, 1);
      g_autoptr(GBytes) request = _sight_store_col_bytes (stmt, 5);
      g_autoptr(GBytes) response = _sight_store_col_bytes (stmt, 6);

      m->id = sqlite3_column_int64 (stmt, 0);
      m->run_id = _sight_store_col_text (stmt, 1);
      m->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      m->provider = _sight_store_col_text (stmt, 3);
      m->model = _sight_store_col_text (stmt, 4);
      m->request_json = _sight_store_decompress_text (request);
      m->response_json = _sight_store_decompress_text (response);
      m->input_tokens = sqlite3_column_type (stmt, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 7);
      m->output_tokens = sqlite3_column_type (stmt, 8) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 8);
      m->cost_micros = sqlite3_column_type (stmt, 9) == SQLITE_NULL ? -1 : sqlite3_column_int64 (stmt, 9);
      m->latency_ms = sqlite3_column_int64 (stmt, 10);
      m->request_id = _sight_store_col_text (stmt, 11);
      m->created_at = sqlite3_column_int64 (stmt, 12);
      m->has_estimated_cost = sqlite3_column_type (stmt, 13) != SQLITE_NULL;
      m->estimated_cost_micros = sqlite3_column_int64 (stmt, 13);
      {
        SightUsage usage = model_call_usage (m);

        sight_usage_add (&calls_usage, &usage);
      }
      g_ptr_array_add (d->model_calls, m);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);
  d->run->model_calls = (guint) MIN (MAX (step_calls, d->model_calls->len), G_MAXUINT);
  d->run->actions = (guint) MIN (actions, G_MAXUINT);
  d->run->usage = steps_have_usage ? steps_usage : calls_usage;

  d->logs = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_log_record_free);
  stmt = _sight_store_prepare (
      core->db,
      "SELECT id, run_id, step_idx, kind, level, text, url, status, created_at"
      " FROM logs WHERE run_id = ? ORDER BY id",
      error);
  if (stmt == NULL)
    goto fail;
  _sight_store_bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightLogRecord *l = g_new0 (SightLogRecord, 1);

      l->id = sqlite3_column_int64 (stmt, 0);
      l->run_id = _sight_store_col_text (stmt, 1);
      l->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      l->kind = _sight_store_col_text (stmt, 3);
      l->level = _sight_store_col_text (stmt, 4);
      l->text = _sight_store_col_text (stmt, 5);
      l->url = _sight_store_col_text (stmt, 6);
      l->status = sqlite3_column_int (stmt, 7);
      l->created_at = sqlite3_column_int64 (stmt, 8);
      g_ptr_array_add (d->logs, l);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  d->artifacts = g_ptr_array_new_with_free_func ((GDestroyNotify) sight_artifact_record_free);
  stmt = _sight_store_prepare (core->db,
                               "SELECT id, run_id, step_idx, name, mime, data, created_at"
                               " FROM artifacts WHERE run_id = ? ORDER BY id", error);
  if (stmt == NULL)
    goto fail;
  _sight_store_bind_text (stmt, 1, run_id);
  while ((rc = sqlite3_step (stmt)) == SQLITE_ROW)
    {
      SightArtifactRecord *a = g_new0 (SightArtifactRecord, 1);

      a->id = sqlite3_column_int64 (stmt, 0);
      a->run_id = _sight_store_col_text (stmt, 1);
      a->step_index = sqlite3_column_type (stmt, 2) == SQLITE_NULL ? -1 : sqlite3_column_int (stmt, 2);
      a->name = _sight_store_col_text (stmt, 3);
      a->mime = _sight_store_col_text (stmt, 4);
      a->data = _sight_store_col_bytes (stmt, 5);
      a->created_at = sqlite3_column_int64 (stmt, 6);
      a->path = _sight_store_artifact_file (core, a->run_id, a->name);
      g_ptr_array_add (d->artifacts, a);
    }
  if (rc != SQLITE_DONE)
    goto fail_db;
  g_clear_pointer (&stmt, sqlite3_finalize);

  sqlite3_exec (core->db, "COMMIT", NULL, NULL, NULL);
  return g_steal_pointer (&d);

fail_db:
  g_propagate_error (error, _sight_store_db_error (core->db, "reading a run"));
fail:
  g_clear_pointer (&stmt, sqlite3_finalize);
  sqlite3_exec (core->db, "ROLLBACK", NULL, NULL, NULL);
  return NULL;
}

SightRunData *
sight_store_load_run (SightStore  *self,
                      const char  *run_id,
                      GError     **error)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);
  g_return_val_if_fail (run_id != NULL, NULL);

  return _sight_store_run_sync (self, NULL, job_load_run, g_strdup (run_id), g_free, error);
}

void
sight_store_load_run_async (SightStore          *self,
                            const char          *run_id,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (run_id != NULL);

  _sight_store_run_async (self, NULL, sight_store_load_run_async, job_load_run, g_strdup (run_id),
                          g_free, (GDestroyNotify)sight_run_data_free, cancellable, callback,
                          user_data);
}

SightRunData *
sight_store_load_run_finish (SightStore    *self,
                             GAsyncResult  *result,
                             GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

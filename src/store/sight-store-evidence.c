/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-store"

#include "config.h"

#include "sight-store.h"

#include <errno.h>
#include <string.h>

#include "sight-error.h"
#include "sight-store-private.h"

/* ------------------------------------------------------------ observations */

/* An observation's values as they are stored: redacted, and the tree
 * compressed before the write transaction begins. */
typedef struct {
  const SightObservationRecord *o;
  GBytes                       *tree_z;
  GBytes                       *text_z;
  GBytes                       *shot;
} StoredObservation;

static void
bind_observation (StoreCore     *core,
                  sqlite3_stmt  *stmt,
                  gconstpointer  record)
{
  const StoredObservation *so = record;
  const SightObservationRecord *o = so->o;

  _sight_store_bind_text (stmt, 1, o->run_id);
  _sight_store_bind_step_index (stmt, 2, o->step_index);
  _sight_store_bind_text (stmt, 3, o->phase ? o->phase : "after");
  _sight_store_bind_text_take (stmt, 4, _sight_store_redact (core, o->url));
  _sight_store_bind_text_take (stmt, 5, _sight_store_redact (core, o->title));
  _sight_store_bind_bytes (stmt, 6, so->tree_z);
  _sight_store_bind_bytes (stmt, 7, so->text_z);
  _sight_store_bind_bytes (stmt, 8, so->shot);
  _sight_store_bind_text (stmt, 9, o->screenshot_mime);
  sqlite3_bind_int (stmt, 10, o->width);
  sqlite3_bind_int (stmt, 11, o->height);
  sqlite3_bind_double (stmt, 12, o->scale > 0 ? o->scale : 1.0);
  sqlite3_bind_int64 (stmt, 13, o->created_at ? o->created_at : g_get_real_time ());
}

static gpointer
job_add_observation (StoreCore  *core,
                     gpointer    data,
                     GError    **error)
{
  SightObservationRecord *o = data;
  g_autoptr(GBytes) shot = NULL;
  g_autofree char *tree = NULL;
  g_autofree char *text = NULL;
  g_autoptr(GBytes) tree_z = NULL;
  g_autoptr(GBytes) text_z = NULL;
  StoredObservation so;

  if (o->screenshot)
    {
      shot = _sight_store_redact_blob (core, o->screenshot, o->screenshot_mime, error);
      if (shot == NULL)
        return NULL;
    }
  tree = _sight_store_redact (core, o->tree_json);
  text = _sight_store_redact (core, o->tree_text);
  tree_z = _sight_store_compress_text (tree);
  text_z = _sight_store_compress_text (text);

  so = (StoredObservation) { .o = o, .tree_z = tree_z, .text_z = text_z, .shot = shot };
  return _sight_store_insert (core,
                              "INSERT INTO observations (run_id, step_idx, phase, url, title, tree,"
                              "  tree_text, screenshot, screenshot_mime, width, height, scale,"
                              "  created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              bind_observation, &so, error)
             ? GINT_TO_POINTER (TRUE)
             : NULL;
}

void
sight_store_add_observation_async (SightStore                   *self,
                                   const SightObservationRecord *observation,
                                   GCancellable                 *cancellable,
                                   GAsyncReadyCallback           callback,
                                   gpointer                      user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (observation != NULL && observation->run_id != NULL);

  _sight_store_run_async (self, observation->run_id, sight_store_add_observation_async, job_add_observation,
                          _sight_store_observation_copy (observation),
                          (GDestroyNotify) sight_observation_record_free, NULL,
                          cancellable, callback, user_data);
}

/* ------------------------------------------------------------- model calls */

void
_sight_store_bind_int_or_null (sqlite3_stmt *stmt,
                               int           i,
                               gint64        v)
{
  if (v >= 0)
    sqlite3_bind_int64 (stmt, i, v);
  else
    sqlite3_bind_null (stmt, i);
}

/* A model call's values as they are stored: redacted and compressed before
 * the write transaction begins. */
typedef struct {
  const SightModelCallRecord *m;
  GBytes                     *request_z;
  GBytes                     *response_z;
} StoredModelCall;

static void
bind_model_call (StoreCore     *core,
                 sqlite3_stmt  *stmt,
                 gconstpointer  record)
{
  const StoredModelCall *sm = record;
  const SightModelCallRecord *m = sm->m;

  _sight_store_bind_text (stmt, 1, m->run_id);
  _sight_store_bind_step_index (stmt, 2, m->step_index);
  _sight_store_bind_text (stmt, 3, m->provider);
  _sight_store_bind_text (stmt, 4, m->model);
  _sight_store_bind_bytes (stmt, 5, sm->request_z);
  _sight_store_bind_bytes (stmt, 6, sm->response_z);
  _sight_store_bind_int_or_null (stmt, 7, m->input_tokens);
  _sight_store_bind_int_or_null (stmt, 8, m->output_tokens);
  _sight_store_bind_int_or_null (stmt, 9, m->cost_micros);
  sqlite3_bind_int64 (stmt, 10, m->latency_ms);
  _sight_store_bind_text_take (stmt, 11, _sight_store_redact (core, m->request_id));
  sqlite3_bind_int64 (stmt, 12, m->created_at ? m->created_at : g_get_real_time ());
  _sight_store_bind_int_or_null (stmt, 13, m->has_estimated_cost ? m->estimated_cost_micros : -1);
}

static gpointer
job_add_model_call (StoreCore  *core,
                    gpointer    data,
                    GError    **error)
{
  SightModelCallRecord *m = data;
  g_autofree char *request = _sight_store_redact (core, m->request_json);
  g_autofree char *response = _sight_store_redact (core, m->response_json);
  g_autoptr(GBytes) request_z = _sight_store_compress_text (request);
  g_autoptr(GBytes) response_z = _sight_store_compress_text (response);
  StoredModelCall sm = { .m = m, .request_z = request_z, .response_z = response_z };

  return _sight_store_insert (core,
                              "INSERT INTO model_calls (run_id, step_idx, provider, model, request,"
                              "  response, input_tokens, output_tokens, cost_micros, latency_ms,"
                              "  request_id, created_at, estimated_cost_micros)"
                              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              bind_model_call, &sm, error)
             ? GINT_TO_POINTER (TRUE)
             : NULL;
}

void
sight_store_add_model_call_async (SightStore                 *self,
                                  const SightModelCallRecord *call,
                                  GCancellable               *cancellable,
                                  GAsyncReadyCallback         callback,
                                  gpointer                    user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (call != NULL && call->run_id != NULL);

  _sight_store_run_async (self, call->run_id, sight_store_add_model_call_async, job_add_model_call,
                          _sight_store_model_call_copy (call),
                          (GDestroyNotify)sight_model_call_record_free, NULL, cancellable, callback,
                          user_data);
}

/* -------------------------------------------------------------------- logs */

static void
bind_log (StoreCore     *core,
          sqlite3_stmt  *stmt,
          gconstpointer  record)
{
  const SightLogRecord *l = record;

  _sight_store_bind_text (stmt, 1, l->run_id);
  _sight_store_bind_step_index (stmt, 2, l->step_index);
  _sight_store_bind_text (stmt, 3, l->kind ? l->kind : "console");
  _sight_store_bind_text (stmt, 4, l->level);
  _sight_store_bind_text_take (stmt, 5, _sight_store_redact (core, l->text));
  _sight_store_bind_text_take (stmt, 6, _sight_store_redact (core, l->url));
  sqlite3_bind_int (stmt, 7, l->status);
  sqlite3_bind_int64 (stmt, 8, l->created_at ? l->created_at : g_get_real_time ());
}

static gpointer
job_add_log (StoreCore  *core,
             gpointer    data,
             GError    **error)
{
  return _sight_store_insert (core,
                              "INSERT INTO logs (run_id, step_idx, kind, level, text, url, status,"
                              "  created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                              bind_log, data, error)
             ? GINT_TO_POINTER (TRUE)
             : NULL;
}

void
sight_store_add_log_async (SightStore           *self,
                           const SightLogRecord *log,
                           GCancellable         *cancellable,
                           GAsyncReadyCallback   callback,
                           gpointer              user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (log != NULL && log->run_id != NULL);

  _sight_store_run_async (self, log->run_id, sight_store_add_log_async, job_add_log,
                          _sight_store_log_copy (log), (GDestroyNotify)sight_log_record_free, NULL,
                          cancellable, callback, user_data);
}

/* --------------------------------------------------------------- artifacts */

static gboolean
plain_file_name (const char *name)
{
  return name != NULL && *name != '\0' && strchr (name, '/') == NULL &&
         strchr (name, '\\') == NULL && !g_str_equal (name, ".") && !g_str_equal (name, "..");
}

char *
_sight_store_artifact_file (StoreCore  *core,
                            const char *run_id,
                            const char *name)
{
  g_autofree char *dir = NULL;

  if (!plain_file_name (run_id) || !plain_file_name (name))
    return NULL;
  dir = g_path_get_dirname (core->path);
  return g_build_filename (dir, "artifacts", run_id, name, NULL);
}

char *
sight_store_artifact_path (SightStore *self,
                           const char *run_id,
                           const char *name)
{
  g_return_val_if_fail (SIGHT_IS_STORE (self), NULL);

  return _sight_store_artifact_file (self->core, run_id, name);
}

/* The artifact's file, once its row is in: a person opens it by the path the
 * failure carries. */
static gboolean
write_artifact_file (const char  *path,
                     GBytes      *bytes,
                     GError     **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) local_error = NULL;
  gsize size = 0;
  const char *data = bytes ? g_bytes_get_data (bytes, &size) : "";

  if (g_mkdir_with_parents (dir, 0700) != 0 ||
      !g_file_set_contents_full (path, data, size, G_FILE_SET_CONTENTS_CONSISTENT, 0600,
                                 &local_error))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "Could not write the artifact %s: %s", path,
                   local_error ? local_error->message : g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

static gpointer
job_add_artifact (StoreCore  *core,
                  gpointer    data,
                  GError    **error)
{
  SightArtifactRecord *a = data;
  g_autoptr(sqlite3_stmt) stmt = NULL;
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *path = _sight_store_artifact_file (core, a->run_id, a->name);
  gboolean ok;

  if (path == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "An artifact needs a plain file name");
      return NULL;
    }
  /* Without bytes, the run wrote the file there itself (a recording). */
  if (a->data == NULL && !g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE,
                   "The artifact %s is not there", path);
      return NULL;
    }
  if (a->data)
    {
      bytes = _sight_store_redact_blob (core, a->data, a->mime, error);
      if (bytes == NULL)
        return NULL;
    }
  if (!_sight_store_begin_write (core->db, error))
    return NULL;
  stmt = _sight_store_prepare (
      core->db,
      "INSERT INTO artifacts (run_id, step_idx, name, mime, data, created_at)"
      " VALUES (?, ?, ?, ?, ?, ?)",
      error);
  ok = stmt != NULL;
  if (ok)
    {
      _sight_store_bind_text (stmt, 1, a->run_id);
      _sight_store_bind_step_index (stmt, 2, a->step_index);
      _sight_store_bind_text (stmt, 3, a->name);
      _sight_store_bind_text (stmt, 4, a->mime);
      _sight_store_bind_bytes (stmt, 5, bytes);
      sqlite3_bind_int64 (stmt, 6, a->created_at ? a->created_at : g_get_real_time ());
      ok = _sight_store_step_done (core->db, stmt, error);
    }
  if (!_sight_store_commit_or_rollback (core->db, ok, error) ||
      (bytes != NULL && !write_artifact_file (path, bytes, error)))
    return NULL;
  return GINT_TO_POINTER (TRUE);
}

void
sight_store_add_artifact_async (SightStore                *self,
                                const SightArtifactRecord *artifact,
                                GCancellable              *cancellable,
                                GAsyncReadyCallback        callback,
                                gpointer                   user_data)
{
  g_return_if_fail (SIGHT_IS_STORE (self));
  g_return_if_fail (artifact != NULL && artifact->run_id != NULL);

  _sight_store_run_async (self, artifact->run_id, sight_store_add_artifact_async, job_add_artifact,
                          _sight_store_artifact_copy (artifact),
                          (GDestroyNotify)sight_artifact_record_free, NULL, cancellable, callback,
                          user_data);
}

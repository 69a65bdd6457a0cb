/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "test-store"
#define _GNU_SOURCE   /* sched_setaffinity () */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test-files.h"
#include "sight-error.h"
#include "sight-report.h"
#include "sight-store.h"
#include "sight-store-private.h"
#include "sight-store-sync.h"

#define CANARY "canary-S3cr3t-7f1e9a"

typedef struct {
  char *dir;
  char *path;
} Fixture;

static void
fixture_setup (Fixture       *f,
               gconstpointer  data)
{
  f->dir = g_dir_make_tmp ("sight-store-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->path = g_build_filename (f->dir, "nested", "sightline.db", NULL);
}

static void
fixture_teardown (Fixture       *f,
                  gconstpointer  data)
{
  test_remove_tree (f->dir);
  g_free (f->dir);
  g_free (f->path);
}

static int
raw_user_version (const char *path)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  int v = -1;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &stmt, NULL), ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW)
    v = sqlite3_column_int (stmt, 0);
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return v;
}

static char *
raw_text (const char *path,
          const char *sql)
{
  sqlite3 *db = NULL;
  sqlite3_stmt *stmt = NULL;
  char *v = NULL;

  g_assert_cmpint (sqlite3_open_v2 (path, &db, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_prepare_v2 (db, sql, -1, &stmt, NULL), ==, SQLITE_OK);
  if (sqlite3_step (stmt) == SQLITE_ROW && sqlite3_column_text (stmt, 0))
    v = g_strdup ((const char *) sqlite3_column_text (stmt, 0));
  sqlite3_finalize (stmt);
  sqlite3_close (db);
  return v;
}

static void
test_migrate_empty (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *mode = NULL;
  g_autofree char *dir = g_path_get_dirname (f->path);

  /* An empty file is an empty database, not a damaged one. */
  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (f->path, "", 0, NULL));

  store = sight_store_new (f->path, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (sight_store_get_path (store), ==, f->path);
  g_clear_object (&store);

  g_assert_cmpint (raw_user_version (f->path), ==, SIGHT_STORE_SCHEMA_VERSION);
  mode = raw_text (f->path, "PRAGMA journal_mode");
  g_assert_cmpstr (mode, ==, "wal");
  for (guint i = 0; i < 7; i++)
    {
      static const char * const tables[] = { "sessions", "runs", "steps", "observations",
                                             "model_calls", "logs", "artifacts" };
      g_autofree char *sql = g_strdup_printf ("SELECT name FROM sqlite_master WHERE type = 'table'"
                                              " AND name = '%s'", tables[i]);
      g_autofree char *name = raw_text (f->path, sql);
      g_assert_cmpstr (name, ==, tables[i]);
    }

  /* Opening again is a no-op migration. */
  store = sight_store_new (f->path, &error);
  g_assert_no_error (error);
  g_assert_true (sight_store_check_integrity (store, &error));
}

static void
test_migrate_previous (Fixture       *f,
                       gconstpointer  data)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(SightRunData) run = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (f->path);
  g_autofree char *index = NULL;
  SightStepRecord finish = { 0 };
  sqlite3 *db = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_true (_sight_store_migrate (db, 1, &error));
  g_assert_no_error (error);
  g_assert_cmpint (sqlite3_exec (db,
                                 "INSERT INTO runs (id, kind, name, verdict, started_at, finished_at)"
                                 " VALUES ('run_old', 'test', 'Old run', 'pass', 1000000, 3000000);"
                                 "INSERT INTO steps (run_id, idx, kind, instruction, verdict)"
                                 " VALUES ('run_old', 0, 'act', 'click Save', 'pass');",
                                 NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);
  g_assert_cmpint (raw_user_version (f->path), ==, 1);

  store = sight_store_new (f->path, &error);
  g_assert_no_error (error);
  run = sight_store_load_run (store, "run_old", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (run->run->name, ==, "Old run");
  g_assert_cmpint (run->run->verdict, ==, SIGHT_RUN_VERDICT_PASS);
  g_assert_cmpuint (run->steps->len, ==, 1);
  g_assert_false (((SightStepRecord *) run->steps->pdata[0])->has_target);

  /* The columns of migration 2 are usable. */
  finish.run_id = (char *) "run_old";
  finish.index = 0;
  finish.verdict = SIGHT_RUN_VERDICT_PASS;
  finish.budget_json = (char *) "{\"maxModelCalls\":25}";
  finish.has_target = TRUE;
  finish.target_x = 10;
  finish.target_width = 30;
  g_assert_true (sight_store_finish_step (store, &finish, &error));
  g_assert_no_error (error);
  g_clear_pointer (&run, sight_run_data_free);
  run = sight_store_load_run (store, "run_old", &error);
  g_assert_true (((SightStepRecord *) run->steps->pdata[0])->has_target);
  g_assert_cmpfloat (((SightStepRecord *) run->steps->pdata[0])->target_width, ==, 30);
  g_clear_object (&store);

  g_assert_cmpint (raw_user_version (f->path), ==, SIGHT_STORE_SCHEMA_VERSION);
  index = raw_text (f->path, "SELECT name FROM sqlite_master WHERE name = 'runs_verdict_started'");
  g_assert_cmpstr (index, ==, "runs_verdict_started");
}

static void
test_newer_schema_refused (Fixture       *f,
                           gconstpointer  data)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (f->path);
  sqlite3 *db = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
  g_assert_cmpint (sqlite3_exec (db, "PRAGMA user_version = 99", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close (db);

  store = sight_store_new (f->path, &error);
  g_assert_null (store);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  /* Not damaged: left where it was. */
  g_assert_true (g_file_test (f->path, G_FILE_TEST_EXISTS));
}

static char *
write_sample_run (SightStore *store,
                  gint64      t0)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) shot = g_bytes_new_static ("\xff\xd8\xff\xe0 fake jpeg", 14);
  const char *notes[] = { "first note", NULL };
  SightRunRecord run = { .kind = (char *) "smoke", .name = (char *) "Sign in",
                         .url = (char *) "http://127.0.0.1:8765/login", .started_at = t0 };
  g_autofree char *id = sight_store_open_run (store, &run, &error);

  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (id, "run_"));

  for (guint i = 0; i < 3; i++)
    {
      SightStepRecord step = { .run_id = id, .index = i, .kind = (char *) "act",
                               .instruction = (char *) "click Sign in",
                               .options_json = (char *) "{\"timeout\":1000}",
                               .started_at = t0 + i * 1000000 };
      SightObservationRecord obs = { .run_id = id, .step_index = i, .phase = (char *) "before",
                                     .url = (char *) "http://127.0.0.1:8765/login",
                                     .title = (char *) "Login",
                                     .tree_json = (char *) "{\"role\":\"document\",\"children\":[]}",
                                     .tree_text = (char *) "document \"Login\"\n  button \"Sign in\" [e3]",
                                     .screenshot = shot, .screenshot_mime = (char *) "image/jpeg",
                                     .width = 800, .height = 600, .scale = 1.0 };
      SightModelCallRecord call = { .run_id = id, .step_index = i, .provider = (char *) "openai",
                                    .model = (char *) "m", .request_json = (char *) "{\"q\":1}",
                                    .response_json = (char *) "{\"a\":2}", .input_tokens = 100,
                                    .output_tokens = 10, .cost_micros = 50, .latency_ms = 300,
                                    .request_id = (char *) "req_1" };

      g_assert_true (sight_store_add_step (store, &step, &error));
      g_assert_no_error (error);
      g_assert_true (sight_store_add_observation (store, &obs, &error));
      g_assert_true (sight_store_add_model_call (store, &call, &error));
      step.verdict = i == 2 ? SIGHT_RUN_VERDICT_FAIL : SIGHT_RUN_VERDICT_PASS;
      step.code = i == 2 ? (char *) "ASSERTION_FAILED" : NULL;
      step.explanation = i == 2 ? (char *) "Expected text \"Welcome\" is not on the page" : NULL;
      step.model_calls = 1;
      step.actions = 2;
      step.has_target = TRUE;
      step.target_x = 5;
      step.target_y = 6;
      step.target_width = 70;
      step.target_height = 20;
      step.finished_at = t0 + i * 1000000 + 500000;
      g_assert_true (sight_store_finish_step (store, &step, &error));
      g_assert_no_error (error);
    }
  {
    SightLogRecord log = { .run_id = id, .step_index = 1, .kind = (char *) "console",
                           .level = (char *) "error", .text = (char *) "TypeError: x is undefined",
                           .url = (char *) "http://127.0.0.1:8765/app.js" };
    SightLogRecord failed = { .run_id = id, .step_index = -1, .kind = (char *) "request_failed",
                              .url = (char *) "http://127.0.0.1:8765/missing.png", .status = 404 };
    SightArtifactRecord art = { .run_id = id, .step_index = -1, .name = (char *) "trace.json",
                                .mime = (char *) "application/json",
                                .data = g_bytes_new_static ("{}", 2) };

    g_assert_true (sight_store_add_log (store, &log, &error));
    g_assert_true (sight_store_add_log (store, &failed, &error));
    g_assert_true (sight_store_add_artifact (store, &art, &error));
    g_bytes_unref (art.data);
  }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_FAIL;
  run.final_url = (char *) "http://127.0.0.1:8765/dashboard";
  run.notes = (char **) notes;
  run.finished_at = t0 + 7000000;
  g_assert_true (sight_store_finish_run (store, &run, &error));
  g_assert_no_error (error);
  return g_steal_pointer (&id);
}

static void
test_roundtrip (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SightStore) store = sight_store_new (f->path, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) d = NULL;
  g_autoptr(GPtrArray) runs = NULL;
  g_autofree char *id = NULL;
  g_autofree char *older = NULL;
  SightStepRecord *s;
  SightObservationRecord *o;

  g_assert_nonnull (store);
  older = write_sample_run (store, 1000000000);
  id = write_sample_run (store, 2000000000);

  d = sight_store_load_run (store, id, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d->run->id, ==, id);
  g_assert_cmpstr (d->run->kind, ==, "smoke");
  g_assert_cmpint (d->run->verdict, ==, SIGHT_RUN_VERDICT_FAIL);
  g_assert_cmpstr (d->run->final_url, ==, "http://127.0.0.1:8765/dashboard");
  g_assert_cmpstr (d->run->notes[0], ==, "first note");
  g_assert_null (d->run->notes[1]);
  g_assert_cmpuint (d->run->n_steps, ==, 3);
  g_assert_cmpuint (d->run->n_steps_passed, ==, 2);
  g_assert_cmpuint (d->run->n_steps_failed, ==, 1);
  g_assert_cmpuint (d->run->model_calls, ==, 3);
  g_assert_cmpuint (d->run->actions, ==, 6);
  /* steps with no usage of their own: the model calls' */
  g_assert_cmpuint (d->run->usage.input_tokens, ==, 300);
  g_assert_cmpuint (d->run->usage.output_tokens, ==, 30);
  g_assert_true (d->run->usage.has_cost);
  g_assert_cmpuint (d->run->usage.cost_micro_usd, ==, 150);
  g_assert_false (d->run->usage.has_estimated_cost);
  s = d->steps->pdata[2];
  g_assert_cmpuint (s->index, ==, 2);
  g_assert_cmpstr (s->code, ==, "ASSERTION_FAILED");
  g_assert_cmpstr (s->label, ==, "act");
  g_assert_cmpstr (s->options_json, ==, "{\"timeout\":1000}");
  g_assert_true (s->has_target);
  g_assert_cmpfloat (s->target_height, ==, 20);
  g_assert_cmpuint (d->observations->len, ==, 3);
  o = d->observations->pdata[1];
  g_assert_cmpint (o->step_index, ==, 1);
  g_assert_cmpstr (o->tree_text, ==, "document \"Login\"\n  button \"Sign in\" [e3]");
  g_assert_cmpstr (o->tree_json, ==, "{\"role\":\"document\",\"children\":[]}");
  g_assert_cmpuint (g_bytes_get_size (o->screenshot), ==, 14);
  g_assert_cmpuint (d->model_calls->len, ==, 3);
  g_assert_cmpstr (((SightModelCallRecord *) d->model_calls->pdata[0])->response_json, ==, "{\"a\":2}");
  g_assert_cmpuint (d->logs->len, ==, 2);
  g_assert_cmpuint (((SightLogRecord *) d->logs->pdata[1])->status, ==, 404);
  g_assert_cmpint (((SightLogRecord *) d->logs->pdata[1])->step_index, ==, -1);
  g_assert_cmpuint (d->artifacts->len, ==, 1);

  runs = sight_store_list_runs (store, 10, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (runs->len, ==, 2);
  g_assert_cmpstr (((SightRunRecord *) runs->pdata[0])->id, ==, id);
  g_assert_cmpstr (((SightRunRecord *) runs->pdata[1])->id, ==, older);
  g_assert_cmpuint (((SightRunRecord *) runs->pdata[0])->n_steps_passed, ==, 2);
  g_clear_pointer (&runs, g_ptr_array_unref);

  runs = sight_store_list_runs (store, 1, NULL, &error);
  g_assert_cmpuint (runs->len, ==, 1);
  g_clear_pointer (&runs, g_ptr_array_unref);
  runs = sight_store_list_runs (store, 10, "pass", &error);
  g_assert_cmpuint (runs->len, ==, 0);
  g_clear_pointer (&runs, g_ptr_array_unref);
  runs = sight_store_list_runs (store, 10, "fail", &error);
  g_assert_cmpuint (runs->len, ==, 2);

  g_clear_pointer (&d, sight_run_data_free);
  d = sight_store_load_run (store, "run_nope", &error);
  g_assert_null (d);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT);
}

typedef struct {
  GMainLoop *loop;
  guint      pending;
  GPtrArray *runs;
  SightRunData *data;
} AsyncState;

static void
write_done_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  AsyncState *state = user_data;
  g_autoptr(GError) error = NULL;

  g_assert_true (sight_store_write_finish (SIGHT_STORE (source), result, &error));
  g_assert_no_error (error);
  if (--state->pending == 0)
    g_main_loop_quit (state->loop);
}

static void
list_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  AsyncState *state = user_data;
  g_autoptr(GError) error = NULL;

  state->runs = sight_store_list_runs_finish (SIGHT_STORE (source), result, &error);
  g_assert_no_error (error);
  g_main_loop_quit (state->loop);
}

static void
load_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  AsyncState *state = user_data;
  g_autoptr(GError) error = NULL;

  state->data = sight_store_load_run_finish (SIGHT_STORE (source), result, &error);
  g_assert_no_error (error);
  g_main_loop_quit (state->loop);
}

static void
open_done_cb (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  SightStore **out = user_data;
  g_autoptr(GError) error = NULL;

  *out = sight_store_new_finish (result, &error);
  g_assert_no_error (error);
}

static void
test_async (Fixture       *f,
            gconstpointer  data)
{
  g_autoptr(SightStore) store = NULL;
  AsyncState state = { g_main_loop_new (NULL, FALSE), 0, NULL, NULL };
  SightRunRecord run = { .kind = (char *) "task", .name = (char *) "async" };
  g_autofree char *id = NULL;
  guint main_thread_calls = 0;

  sight_store_new_async (f->path, NULL, open_done_cb, &store);
  while (store == NULL && main_thread_calls++ < 1000)
    g_main_context_iteration (NULL, TRUE);
  g_assert_nonnull (store);

  /* Fire-and-forget in order: the step is written after its run. */
  id = sight_store_open_run_async (store, &run, NULL, write_done_cb, &state);
  state.pending++;
  for (guint i = 0; i < 4; i++)
    {
      SightStepRecord step = { .run_id = id, .index = i, .kind = (char *) "assert" };
      sight_store_add_step_async (store, &step, NULL, write_done_cb, &state);
      state.pending++;
      step.verdict = SIGHT_RUN_VERDICT_PASS;
      sight_store_finish_step_async (store, &step, NULL, write_done_cb, &state);
      state.pending++;
    }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_PASS;
  sight_store_finish_run_async (store, &run, NULL, write_done_cb, &state);
  state.pending++;
  g_main_loop_run (state.loop);
  g_assert_cmpuint (state.pending, ==, 0);

  sight_store_list_runs_async (store, 5, NULL, NULL, list_done_cb, &state);
  g_main_loop_run (state.loop);
  g_assert_cmpuint (state.runs->len, ==, 1);
  g_assert_cmpuint (((SightRunRecord *) state.runs->pdata[0])->n_steps_passed, ==, 4);
  g_ptr_array_unref (state.runs);

  sight_store_load_run_async (store, id, NULL, load_done_cb, &state);
  g_main_loop_run (state.loop);
  g_assert_cmpint (state.data->run->verdict, ==, SIGHT_RUN_VERDICT_PASS);
  sight_run_data_free (state.data);
  g_main_loop_unref (state.loop);
}

static void
open_cancelled_cb (GObject      *source,
                   GAsyncResult *result,
                   gpointer      user_data)
{
  guint *pending = user_data;
  g_autoptr(GError) error = NULL;

  g_assert_false (sight_store_write_finish (SIGHT_STORE (source), result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  (*pending)--;
}

/* The id sight_store_open_run_async () returns is the run's however soon the
 * store's thread is done with the run: here at once (the open is cancelled),
 * with both threads on one CPU, so that the store's may run first. The id
 * was once read from the run after the store's thread had freed it (a
 * garbage run id, and "FOREIGN KEY constraint failed" for its steps). */
static void
test_open_run_id (Fixture       *f,
                  gconstpointer  data)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GCancellable) cancelled = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "soon done" };
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;
  cpu_set_t all, one;
  guint pending = 0;
  int cpu = 0;

  g_assert_cmpint (sched_getaffinity (0, sizeof all, &all), ==, 0);
  while (!CPU_ISSET (cpu, &all))
    cpu++;
  CPU_ZERO (&one);
  CPU_SET (cpu, &one);
  /* The store's thread, started now, shares this one's CPU. */
  g_assert_cmpint (sched_setaffinity (0, sizeof one, &one), ==, 0);
  store = sight_store_new (f->path, &error);
  g_assert_no_error (error);
  g_cancellable_cancel (cancelled);
  for (guint i = 0; i < 500; i++)
    {
      g_autofree char *want = g_strdup_printf ("run_%03u_of_a_soon_done_job", i);
      g_autofree char *id = NULL;

      run.id = want;
      id = sight_store_open_run_async (store, &run, cancelled, open_cancelled_cb, &pending);
      pending++;
      g_assert_cmpstr (id, ==, want);
    }
  while (pending > 0 && g_get_monotonic_time () < deadline)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpuint (pending, ==, 0);
  g_assert_cmpint (sched_setaffinity (0, sizeof all, &all), ==, 0);
}

static void
test_sessions (Fixture       *f,
               gconstpointer  data)
{
  g_autoptr(SightStore) store = sight_store_new (f->path, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sessions = NULL;
  SightSessionRecord rec = { .title = (char *) "demo" };
  g_autofree char *id = sight_store_open_session (store, &rec, &error);

  g_assert_no_error (error);
  g_assert_true (g_str_has_prefix (id, "sess_"));
  g_assert_true (sight_store_end_session (store, id, &error));
  sessions = sight_store_list_sessions (store, 10, &error);
  g_assert_cmpuint (sessions->len, ==, 1);
  g_assert_cmpstr (((SightSessionRecord *) sessions->pdata[0])->status, ==, "ended");
  g_assert_cmpint (((SightSessionRecord *) sessions->pdata[0])->ended_at, >, 0);
}

static char **
quarantined_files (const char *dir)
{
  g_autoptr(GDir) d = g_dir_open (dir, 0, NULL);
  g_autoptr(GStrvBuilder) b = g_strv_builder_new ();
  const char *name;

  while ((name = g_dir_read_name (d)))
    if (strstr (name, ".corrupt-") && !g_str_has_suffix (name, "-wal") &&
        !g_str_has_suffix (name, "-shm"))
      g_strv_builder_add (b, name);
  return g_strv_builder_end (b);
}

static void
test_corrupt_header (Fixture       *f,
                     gconstpointer  data)
{
  g_autoptr(SightStore) store = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (f->path);
  g_auto(GStrv) moved = NULL;
  g_autofree char *garbage = g_strnfill (8192, 'x');

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (f->path, garbage, -1, NULL));

  store = sight_store_new (f->path, &error);
  g_assert_null (store);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, f->path));
  g_assert_nonnull (strstr (error->message, ".corrupt-"));
  g_assert_false (g_file_test (f->path, G_FILE_TEST_EXISTS));
  moved = quarantined_files (dir);
  g_assert_cmpuint (g_strv_length (moved), ==, 1);
  {
    g_autofree char *moved_path = g_build_filename (dir, moved[0], NULL);
    g_autofree char *contents = NULL;
    g_assert_true (g_file_get_contents (moved_path, &contents, NULL, NULL));
    g_assert_cmpstr (contents, ==, garbage);
  }

  /* The next open starts afresh. */
  g_clear_error (&error);
  store = sight_store_new (f->path, &error);
  g_assert_no_error (error);
  g_assert_nonnull (store);
}

static void
test_corrupt_pages (Fixture       *f,
                    gconstpointer  data)
{
  g_autoptr(SightStore) store = sight_store_new (f->path, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_path_get_dirname (f->path);
  g_autofree char *contents = NULL;
  g_auto(GStrv) moved = NULL;
  gsize len;

  for (guint i = 0; i < 20; i++)
    g_free (write_sample_run (store, 1000000 + i));
  g_clear_object (&store);
  {
    /* Fold the WAL into the main file, then damage its pages. */
    sqlite3 *db = NULL;
    g_assert_cmpint (sqlite3_open (f->path, &db), ==, SQLITE_OK);
    g_assert_cmpint (sqlite3_exec (db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE",
                                   NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close (db);
  }
  g_assert_true (g_file_get_contents (f->path, &contents, &len, NULL));
  g_assert_cmpuint (len, >, 4096 * 4);
  for (gsize off = 4096 + 100; off < len; off += 4096)
    memset (contents + off, 0x5a, 64);
  g_assert_true (g_file_set_contents (f->path, contents, len, NULL));

  store = sight_store_new (f->path, &error);
  g_assert_null (store);
  g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_ENVIRONMENT_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "damaged"));
  moved = quarantined_files (dir);
  g_assert_cmpuint (g_strv_length (moved), ==, 1);
  g_assert_false (g_file_test (f->path, G_FILE_TEST_EXISTS));
}

static gboolean
file_contains (const char *path,
               const char *needle)
{
  g_autofree char *contents = NULL;
  gsize len;

  if (!g_file_get_contents (path, &contents, &len, NULL))
    return FALSE;
  for (gsize i = 0; i + strlen (needle) <= len; i++)
    if (memcmp (contents + i, needle, strlen (needle)) == 0)
      return TRUE;
  return FALSE;
}

static void
test_secrets (Fixture       *f,
              gconstpointer  data)
{
  g_autoptr(SightStore) store = sight_store_new (f->path, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SightRunData) d = NULL;
  g_autoptr(GBytes) binary = g_bytes_new_static ("\x89PNG..." CANARY "...", 11 + strlen (CANARY));
  g_autofree char *wal = g_strconcat (f->path, "-wal", NULL);
  g_autofree char *b64 = g_base64_encode ((const guchar *) CANARY, strlen (CANARY));
  g_autofree char *req = g_strdup_printf ("{\"messages\":[\"fill " CANARY "\"],\"img\":\"%s\"}", b64);
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "login as " CANARY,
                         .url = (char *) "http://127.0.0.1/?p=" CANARY };
  g_autofree char *id = NULL;

  sight_store_add_secret (store, CANARY);
  sight_store_add_secret (store, "abc");   /* too short: ignored */
  id = sight_store_open_run (store, &run, &error);
  g_assert_no_error (error);
  {
    SightStepRecord step = { .run_id = id, .index = 0, .kind = (char *) "act",
                             .instruction = (char *) "type " CANARY " into Password",
                             .options_json = (char *) "{\"params\":{\"p\":\"" CANARY "\"}}" };
    SightObservationRecord obs = { .run_id = id, .step_index = 0, .phase = (char *) "after",
                                   .tree_json = (char *) "{\"value\":\"" CANARY "\"}",
                                   .tree_text = (char *) "textbox \"Password\" = " CANARY };
    SightModelCallRecord call = { .run_id = id, .step_index = 0, .request_json = req,
                                  .response_json = (char *) "{\"say\":\"" CANARY "\"}",
                                  .input_tokens = -1, .output_tokens = -1, .cost_micros = -1 };
    SightLogRecord log = { .run_id = id, .step_index = 0, .kind = (char *) "console",
                           .text = (char *) "password is " CANARY,
                           .url = (char *) "http://127.0.0.1/?q=canary-S3cr3t-7f1e9a" };
    SightArtifactRecord text_art = { .run_id = id, .step_index = 0, .name = (char *) "note.txt",
                                     .mime = (char *) "text/plain",
                                     .data = g_bytes_new_static (CANARY, strlen (CANARY)) };
    SightArtifactRecord bin_art = { .run_id = id, .step_index = 0, .name = (char *) "shot.png",
                                    .mime = (char *) "image/png", .data = binary };
    SightObservationRecord bad_obs = obs;

    g_assert_true (sight_store_add_step (store, &step, &error));
    step.verdict = SIGHT_RUN_VERDICT_FAIL;
    step.explanation = (char *) "typed " CANARY;
    g_assert_true (sight_store_finish_step (store, &step, &error));
    g_assert_true (sight_store_add_observation (store, &obs, &error));
    g_assert_true (sight_store_add_model_call (store, &call, &error));
    g_assert_true (sight_store_add_log (store, &log, &error));
    g_assert_true (sight_store_add_artifact (store, &text_art, &error));
    g_assert_no_error (error);
    g_bytes_unref (text_art.data);

    /* Binary data holding the secret is refused, not stored. */
    g_assert_false (sight_store_add_artifact (store, &bin_art, &error));
    g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
    g_clear_error (&error);
    bad_obs.screenshot = binary;
    bad_obs.screenshot_mime = (char *) "image/png";
    g_assert_false (sight_store_add_observation (store, &bad_obs, &error));
    g_assert_error (error, SIGHT_ERROR, SIGHT_ERROR_POLICY_DENIED);
    g_clear_error (&error);
  }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_FAIL;
  run.explanation = (char *) CANARY;
  g_assert_true (sight_store_finish_run (store, &run, &error));

  d = sight_store_load_run (store, id, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (d->run->name, ==, "login as [secret]");
  g_assert_cmpstr (((SightStepRecord *) d->steps->pdata[0])->instruction, ==,
                   "type [secret] into Password");
  g_assert_nonnull (strstr (((SightModelCallRecord *) d->model_calls->pdata[0])->request_json,
                            "[secret]"));
  g_assert_null (strstr (((SightModelCallRecord *) d->model_calls->pdata[0])->request_json, b64));
  g_assert_cmpuint (d->artifacts->len, ==, 1);
  g_assert_cmpuint (d->observations->len, ==, 1);

  g_clear_object (&store);
  g_assert_true (g_file_test (f->path, G_FILE_TEST_EXISTS));
  g_assert_false (file_contains (f->path, CANARY));
  g_assert_false (file_contains (f->path, b64));
  g_assert_false (file_contains (wal, CANARY));
  /* the check can see the text it looks for */
  g_assert_true (file_contains (f->path, "login as [secret]") || file_contains (wal, "login as [secret]"));
}

/* A child writes runs in a loop and is killed with SIGKILL at a random point;
 * every time the database stays intact and each run is either complete or
 * marked interrupted. */
static void
test_kill (Fixture       *f,
           gconstpointer  data)
{
  g_autofree char *helper = g_test_build_filename (G_TEST_BUILT, "test-store-writer", NULL);
  guint iterations = g_test_slow () ? 500 : 200;
  guint interrupted = 0, complete = 0;
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr(GRand) rand = g_rand_new_with_seed (g_test_rand_int ());
  gint64 t_ready = 0;
  guint total_complete = 0;

  g_assert_true (g_file_test (helper, G_FILE_TEST_IS_EXECUTABLE));

  for (guint it = 0; it < iterations; it++)
    {
      const char *argv[] = { helper, f->path, NULL };
      g_autoptr(GError) error = NULL;
      g_autoptr(SightStore) store = NULL;
      g_autoptr(GPtrArray) runs = NULL;
      GPid pid;
      int out_fd, status;
      struct pollfd pfd;
      char c;
      gint64 t_it = g_get_monotonic_time ();

      g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, NULL,
                                               G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid,
                                               NULL, &out_fd, NULL, &error));
      g_assert_no_error (error);
      pfd.fd = out_fd;
      pfd.events = POLLIN;
      g_assert_cmpint (poll (&pfd, 1, 10000), ==, 1);
      g_assert_cmpint (read (out_fd, &c, 1), ==, 1);
      g_assert_cmpint (c, ==, 'R');
      t_ready += g_get_monotonic_time () - t_it;
      /* Every tenth time, let a run complete first, whatever the load. */
      if (it % 10 == 0)
        {
          g_assert_cmpint (poll (&pfd, 1, 20000), ==, 1);
          g_assert_cmpint (read (out_fd, &c, 1), ==, 1);
          g_assert_cmpint (c, ==, 'C');
        }
      g_usleep (1000 * g_rand_int_range (rand, 1, 31));
      g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
      g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
      g_assert_true (WIFSIGNALED (status));
      close (out_fd);
      g_spawn_close_pid (pid);

      store = sight_store_new (f->path, &error);
      g_assert_no_error (error);
      g_assert_true (sight_store_check_integrity (store, &error));
      g_assert_no_error (error);
      runs = sight_store_list_runs (store, 0, NULL, &error);
      g_assert_no_error (error);
      for (guint i = 0; i < runs->len; i++)
        {
          SightRunRecord *r = runs->pdata[i];

          if (r->verdict == SIGHT_RUN_VERDICT_INTERRUPTED)
            {
              g_assert_cmpuint (r->n_steps, <=, 5);
              g_assert_cmpint (r->finished_at, >=, r->started_at);
              if (i == 0)
                interrupted++;
            }
          else
            {
              g_autofree char *expected = g_strdup_printf ("steps=%u", r->n_steps);

              g_assert_cmpint (r->verdict, ==, SIGHT_RUN_VERDICT_PASS);
              g_assert_cmpstr (r->name, ==, expected);
              g_assert_cmpuint (r->n_steps_passed, ==, r->n_steps);
              g_assert_cmpint (r->finished_at, >=, r->started_at);
              if (i == 0)
                complete++;
              if (it == iterations - 1)
                total_complete++;
            }
        }
    }
  {
    /* No step is left running anywhere. */
    g_autofree char *running = raw_text (f->path, "SELECT COUNT (*) FROM steps WHERE verdict = 'running'");
    g_assert_cmpstr (running, ==, "0");
  }
  g_test_message ("%u kills in %.1f s (%.1f s waiting for the writer to start); "
                  "newest run interrupted %u times, complete %u times",
                  iterations, (g_get_monotonic_time () - t0) / 1e6, t_ready / 1e6,
                  interrupted, complete);
  /* Kills landed in the middle of runs, and between them. */
  g_assert_cmpuint (interrupted, >, 0);
  g_assert_cmpuint (total_complete, >, 0);
}

/* A run's usage is its steps' summed the way a step sums its calls: token
 * counts saturate at 2^53 - 1, tokenAccounting stays 'provider' only while
 * every call gave provider counts, a reported cost past 2^53 - 1 is omitted
 * and Sightline's estimate is kept apart from it. A run whose steps carry no
 * usage (a task) sums its model calls the same way. */
static void
test_run_usage (Fixture       *f,
                gconstpointer  data)
{
  g_autoptr(SightStore) store = sight_store_new (f->path, NULL);
  SightRunRecord run = { .kind = (char *) "test", .name = (char *) "Usage" };
  g_autoptr(GError) error = NULL;
  g_autofree char *id = sight_store_open_run (store, &run, &error);
  g_autofree char *calls_id = NULL;
  g_autoptr(SightRunData) d = NULL;
  g_autoptr(SightRunData) c = NULL;
  const char *usages[] = {
    "{\"modelCalls\": 2, \"inputTokens\": 9007199254740980, \"outputTokens\": 10,"
    " \"tokenAccounting\": \"provider\", \"costMicroUsd\": 9007199254740900}",
    "{\"modelCalls\": 1, \"inputTokens\": 50, \"outputTokens\": 5,"
    " \"tokenAccounting\": \"provider\", \"estimatedCostMicroUsd\": 700}",
    "{\"modelCalls\": 1, \"inputTokens\": 50, \"outputTokens\": 5,"
    " \"tokenAccounting\": \"adapter-upper-bound\", \"costMicroUsd\": 200,"
    " \"estimatedCostMicroUsd\": 300}",
  };
  g_autoptr(JsonNode) json = NULL;
  JsonObject *usage;

  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (usages); i++)
    {
      SightStepRecord step = { .run_id = id, .index = i, .kind = (char *) "assert",
                               .instruction = (char *) "it holds",
                               .verdict = SIGHT_RUN_VERDICT_PASS,
                               .usage_json = (char *) usages[i], .model_calls = 1 };

      g_assert_true (sight_store_add_step (store, &step, &error));
      g_assert_true (sight_store_finish_step (store, &step, &error));
      g_assert_no_error (error);
    }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_PASS;
  g_assert_true (sight_store_finish_run (store, &run, &error));
  d = sight_store_load_run (store, id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (d->run->usage.model_calls, ==, 4);
  g_assert_cmpuint (d->run->usage.input_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (d->run->usage.output_tokens, ==, 20);
  g_assert_cmpint (d->run->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  g_assert_false (d->run->usage.has_cost);
  g_assert_true (d->run->usage.cost_overflowed);
  g_assert_true (d->run->usage.has_estimated_cost);
  g_assert_cmpuint (d->run->usage.estimated_cost_micro_usd, ==, 1000);
  /* …and the report says so: the estimate apart, the overflowed cost left out */
  json = sight_report_to_json (d);
  usage = json_object_get_object_member (json_node_get_object (json), "usage");
  g_assert_cmpint (json_object_get_int_member (usage, "inputTokens"), ==,
                   G_GINT64_CONSTANT (9007199254740991));
  g_assert_cmpstr (json_object_get_string_member (usage, "tokenAccounting"), ==,
                   "adapter-upper-bound");
  g_assert_false (json_object_has_member (usage, "costMicros"));
  g_assert_cmpint (json_object_get_int_member (usage, "estimatedCostMicros"), ==, 1000);

  /* A task's run: its model calls, two of them far past 2^53 - 1 tokens. */
  run.id = NULL;
  calls_id = sight_store_open_run (store, &run, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < 3; i++)
    {
      SightModelCallRecord call = { .run_id = calls_id, .step_index = -1,
                                    .input_tokens = i < 2 ? G_GINT64_CONSTANT (9007199254740000) : 7,
                                    .output_tokens = i == 2 ? -1 : 3, .cost_micros = -1,
                                    .has_estimated_cost = TRUE, .estimated_cost_micros = 40 };

      g_assert_true (sight_store_add_model_call (store, &call, &error));
      g_assert_no_error (error);
    }
  run.id = calls_id;
  g_assert_true (sight_store_finish_run (store, &run, &error));
  c = sight_store_load_run (store, calls_id, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (c->run->usage.input_tokens, ==, SIGHT_USAGE_MAX_SAFE);
  g_assert_cmpuint (c->run->usage.output_tokens, ==, 6);
  g_assert_cmpint (c->run->usage.token_accounting, ==, SIGHT_TOKEN_ACCOUNTING_ADAPTER_UPPER_BOUND);
  g_assert_false (c->run->usage.has_cost);
  g_assert_cmpuint (c->run->usage.estimated_cost_micro_usd, ==, 120);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

#define ADD(name, func) \
  g_test_add ("/store/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("migrate-empty", test_migrate_empty);
  ADD ("migrate-previous", test_migrate_previous);
  ADD ("newer-schema-refused", test_newer_schema_refused);
  ADD ("roundtrip", test_roundtrip);
  ADD ("async", test_async);
  ADD ("open-run-id", test_open_run_id);
  ADD ("sessions", test_sessions);
  ADD ("corrupt-header", test_corrupt_header);
  ADD ("corrupt-pages", test_corrupt_pages);
  ADD ("secrets", test_secrets);
  ADD ("kill", test_kill);
  ADD ("run-usage", test_run_usage);
#undef ADD

  return g_test_run ();
}

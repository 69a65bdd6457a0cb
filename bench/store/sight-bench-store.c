/* SPDX-License-Identifier: GPL-3.0-or-later */
/* bench/store: how fast and how small a 50-step HTML report is, and how fast
 * the newest 100 of 10,000 stored runs are listed, each against a baseline
 * measured in the same run. */
#define G_LOG_DOMAIN "sight-bench-store"

#include "config.h"

#include <gdk-pixbuf/gdk-pixbuf.h>
#include <glib/gstdio.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sight-report.h"
#include "sight-store.h"
#include "sight-store-private.h"
#include "sight-store-sync.h"

#define STEPS 50
#define RUNS 10000
#define LIST 100
#define REPEAT 21

/* A page-like screenshot: bars, boxes and lines of text-like strokes. */
static GBytes *
make_screenshot (guint seed)
{
  g_autoptr(GdkPixbuf) pixbuf = gdk_pixbuf_new (GDK_COLORSPACE_RGB, FALSE, 8, 1280, 800);
  g_autoptr(GRand) rand = g_rand_new_with_seed (seed);
  g_autofree char *buffer = NULL;
  gsize len;

  gdk_pixbuf_fill (pixbuf, 0xf6f6f8ff);
  for (guint i = 0; i < 160; i++)
    {
      int w = g_rand_int_range (rand, 20, 500), h = g_rand_int_range (rand, 6, 60);
      int x = g_rand_int_range (rand, 0, 1280 - w), y = g_rand_int_range (rand, 0, 800 - h);
      g_autoptr(GdkPixbuf) sub = gdk_pixbuf_new_subpixbuf (pixbuf, x, y, w, h);
      gdk_pixbuf_fill (sub, g_rand_int (rand) | 0xff);
    }
  /* lines of text: words of glyph-sized strokes */
  {
    guchar *pixels = gdk_pixbuf_get_pixels (pixbuf);
    int stride = gdk_pixbuf_get_rowstride (pixbuf);
    for (int y = 100; y < 700; y += 22)
      for (int x = 80; x < 1100; x += 7)
        if (g_rand_int_range (rand, 0, 6) != 0)
          {
            int h = g_rand_int_range (rand, 6, 11);
            for (int dy = 0; dy < h; dy++)
              memset (pixels + (y + 10 - dy) * stride + x * 3, 0x30, 2 * 3);
          }
  }
  /* what the engine stores for reports: a JPEG of the viewport */
  g_assert_true (gdk_pixbuf_save_to_buffer (pixbuf, &buffer, &len, "jpeg", NULL,
                                            "quality", "80", NULL));
  return g_bytes_new_take (g_steal_pointer (&buffer), len);
}

static int
compare_double (gconstpointer a,
                gconstpointer b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
median_ms (GPtrArray *(*list) (SightStore *, guint, GError **),
           SightStore *store)
{
  double t[REPEAT];

  for (guint i = 0; i < REPEAT; i++)
    {
      gint64 t0 = g_get_monotonic_time ();
      g_autoptr(GPtrArray) runs = list (store, LIST, NULL);
      t[i] = (g_get_monotonic_time () - t0) / 1000.0;
      g_assert_cmpuint (runs->len, ==, LIST);
    }
  qsort (t, REPEAT, sizeof t[0], compare_double);
  return t[REPEAT / 2];
}

static GPtrArray *
list_indexed (SightStore *store, guint limit, GError **error)
{
  return sight_store_list_runs (store, limit, NULL, error);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = g_dir_make_tmp ("sight-bench-store-XXXXXX", NULL);
  g_autofree char *path = g_build_filename (dir, "sightline.db", NULL);
  g_autoptr(SightStore) store = NULL;
  g_autoptr(SightRunData) data = NULL;
  g_autoptr(GBytes) html = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;
  SightRunRecord run = { .kind = (char *) "smoke", .url = (char *) "http://127.0.0.1:8765/" };
  gsize originals = 0, naive_size = 0;
  double render_cpu_ms;
  clock_t cpu0;
  double render_ms, naive_ms, load_ms, indexed_ms, unindexed_ms;
  gint64 t0;

  store = sight_store_new (path, &error);
  g_assert_no_error (error);

  /* 1. A 50-step run with a screenshot per step. */
  id = sight_store_open_run (store, &run, &error);
  for (guint i = 0; i < STEPS; i++)
    {
      g_autoptr(GBytes) shot = make_screenshot (i);
      g_autofree char *tree = g_strdup_printf ("document \"Step %u\"\n  main\n    heading \"Dashboard\" [e1]\n"
                                               "    button \"Next\" [e2]\n    link \"Help\" [e3]", i);
      SightStepRecord st = { .run_id = id, .index = i, .kind = (char *) "act",
                             .instruction = (char *) "click Next",
                             .budget_json = (char *) "{\"maxModelCalls\":25,\"maxSteps\":25,\"timeoutMs\":120000}" };
      SightObservationRecord o = { .run_id = id, .step_index = i, .phase = (char *) "after",
                                   .tree_text = tree, .screenshot = shot,
                                   .screenshot_mime = (char *) "image/jpeg",
                                   .width = 1280, .height = 800, .scale = 1 };

      originals += g_bytes_get_size (shot);
      g_assert_true (sight_store_add_step (store, &st, &error));
      g_assert_true (sight_store_add_observation (store, &o, &error));
      st.verdict = SIGHT_RUN_VERDICT_PASS;
      st.actions = 1;
      st.has_target = TRUE;
      st.target_x = 600;
      st.target_y = 400;
      st.target_width = 120;
      st.target_height = 36;
      g_assert_true (sight_store_finish_step (store, &st, &error));
    }
  run.id = id;
  run.verdict = SIGHT_RUN_VERDICT_PASS;
  g_assert_true (sight_store_finish_run (store, &run, &error));

  t0 = g_get_monotonic_time ();
  data = sight_store_load_run (store, id, &error);
  load_ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_assert_no_error (error);

  t0 = g_get_monotonic_time ();
  cpu0 = clock ();
  html = sight_report_render (data, SIGHT_REPORT_HTML, &error);
  render_cpu_ms = (clock () - cpu0) * 1000.0 / CLOCKS_PER_SEC;
  render_ms = (g_get_monotonic_time () - t0) / 1000.0;
  g_assert_no_error (error);

  /* Baseline: every original screenshot embedded as is, before and after. */
  t0 = g_get_monotonic_time ();
  for (guint i = 0; i < data->observations->len; i++)
    {
      SightObservationRecord *o = data->observations->pdata[i];
      for (guint k = 0; k < 2; k++)
        {
          g_autofree char *b64 = g_base64_encode (g_bytes_get_data (o->screenshot, NULL),
                                                  g_bytes_get_size (o->screenshot));
          naive_size += strlen (b64) + 40;
        }
    }
  naive_ms = (g_get_monotonic_time () - t0) / 1000.0;

  g_print ("50-step report: %.1f ms to render (%.1f ms of CPU; + %.1f ms to load the run), "
           "%.2f MB (targets: < 1000 ms, <= 5 MB)\n", render_ms, render_cpu_ms, load_ms,
           g_bytes_get_size (html) / 1048576.0);
  g_print ("  baseline, the original screenshots embedded before and after: %.2f MB "
           "(%.1f ms just to base64 them); size ratio %.1fx smaller\n",
           naive_size / 1048576.0, naive_ms, (double) naive_size / g_bytes_get_size (html));
  g_print ("  originals: %.2f MB of 1280x800 JPEG for %u steps\n", originals / 1048576.0, STEPS);

  /* 2. 10,000 runs, seeded in one transaction straight into the file. */
  {
    sqlite3 *db = NULL;
    sqlite3_stmt *r = NULL, *s = NULL;

    g_assert_cmpint (sqlite3_open (path, &db), ==, SQLITE_OK);
    sqlite3_busy_timeout (db, 5000);
    g_assert_cmpint (sqlite3_exec (db, "BEGIN IMMEDIATE", NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_prepare_v2 (db, "INSERT INTO runs (id, kind, name, url, verdict, started_at, finished_at)"
                            " VALUES (?, 'test', ?, 'http://127.0.0.1/', ?, ?, ?)", -1, &r, NULL);
    sqlite3_prepare_v2 (db, "INSERT INTO steps (run_id, idx, kind, verdict, started_at, finished_at)"
                            " VALUES (?, ?, 'act', 'pass', ?, ?)", -1, &s, NULL);
    for (guint i = 0; i < RUNS; i++)
      {
        g_autofree char *rid = g_strdup_printf ("run_bench%06u", i);
        g_autofree char *name = g_strdup_printf ("bench run %u", i);
        /* shuffled start times, so insertion order is not time order */
        gint64 started = 1600000000000000 + (gint64) ((i * 7919u) % RUNS) * 60000000;

        sqlite3_bind_text (r, 1, rid, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text (r, 2, name, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text (r, 3, i % 5 ? "pass" : "fail", -1, SQLITE_STATIC);
        sqlite3_bind_int64 (r, 4, started);
        sqlite3_bind_int64 (r, 5, started + 5000000);
        g_assert_cmpint (sqlite3_step (r), ==, SQLITE_DONE);
        sqlite3_reset (r);
        for (int k = 0; k < 5; k++)
          {
            sqlite3_bind_text (s, 1, rid, -1, SQLITE_TRANSIENT);
            sqlite3_bind_int (s, 2, k);
            sqlite3_bind_int64 (s, 3, started + k);
            sqlite3_bind_int64 (s, 4, started + k + 1);
            g_assert_cmpint (sqlite3_step (s), ==, SQLITE_DONE);
            sqlite3_reset (s);
          }
      }
    sqlite3_finalize (r);
    sqlite3_finalize (s);
    g_assert_cmpint (sqlite3_exec (db, "COMMIT; ANALYZE", NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close (db);
  }

  indexed_ms = median_ms (list_indexed, store);
  unindexed_ms = median_ms (_sight_store_list_runs_unindexed, store);
  g_print ("newest %u of %u runs: %.2f ms median of %u (target: < 20 ms)\n", LIST, RUNS + 1,
           indexed_ms, REPEAT);
  g_print ("  baseline, the same query without the started_at index: %.2f ms; ratio %.1fx faster\n",
           unindexed_ms, unindexed_ms / MAX (indexed_ms, 0.001));

  g_clear_object (&store);
  {
    const char *suffixes[] = { "", "-wal", "-shm" };
    for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
      {
        g_autofree char *f = g_strconcat (path, suffixes[i], NULL);
        g_unlink (f);
      }
    g_rmdir (dir);
  }
  return (render_ms < 1000 && g_bytes_get_size (html) <= 5 * 1048576 && indexed_ms < 20) ? 0 : 1;
}

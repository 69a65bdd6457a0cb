/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-crawl"

#include "config.h"

#include "sight-crawl.h"

#include <libsoup/soup.h>
#include <string.h>

#include "sight-bounded-read.h"
#include "sight-error.h"
#include "sight-json.h"
#include "sight-page-scripts.h"
#include "sight-robots.h"
#include "sight-scrape.h"
#include "sight-tool-args.h"
#include "sight-web-page.h"

#define ROBOTS_AGENT "Sightline"
#define MAX_SKIPPED_LISTED 100
#define MAX_SITEMAP_URLS 1000
#define ROBOTS_TIMEOUT_S 10
/* robots.txt and sitemap.xml come from the site being crawled, so what is
 * read of them is bounded: RFC 9309 has crawlers parse at least 500 KiB of a
 * robots.txt (and lets them ignore the rest), and the sitemaps protocol caps
 * a sitemap at 50 MB. */
#define ROBOTS_MAX_BYTES  (500 * 1024)
#define SITEMAP_MAX_BYTES (50 * 1000 * 1000)

static const char * const crawl_args[] = {
  "url", "scope", "include", "exclude", "maxPages", "maxDepth", "delayMs", "respectRobots",
  "sitemap", "content", "maxMs", "cursor", NULL
};
static const char * const content_formats[] = {
  "html", "cleaned_html", "markdown", "readability", NULL
};
static const char * const no_formats[] = { NULL };

typedef struct {
  char *url;
  guint depth;
} Target;

typedef struct {
  /* arguments */
  char        *start;
  char        *scope;          /* "host", "subdomains" or NULL with hosts */
  char       **hosts;          /* the scope's host list, lower case */
  char       **include;
  char       **exclude;
  char       **content;
  gint64       max_pages;
  gint64       max_depth;
  gint64       delay_ms;
  gboolean     respect_robots;
  gboolean     sitemap;
  gint64       deadline;

  /* progress */
  SightWebPage *page;
  SoupSession  *http;
  GQueue        queue;         /* Target */
  GHashTable   *seen;          /* normalized URL → TRUE */
  GHashTable   *robots;        /* origin → SightRobots */
  JsonArray    *pages;
  JsonArray    *skipped;
  guint         skipped_total;
  Target       *current;
  gint64        current_started;
  guint         delay_id;
} Crawl;

static void
target_free (Target *target)
{
  g_free (target->url);
  g_free (target);
}

static void
crawl_free (Crawl *crawl)
{
  g_clear_handle_id (&crawl->delay_id, g_source_remove);
  g_free (crawl->start);
  g_free (crawl->scope);
  g_strfreev (crawl->hosts);
  g_strfreev (crawl->include);
  g_strfreev (crawl->exclude);
  g_strfreev (crawl->content);
  g_clear_object (&crawl->page);
  g_clear_object (&crawl->http);
  g_queue_clear_full (&crawl->queue, (GDestroyNotify) target_free);
  g_clear_pointer (&crawl->seen, g_hash_table_unref);
  g_clear_pointer (&crawl->robots, g_hash_table_unref);
  g_clear_pointer (&crawl->pages, json_array_unref);
  g_clear_pointer (&crawl->skipped, json_array_unref);
  g_clear_pointer (&crawl->current, target_free);
  g_free (crawl);
}

/* The URL without its fragment, as the key of the seen set. */
static char *
normalize_url (const char *url)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED, NULL);
  g_autoptr(GUri) bare = NULL;

  if (uri == NULL)
    return NULL;
  bare = g_uri_build (G_URI_FLAGS_ENCODED, g_uri_get_scheme (uri), NULL,
                      g_uri_get_host (uri), g_uri_get_port (uri),
                      *g_uri_get_path (uri) ? g_uri_get_path (uri) : "/",
                      g_uri_get_query (uri), NULL);
  return g_uri_to_string (bare);
}

static char *
url_host (const char *url)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED, NULL);

  return uri && g_uri_get_host (uri) ? g_ascii_strdown (g_uri_get_host (uri), -1) : NULL;
}

static char *
url_path_and_query (const char *url)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED, NULL);

  if (uri == NULL)
    return g_strdup ("/");
  if (g_uri_get_query (uri) != NULL)
    return g_strdup_printf ("%s?%s", *g_uri_get_path (uri) ? g_uri_get_path (uri) : "/",
                            g_uri_get_query (uri));
  return g_strdup (*g_uri_get_path (uri) ? g_uri_get_path (uri) : "/");
}

static char *
url_origin (const char *url)
{
  g_autoptr(GUri) uri = g_uri_parse (url, G_URI_FLAGS_ENCODED | G_URI_FLAGS_PARSE_RELAXED, NULL);

  if (uri == NULL)
    return NULL;
  if (g_uri_get_port (uri) > 0)
    return g_strdup_printf ("%s://%s:%d", g_uri_get_scheme (uri), g_uri_get_host (uri),
                            g_uri_get_port (uri));
  return g_strdup_printf ("%s://%s", g_uri_get_scheme (uri), g_uri_get_host (uri));
}

static gboolean
in_scope (Crawl      *crawl,
          const char *url)
{
  g_autofree char *host = url_host (url);

  if (host == NULL)
    return FALSE;
  if (crawl->scope != NULL && g_str_equal (crawl->scope, "subdomains"))
    {
      const char *base = crawl->hosts[0];

      if (g_str_has_prefix (base, "www."))
        base += 4;
      return g_str_equal (host, base) ||
             (g_str_has_suffix (host, base) && host[strlen (host) - strlen (base) - 1] == '.');
    }
  return g_strv_contains ((const char * const *) crawl->hosts, host);
}

static gboolean
pattern_match (const char *pattern,
               const char *url)
{
  g_autofree char *subject = pattern[0] == '/' ? url_path_and_query (url) : g_strdup (url);

  return g_pattern_match_simple (pattern, subject);
}

static const char *
filter_reason (Crawl      *crawl,
               const char *url)
{
  if (!in_scope (crawl, url))
    return "scope";
  for (char **p = crawl->exclude; *p != NULL; p++)
    if (pattern_match (*p, url))
      return "exclude";
  if (crawl->include[0] != NULL)
    {
      for (char **p = crawl->include; *p != NULL; p++)
        if (pattern_match (*p, url))
          return NULL;
      return "include";
    }
  return NULL;
}

static void
skip (Crawl      *crawl,
      const char *url,
      const char *reason)
{
  crawl->skipped_total++;
  if (json_array_get_length (crawl->skipped) < MAX_SKIPPED_LISTED)
    {
      JsonObject *entry = json_object_new ();

      json_object_set_string_member (entry, "url", url);
      json_object_set_string_member (entry, "reason", reason);
      json_array_add_object_element (crawl->skipped, entry);
    }
}

/* Queues @url at @depth unless seen, filtered or too deep. */
static void
consider (Crawl      *crawl,
          const char *url,
          guint       depth)
{
  g_autofree char *key = normalize_url (url);
  const char *reason;
  Target *target;

  if (key == NULL || g_hash_table_contains (crawl->seen, key))
    return;
  g_hash_table_add (crawl->seen, g_strdup (key));
  if ((reason = filter_reason (crawl, key)) != NULL)
    {
      skip (crawl, key, reason);
      return;
    }
  if (depth > crawl->max_depth)
    {
      skip (crawl, key, "maxDepth");
      return;
    }
  target = g_new0 (Target, 1);
  target->url = g_steal_pointer (&key);
  target->depth = depth;
  g_queue_push_tail (&crawl->queue, target);
}

static guint
remaining_ms (Crawl *crawl)
{
  return sight_deadline_remaining_ms (crawl->deadline);
}

static char *
encode_cursor (Crawl *crawl)
{
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonGenerator) gen = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  GHashTableIter iter;
  gpointer key;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "v");
  json_builder_add_int_value (b, 1);
  json_builder_set_member_name (b, "start");
  json_builder_add_string_value (b, crawl->start);
  json_builder_set_member_name (b, "queue");
  json_builder_begin_array (b);
  for (GList *l = crawl->queue.head; l != NULL; l = l->next)
    {
      Target *t = l->data;

      json_builder_begin_array (b);
      json_builder_add_string_value (b, t->url);
      json_builder_add_int_value (b, t->depth);
      json_builder_end_array (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "seen");
  json_builder_begin_array (b);
  g_hash_table_iter_init (&iter, crawl->seen);
  while (g_hash_table_iter_next (&iter, &key, NULL))
    json_builder_add_string_value (b, key);
  json_builder_end_array (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  return g_base64_encode ((const guchar *) text, strlen (text));
}

static gboolean
decode_cursor (Crawl       *crawl,
               const char  *cursor,
               GError     **error)
{
  g_autoptr(JsonNode) state = NULL;
  g_autofree guchar *text = NULL;
  gsize length = 0;
  JsonObject *object;
  JsonArray *queue, *seen;

  text = g_base64_decode (cursor, &length);
  state = sight_json_parse ((const char *) text, length, SIGHT_JSON_MAX_DEPTH, NULL);
  if (state == NULL || !JSON_NODE_HOLDS_OBJECT (state))
    goto invalid;
  object = json_node_get_object (state);
  if (json_object_get_int_member_with_default (object, "v", 0) != 1 ||
      g_strcmp0 (json_object_get_string_member_with_default (object, "start", ""),
                 crawl->start) != 0 ||
      !json_object_has_member (object, "queue") || !json_object_has_member (object, "seen"))
    goto invalid;
  queue = json_object_get_array_member (object, "queue");
  seen = json_object_get_array_member (object, "seen");
  if (queue == NULL || seen == NULL)
    goto invalid;
  for (guint i = 0; i < json_array_get_length (seen); i++)
    {
      const char *url = json_array_get_string_element (seen, i);

      if (url != NULL)
        g_hash_table_add (crawl->seen, g_strdup (url));
    }
  for (guint i = 0; i < json_array_get_length (queue); i++)
    {
      JsonArray *pair = json_array_get_array_element (queue, i);
      Target *t;

      if (pair == NULL || json_array_get_length (pair) != 2 ||
          json_array_get_string_element (pair, 0) == NULL)
        goto invalid;
      t = g_new0 (Target, 1);
      t->url = g_strdup (json_array_get_string_element (pair, 0));
      t->depth = json_array_get_int_element (pair, 1);
      g_queue_push_tail (&crawl->queue, t);
    }
  return TRUE;

invalid:
  g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
               "cursor: not a cursor of a crawl from %s", crawl->start);
  return FALSE;
}

static void
finish (GTask      *task,
        const char *stopped_by)
{
  Crawl *crawl = g_task_get_task_data (task);
  JsonObject *result = json_object_new ();
  JsonNode *root = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (result, "start", crawl->start);
  json_object_set_array_member (result, "pages", json_array_ref (crawl->pages));
  json_object_set_array_member (result, "skipped", json_array_ref (crawl->skipped));
  json_object_set_int_member (result, "skippedTotal", crawl->skipped_total);
  json_object_set_string_member (result, "stoppedBy", stopped_by);
  json_object_set_int_member (result, "pending", g_queue_get_length (&crawl->queue));
  if (!g_queue_is_empty (&crawl->queue))
    {
      g_autofree char *cursor = encode_cursor (crawl);

      json_object_set_string_member (result, "cursor", cursor);
    }
  json_node_take_object (root, result);
  g_task_return_pointer (task, root, (GDestroyNotify) json_node_unref);
}

static void crawl_next (GTask *task);

/* A GET of a site's file over plain HTTP, its body read up to a bound. */

typedef void (*FetchedFunc) (GTask    *task,
                             guint     status,
                             GBytes   *body,
                             gboolean  truncated,
                             GError   *error);

typedef struct
{
  GTask        *task;
  SoupMessage  *msg;
  gsize         max_bytes;
  FetchedFunc   fetched;
} Fetch;

/* Hands the crawl's task on to the fetch's callback. An unread rest goes
 * with the stream when the reading lets it go (libsoup then closes the
 * connection). */
static void
fetch_done (Fetch    *fetch,
            GBytes   *body,
            gboolean  truncated,
            GError   *error)
{
  guint status = body != NULL ? soup_message_get_status (fetch->msg) : 0;

  fetch->fetched (g_steal_pointer (&fetch->task), status, body, truncated, error);
  g_object_unref (fetch->msg);
  g_free (fetch);
}

static void
fetch_read_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Fetch *fetch = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) body = NULL;
  gboolean truncated = FALSE;

  body = sight_read_bounded_finish (G_INPUT_STREAM (source), result, &truncated, &error);
  fetch_done (fetch, body, truncated, error);
}

static void
fetch_sent_cb (GObject      *source,
               GAsyncResult *result,
               gpointer      user_data)
{
  Fetch *fetch = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GInputStream) stream = NULL;

  stream = soup_session_send_finish (SOUP_SESSION (source), result, &error);
  if (stream == NULL)
    {
      fetch_done (fetch, NULL, FALSE, error);
      return;
    }
  sight_read_bounded_async (stream, fetch->max_bytes, 0, g_task_get_cancellable (fetch->task),
                            fetch_read_cb, fetch);
}

/* Takes @task; @fetched gets it back. */
static void
fetch_bounded (Crawl       *crawl,
               SoupMessage *msg,
               gsize        max_bytes,
               GTask       *task,
               FetchedFunc  fetched)
{
  Fetch *fetch = g_new0 (Fetch, 1);

  fetch->task = task;
  fetch->msg = g_object_ref (msg);
  fetch->max_bytes = max_bytes;
  fetch->fetched = fetched;
  soup_session_send_async (crawl->http, msg, G_PRIORITY_DEFAULT, g_task_get_cancellable (task),
                           fetch_sent_cb, fetch);
}

/* robots.txt, fetched once per origin. Past ROBOTS_MAX_BYTES the rest is
 * ignored, as RFC 9309 allows. */

static void
robots_fetched (GTask    *task,
                guint     status,
                GBytes   *body,
                gboolean  truncated,
                GError   *error)
{
  Crawl *crawl = g_task_get_task_data (task);
  g_autofree char *origin = url_origin (crawl->current->url);
  SightRobots *robots;

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_task_return_error (task, g_error_copy (error));
      g_object_unref (task);
      return;
    }
  if (truncated)
    g_debug ("%s/robots.txt: only the first %d bytes are read", origin, ROBOTS_MAX_BYTES);
  if (status >= 200 && status < 300)
    robots = sight_robots_parse (g_bytes_get_data (body, NULL), g_bytes_get_size (body),
                                 ROBOTS_AGENT);
  else
    robots = sight_robots_new_for_status (status);
  g_hash_table_insert (crawl->robots, g_steal_pointer (&origin), robots);
  crawl_next (task);
}

static void
page_scraped_cb (GObject      *source,
                 GAsyncResult *result,
                 gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Crawl *crawl = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) scraped = sight_web_page_evaluate_finish (SIGHT_WEB_PAGE (source), result,
                                                                &error);
  JsonObject *entry = json_object_new ();
  Target *target = g_steal_pointer (&crawl->current);

  json_object_set_string_member (entry, "url", target->url);
  json_object_set_int_member (entry, "depth", target->depth);
  json_object_set_int_member (entry, "status", sight_page_status_code (crawl->page));
  if (scraped != NULL && JSON_NODE_HOLDS_OBJECT (scraped))
    {
      JsonObject *object = json_node_get_object (scraped);
      JsonObject *metadata = json_object_get_object_member (object, "metadata");
      JsonArray *links = json_object_get_array_member (object, "links");

      json_object_set_string_member (entry, "title",
                                     json_object_get_string_member_with_default (metadata,
                                                                                 "title", ""));
      json_object_set_int_member (entry, "linksFound", json_array_get_length (links));
      if (crawl->content[0] != NULL)
        json_object_set_member (entry, "content",
                                json_node_copy (json_object_get_member (object, "content")));
      for (guint i = 0; i < json_array_get_length (links); i++)
        {
          JsonObject *link = json_array_get_object_element (links, i);

          consider (crawl, json_object_get_string_member (link, "url"), target->depth + 1);
        }
    }
  else
    {
      json_object_set_string_member (entry, "title", "");
      json_object_set_int_member (entry, "linksFound", 0);
      if (error != NULL)
        json_object_set_string_member (entry, "error", error->message);
    }
  json_object_set_int_member (entry, "ms",
                              (g_get_monotonic_time () - crawl->current_started) / 1000);
  json_array_add_object_element (crawl->pages, entry);
  target_free (target);

  if (g_task_return_error_if_cancelled (task))
    return;
  crawl_next (g_steal_pointer (&task));
}

static void
page_loaded_cb (GObject      *source,
                GAsyncResult *result,
                gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  Crawl *crawl = g_task_get_task_data (task);
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonBuilder) b = json_builder_new ();
  g_autoptr(JsonNode) args = NULL;
  g_autofree char *script = NULL;
  GCancellable *cancellable;

  if (!sight_web_page_load_finish (SIGHT_WEB_PAGE (source), result, &error))
    {
      JsonObject *entry = json_object_new ();
      Target *target = g_steal_pointer (&crawl->current);

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          target_free (target);
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
      json_object_set_string_member (entry, "url", target->url);
      json_object_set_int_member (entry, "depth", target->depth);
      json_object_set_int_member (entry, "status", 0);
      json_object_set_string_member (entry, "title", "");
      json_object_set_int_member (entry, "linksFound", 0);
      json_object_set_int_member (entry, "ms",
                                  (g_get_monotonic_time () - crawl->current_started) / 1000);
      json_object_set_string_member (entry, "error", error->message);
      json_array_add_object_element (crawl->pages, entry);
      target_free (target);
      crawl_next (g_steal_pointer (&task));
      return;
    }

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "formats");
  json_builder_begin_array (b);
  for (char **f = crawl->content; *f != NULL; f++)
    json_builder_add_string_value (b, *f);
  json_builder_end_array (b);
  json_builder_end_object (b);
  args = json_builder_get_root (b);
  script = sight_scrape_script ();
  cancellable = g_task_get_cancellable (task);
  sight_web_page_evaluate_async (crawl->page, script, args, remaining_ms (crawl),
                                 cancellable, page_scraped_cb,
                                 g_steal_pointer (&task));
}

static gboolean
delay_done_cb (gpointer user_data)
{
  GTask *task = user_data;
  Crawl *crawl = g_task_get_task_data (task);

  crawl->delay_id = 0;
  webkit_web_view_stop_loading (sight_web_page_get_web_view (crawl->page));
  sight_web_page_load_async (crawl->page, crawl->current->url, SIGHT_WAIT_UNTIL_LOAD,
                             remaining_ms (crawl), g_task_get_cancellable (task), page_loaded_cb,
                             task);
  return G_SOURCE_REMOVE;
}

static void
crawl_next (GTask *task)
{
  Crawl *crawl = g_task_get_task_data (task);
  g_autofree char *origin = NULL;
  SightRobots *robots;
  g_autofree char *path = NULL;

  if (g_task_return_error_if_cancelled (task))
    {
      g_object_unref (task);
      return;
    }

  for (;;)
    {
      if (crawl->current == NULL)
        {
          if (g_queue_is_empty (&crawl->queue))
            {
              finish (task, "complete");
              g_object_unref (task);
              return;
            }
          if ((gint64) json_array_get_length (crawl->pages) >= crawl->max_pages)
            {
              finish (task, "maxPages");
              g_object_unref (task);
              return;
            }
          if (g_get_monotonic_time () >= crawl->deadline)
            {
              finish (task, "timeout");
              g_object_unref (task);
              return;
            }
          crawl->current = g_queue_pop_head (&crawl->queue);
        }

      if (!crawl->respect_robots)
        break;
      origin = url_origin (crawl->current->url);
      robots = g_hash_table_lookup (crawl->robots, origin);
      if (robots == NULL)
        {
          g_autofree char *robots_url = g_strconcat (origin, "/robots.txt", NULL);
          g_autoptr(SoupMessage) msg = soup_message_new ("GET", robots_url);

          if (msg == NULL)
            {
              g_hash_table_insert (crawl->robots, g_steal_pointer (&origin),
                                   sight_robots_new_for_status (404));
              continue;
            }
          fetch_bounded (crawl, msg, ROBOTS_MAX_BYTES, task, robots_fetched);
          return;
        }
      path = url_path_and_query (crawl->current->url);
      if (sight_robots_is_allowed (robots, path))
        break;
      skip (crawl, crawl->current->url, "robots");
      g_clear_pointer (&crawl->current, target_free);
      g_clear_pointer (&origin, g_free);
      g_clear_pointer (&path, g_free);
    }

  /* The politeness delay falls between page loads, not before the first. */
  crawl->current_started = g_get_monotonic_time ();
  crawl->delay_id = g_timeout_add (json_array_get_length (crawl->pages) > 0
                                     ? MIN ((guint) crawl->delay_ms, remaining_ms (crawl))
                                     : 0,
                                   delay_done_cb, task);
}

/* A sitemap's <loc> URLs, read with GMarkup. */

typedef struct {
  gboolean  in_loc;
  GString  *text;
  GPtrArray *urls;
} SitemapParse;

static void
sitemap_start (GMarkupParseContext *context,
               const char          *element,
               const char         **names,
               const char         **values,
               gpointer             user_data,
               GError             **error)
{
  SitemapParse *p = user_data;
  const char *local = strrchr (element, ':');

  p->in_loc = g_str_equal (local ? local + 1 : element, "loc");
  g_string_truncate (p->text, 0);
}

static void
sitemap_end (GMarkupParseContext *context,
             const char          *element,
             gpointer             user_data,
             GError             **error)
{
  SitemapParse *p = user_data;

  if (p->in_loc && p->urls->len < MAX_SITEMAP_URLS)
    g_ptr_array_add (p->urls, g_strstrip (g_strdup (p->text->str)));
  p->in_loc = FALSE;
}

static void
sitemap_text (GMarkupParseContext *context,
              const char          *text,
              gsize                length,
              gpointer             user_data,
              GError             **error)
{
  SitemapParse *p = user_data;

  if (p->in_loc)
    g_string_append_len (p->text, text, length);
}

/* A sitemap over SITEMAP_MAX_BYTES is not used (a cut XML document would
 * not parse anyway). */
static void
sitemap_fetched (GTask    *task,
                 guint     status,
                 GBytes   *body,
                 gboolean  truncated,
                 GError   *error)
{
  Crawl *crawl = g_task_get_task_data (task);

  if (truncated)
    g_debug ("%s: the sitemap is over %d bytes; not used", crawl->start, SITEMAP_MAX_BYTES);
  else if (status == SOUP_STATUS_OK)
    {
      static const GMarkupParser parser = { sitemap_start, sitemap_end, sitemap_text, NULL, NULL };
      SitemapParse p = { FALSE, g_string_new (NULL), g_ptr_array_new_with_free_func (g_free) };
      g_autoptr(GMarkupParseContext) context =
        g_markup_parse_context_new (&parser, G_MARKUP_IGNORE_QUALIFIED, &p, NULL);

      if (g_markup_parse_context_parse (context, g_bytes_get_data (body, NULL),
                                        g_bytes_get_size (body), NULL))
        for (guint i = 0; i < p.urls->len; i++)
          consider (crawl, g_ptr_array_index (p.urls, i), 1);
      g_string_free (p.text, TRUE);
      g_ptr_array_unref (p.urls);
    }
  crawl_next (task);
}

static gboolean
parse_scope (Crawl       *crawl,
             JsonObject  *args,
             GError     **error)
{
  JsonNode *node = args ? json_object_get_member (args, "scope") : NULL;
  g_autofree char *start_host = url_host (crawl->start);

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      crawl->scope = g_strdup ("host");
      crawl->hosts = g_strdupv ((char *[]) { start_host, NULL });
      return TRUE;
    }
  if (JSON_NODE_HOLDS_VALUE (node) && json_node_get_value_type (node) == G_TYPE_STRING)
    {
      const char *scope = json_node_get_string (node);

      if (!g_str_equal (scope, "host") && !g_str_equal (scope, "subdomains"))
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "scope: must be host, subdomains or a list of up to 20 hosts");
          return FALSE;
        }
      crawl->scope = g_strdup (scope);
      crawl->hosts = g_strdupv ((char *[]) { start_host, NULL });
      return TRUE;
    }
  if (!sight_tool_args_get_strv (args, "scope", NULL, 20, 253, no_formats, &crawl->hosts, error))
    return FALSE;
  for (char **h = crawl->hosts; *h != NULL; h++)
    {
      char *lower = g_ascii_strdown (*h, -1);

      if (*lower == '\0' || strpbrk (lower, "/:?#@ ") != NULL)
        {
          g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                       "scope: “%s” is not a host name", *h);
          g_free (lower);
          return FALSE;
        }
      g_free (*h);
      *h = lower;
    }
  if (crawl->hosts[0] == NULL)
    {
      g_set_error (error, SIGHT_ERROR, SIGHT_ERROR_INVALID_ARGUMENT,
                   "scope: a host list must name 1 to 20 hosts");
      return FALSE;
    }
  return TRUE;
}

void
sight_crawl_async (JsonObject          *args,
                   GCancellable        *cancellable,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (NULL, cancellable, callback, user_data);
  g_autoptr(GError) error = NULL;
  Crawl *crawl = g_new0 (Crawl, 1);
  const char *url, *cursor;
  gint64 max_ms;

  g_task_set_source_tag (task, sight_crawl_async);
  g_task_set_task_data (task, crawl, (GDestroyNotify) crawl_free);
  g_queue_init (&crawl->queue);
  crawl->seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  crawl->robots = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                         (GDestroyNotify) sight_robots_free);
  crawl->pages = json_array_new ();
  crawl->skipped = json_array_new ();

  if (!sight_tool_args_check_known (args, crawl_args, &error) ||
      !sight_tool_args_get_url (args, "url", TRUE, &url, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  crawl->start = normalize_url (url);
  if (!parse_scope (crawl, args, &error) ||
      !sight_tool_args_get_strv (args, "include", NULL, 50, 2048, no_formats, &crawl->include,
                                 &error) ||
      !sight_tool_args_get_strv (args, "exclude", NULL, 50, 2048, no_formats, &crawl->exclude,
                                 &error) ||
      !sight_tool_args_get_strv (args, "content", content_formats, 4, 0, no_formats,
                                 &crawl->content, &error) ||
      !sight_tool_args_get_int (args, "maxPages", 25, 1, 100, &crawl->max_pages, &error) ||
      !sight_tool_args_get_int (args, "maxDepth", 2, 0, 5, &crawl->max_depth, &error) ||
      !sight_tool_args_get_int (args, "delayMs", 500, 0, 10000, &crawl->delay_ms, &error) ||
      !sight_tool_args_get_bool (args, "respectRobots", TRUE, &crawl->respect_robots, &error) ||
      !sight_tool_args_get_bool (args, "sitemap", FALSE, &crawl->sitemap, &error) ||
      !sight_tool_args_get_int (args, "maxMs", 300000, 1000, 600000, &max_ms, &error) ||
      !sight_tool_args_get_string (args, "cursor", 0, &cursor, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  crawl->deadline = g_get_monotonic_time () + max_ms * 1000;
  crawl->page = sight_web_page_new ();
  crawl->http = soup_session_new_with_options ("user-agent", ROBOTS_AGENT,
                                               "timeout", ROBOTS_TIMEOUT_S, NULL);

  if (cursor != NULL)
    {
      if (!decode_cursor (crawl, cursor, &error))
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }
    }
  else
    {
      Target *first = g_new0 (Target, 1);

      first->url = g_strdup (crawl->start);
      g_hash_table_add (crawl->seen, g_strdup (crawl->start));
      g_queue_push_tail (&crawl->queue, first);
      if (crawl->sitemap)
        {
          g_autofree char *origin = url_origin (crawl->start);
          g_autofree char *sitemap_url = g_strconcat (origin, "/sitemap.xml", NULL);
          g_autoptr(SoupMessage) msg = soup_message_new ("GET", sitemap_url);

          fetch_bounded (crawl, msg, SITEMAP_MAX_BYTES, g_steal_pointer (&task),
                         sitemap_fetched);
          return;
        }
    }
  crawl_next (g_steal_pointer (&task));
}

JsonNode *
sight_crawl_finish (GAsyncResult  *result,
                    GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, NULL), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

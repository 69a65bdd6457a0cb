/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include "sight-web-page.h"

G_BEGIN_DECLS

/* For the actions code of the engine. */

/* Main-frame loads started over the page's life. */
guint    _sight_web_page_get_navigation_count      (SightWebPage       *self);
/* The next file chooser the page opens is answered with @files (paths);
 * NULL makes it cancel. */
void     _sight_web_page_set_pending_files         (SightWebPage       *self,
                                                    const char * const *files);
/* Whether a file chooser was answered since the files were set (once). */
gboolean _sight_web_page_take_file_chooser_answered (SightWebPage      *self);

/* Like sight_web_page_load_async() for a navigation started otherwise
 * (finish with sight_web_page_load_finish()). */
void     _sight_web_page_wait_for_navigation_async (SightWebPage       *self,
                                                    SightWaitUntil      wait_until,
                                                    guint               timeout_ms,
                                                    GCancellable       *cancellable,
                                                    GAsyncReadyCallback callback,
                                                    gpointer            user_data);

/* Secrets filled into the page (sight_web_page_fill_secret_async()): the
 * value is kept, wiped when the page goes, so every later screenshot can
 * paint over wherever it shows; a fill that typed counts towards
 * sight_web_page_get_secret_fills(). */
void       _sight_web_page_add_filled_secret      (SightWebPage       *self,
                                                   const char         *value);
void       _sight_web_page_count_secret_fill      (SightWebPage       *self);
/* The values of the page and its openers (borrowed strings). */
GPtrArray *_sight_web_page_collect_filled_secrets (SightWebPage       *self);

/* The web-process sandbox, probed once per process before the first load
 * (sight-web-page-process.c). */
gboolean   _sight_web_page_sandbox_probed         (void);
void       _sight_web_page_probe_sandbox_async    (GAsyncReadyCallback callback,
                                                   gpointer            user_data);
gboolean   _sight_web_page_sandbox_usable         (GError            **error);

G_END_DECLS

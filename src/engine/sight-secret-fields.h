/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <json-glib/json-glib.h>

#include "sight-web-page.h"

G_BEGIN_DECLS

/* Secrets in the page: the one fill that types them, and where they show.
 *
 * sight_web_page_fill_secret_async() types @value into the field @ref only
 * when the page, at that moment, has it as an enabled, editable input of
 * @purpose (the purpose table of js/secret-fields.js and the README's
 * "Secrets"); otherwise it fails with SIGHT_ERROR_POLICY_DENIED naming the
 * field and both purposes, and nothing is typed.  Actionability and
 * settling are those of sight_web_page_perform_async().  From then on every
 * screenshot of the page (and of its popups) paints over each field holding
 * the value, whatever its type now, and each text run or attribute-rendered
 * text containing it, measured at capture time in the isolated world (the
 * value is compared there and never comes back).  A fill that typed counts
 * towards sight_web_page_get_secret_fills(): the page's pixels are tainted.
 * The result is perform's, with no value in it. */
void        sight_web_page_fill_secret_async  (SightWebPage        *self,
                                               const char          *ref,
                                               const char          *value,
                                               const char          *purpose,
                                               guint                timeout_ms,
                                               GCancellable        *cancellable,
                                               GAsyncReadyCallback  callback,
                                               gpointer             user_data);
JsonObject *sight_web_page_fill_secret_finish (SightWebPage        *self,
                                               GAsyncResult        *result,
                                               GError             **error);
/* Secret fills that typed into this page over its life. */
guint       sight_web_page_get_secret_fills   (SightWebPage        *self);
/* While a fill is typing (from the call until it finishes, whatever the
 * outcome) *@out_typing is TRUE; the mark counts the fills begun, so a
 * capture that compares the marks taken when it began and ended knows
 * whether a fill ran in between (the video recorder withholds such frames). */
guint       sight_web_page_get_secret_typing_mark (SightWebPage    *self,
                                                   gboolean        *out_typing);

/* For the engine: js/secret-fields.js, and the boxes (CSS pixels of the
 * captured area, with a margin) a screenshot paints over: every region
 * holding one of @values (*@out_n_secret of them) and, with @secure, every
 * secure field.  Returns a GArray of SightRect. */
const char *_sight_secret_fields_script       (void);
void        _sight_secret_regions_async       (SightWebPage        *self,
                                               const char * const  *values,
                                               guint                n_values,
                                               gboolean             full_page,
                                               gboolean             secure,
                                               GCancellable        *cancellable,
                                               GAsyncReadyCallback  callback,
                                               gpointer             user_data);
GArray     *_sight_secret_regions_finish      (SightWebPage        *self,
                                               GAsyncResult        *result,
                                               guint               *out_n_secret,
                                               GError             **error);

G_END_DECLS

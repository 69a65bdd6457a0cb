/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <gio/gio.h>

#include "sight-model-provider.h"

G_BEGIN_DECLS

/* A model provider's API key in the user's keyring (libsecret's Secret
 * Service), one per provider ("openai", "anthropic"). Never in GSettings, a
 * file or a log. */
void     sight_api_key_store_async   (const char          *provider,
                                      const char          *key,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
gboolean sight_api_key_store_finish  (GAsyncResult        *result,
                                      GError             **error);
/* Finishes with the key (free it with sight_api_key_free), or NULL with no
 * error when none is stored. */
void     sight_api_key_lookup_async  (const char          *provider,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
char    *sight_api_key_lookup_finish (GAsyncResult        *result,
                                      GError             **error);
void     sight_api_key_clear_async   (const char          *provider,
                                      GCancellable        *cancellable,
                                      GAsyncReadyCallback  callback,
                                      gpointer             user_data);
gboolean sight_api_key_clear_finish  (GAsyncResult        *result,
                                      GError             **error);
/* The model the app's settings name (model-provider, model-name,
 * model-base-url) with @key (NULL: none), or NULL with an error saying what
 * to set. The one reading of those settings: the window's model and
 * Preferences › Model › Test connection. */
SightModelProvider *sight_api_key_new_provider (GSettings   *settings,
                                                const char  *key,
                                                GError     **error);

/* Wipes and frees a key. */
void     sight_api_key_free          (char                *key);

G_END_DECLS

/* SPDX-License-Identifier: GPL-3.0-or-later */
#pragma once

#include <adwaita.h>

G_BEGIN_DECLS

#define SIGHT_TYPE_PREFERENCES (sight_preferences_get_type ())
G_DECLARE_FINAL_TYPE (SightPreferences, sight_preferences, SIGHT, PREFERENCES,
                      AdwPreferencesWindow)

/* The preferences: the model (provider, name, base URL; the API key in the
 * keyring through libsecret) and the step defaults (timeouts, budgets,
 * vision), bound to @settings (the app's schema). Emits ::api-key-changed
 * once a key was stored or removed. */
SightPreferences *sight_preferences_new          (GtkWindow  *parent,
                                                  GSettings  *settings);
/* What the "Stored Key" row says (for tests): "stored", "none",
 * "unavailable" (no keyring) or "unknown" (still asking). */
const char       *sight_preferences_get_key_state (SightPreferences *self);

/* The project file whose credentials Preferences › Credentials shows and
 * edits (sight_credential_project_path_for). Emits ::credentials-changed
 * once it was written. */
void              sight_preferences_set_project_path (SightPreferences *self,
                                                      const char       *path);
/* What Model › Test Connection shows (for tests): "idle", "running", "ok"
 * or "failed", and in @text the words it shows. */
const char       *sight_preferences_get_probe_state (SightPreferences  *self,
                                                     const char       **text);

G_END_DECLS

/* SPDX-License-Identifier: GPL-3.0-or-later */
#define G_LOG_DOMAIN "sight-credentials-page"

#include "config.h"

#include "sight-credentials-page.h"

#include <glib/gi18n.h>
#include <string.h>

#include "sight-credential-keyring.h"
#include "sight-project.h"
#include "sight-secrets.h"

struct _SightCredentialsPage
{
  AdwPreferencesPage parent_instance;

  /* template widgets */
  AdwPreferencesGroup *list_group;
  GtkListBox          *list_box;
  AdwPreferencesGroup *form_group;
  AdwEntryRow         *name_row;
  AdwComboRow         *purpose_row;
  AdwEntryRow         *origins_row;
  AdwPasswordEntryRow *value_row;
  GtkWidget           *save_button;

  /* owned */
  char                *project_path;
  SightProject        *project;      /* as last read; NULL: no file or unreadable */
  char                *editing;      /* the credential the form edits; NULL: a new one */
  GCancellable        *cancellable;
  guint                busy;
};

G_DEFINE_FINAL_TYPE (SightCredentialsPage, sight_credentials_page, ADW_TYPE_PREFERENCES_PAGE)

enum { CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void
toast (SightCredentialsPage *self,
       const char           *message)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));

  if (ADW_IS_PREFERENCES_WINDOW (root))
    adw_preferences_window_add_toast (ADW_PREFERENCES_WINDOW (root), adw_toast_new (message));
  else
    g_message ("%s", message);
}

/* Where the value lives, in words. */
static char *
describe_source (const SightCredential *cred)
{
  switch (cred->source)
    {
    case SIGHT_CREDENTIAL_SOURCE_KEYRING:
      return g_strdup (_("in the keyring"));
    case SIGHT_CREDENTIAL_SOURCE_ENV:
      /* Translators: %s is an environment variable's name */
      return g_strdup_printf (_("environment variable %s"), cred->source_arg);
    case SIGHT_CREDENTIAL_SOURCE_FILE:
      /* Translators: %s is a file's path */
      return g_strdup_printf (_("file %s"), cred->source_arg);
    case SIGHT_CREDENTIAL_SOURCE_VALUE:
    default:
      return g_strdup (_("given directly"));
    }
}

static const SightCredential *
lookup (SightCredentialsPage *self,
        const char           *name)
{
  return self->project != NULL
           ? sight_secrets_lookup (sight_project_get_secrets (self->project), name) : NULL;
}

static guint
purpose_index (const char *purpose)
{
  const char * const *purposes = sight_credential_purposes ();

  for (guint i = 0; purposes[i] != NULL; i++)
    if (g_strcmp0 (purposes[i], purpose) == 0)
      return i;
  return 0;
}

static void
edit_cb (GtkButton            *button,
         SightCredentialsPage *self)
{
  const SightCredential *cred = lookup (self, g_object_get_data (G_OBJECT (button), "name"));
  g_autofree char *origins = NULL;

  if (cred == NULL)
    return;
  origins = cred->allowed_origins != NULL ? g_strjoinv (" ", cred->allowed_origins)
                                          : g_strdup ("");
  g_free (self->editing);
  self->editing = g_strdup (cred->name);
  gtk_editable_set_text (GTK_EDITABLE (self->name_row), cred->name);
  adw_combo_row_set_selected (self->purpose_row, purpose_index (cred->purpose));
  gtk_editable_set_text (GTK_EDITABLE (self->origins_row), origins);
  gtk_editable_set_text (GTK_EDITABLE (self->value_row), "");
  adw_preferences_group_set_title (self->form_group, _("Edit Credential"));
  gtk_widget_grab_focus (GTK_WIDGET (self->value_row));
}

static void reload (SightCredentialsPage *self);

static void
end_busy (SightCredentialsPage *self)
{
  g_assert (self->busy > 0);
  self->busy--;
  gtk_widget_set_sensitive (self->save_button, self->busy == 0);
}

static void
remove_from_file (SightCredentialsPage *self,
                  const char           *name)
{
  g_autoptr(GError) error = NULL;

  if (!sight_project_file_remove_credential (self->project_path, name, &error))
    {
      g_autofree char *message = g_strdup_printf (_("Could not write the project file: %s"),
                                                  error->message);

      toast (self, message);
      return;
    }
  reload (self);
  g_signal_emit (self, signals[CHANGED], 0);
}

static void
removed_cb (GObject      *source,
            GAsyncResult *result,
            gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  SightCredentialsPage *self = g_task_get_source_object (task);
  g_autoptr(GError) error = NULL;

  if (g_task_return_error_if_cancelled (task))
    return;
  end_busy (self);
  if (!sight_credential_keyring_clear_finish (result, &error))
    {
      g_autofree char *message = g_strdup_printf (_("Could not remove the value from the "
                                                    "keyring: %s"), error->message);

      toast (self, message);
      return;
    }
  remove_from_file (self, g_task_get_task_data (task));
}

static void
remove_cb (GtkButton            *button,
           SightCredentialsPage *self)
{
  const char *name = g_object_get_data (G_OBJECT (button), "name");
  const SightCredential *cred = lookup (self, name);
  GTask *task;

  if (cred == NULL || self->busy > 0)
    return;
  /* A value kept elsewhere (environment, file, a keyring item of its own)
   * stays there: only the app's own keyring item goes with the credential. */
  if (!sight_credential_keyring_is_own (cred))
    {
      g_autofree char *copy = g_strdup (name);

      remove_from_file (self, copy);
      return;
    }
  task = g_task_new (self, self->cancellable, NULL, NULL);
  g_task_set_task_data (task, g_strdup (name), g_free);
  self->busy++;
  gtk_widget_set_sensitive (self->save_button, FALSE);
  sight_credential_keyring_clear_async (cred, self->cancellable, removed_cb, task);
}

static GtkWidget *
credential_row (SightCredentialsPage  *self,
                const SightCredential *cred)
{
  GtkWidget *row = adw_action_row_new ();
  GtkWidget *edit = gtk_button_new_from_icon_name ("document-edit-symbolic");
  GtkWidget *remove = gtk_button_new_from_icon_name ("user-trash-symbolic");
  g_autofree char *origins = cred->allowed_origins != NULL && cred->allowed_origins[0] != NULL
                               ? g_strjoinv (", ", cred->allowed_origins)
                               : g_strdup (_("no origin"));
  g_autofree char *where = describe_source (cred);
  /* Translators: a credential's purpose, its allowed origins, where its value lives */
  g_autofree char *subtitle = g_strdup_printf (_("%s · %s · %s"), cred->purpose, origins, where);
  g_autofree char *title = g_markup_escape_text (cred->name, -1);
  g_autofree char *escaped = g_markup_escape_text (subtitle, -1);

  gtk_widget_set_name (row, cred->name);
  adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), title);
  adw_action_row_set_subtitle (ADW_ACTION_ROW (row), escaped);
  for (guint i = 0; i < 2; i++)
    {
      GtkWidget *button = i == 0 ? edit : remove;

      gtk_widget_set_valign (button, GTK_ALIGN_CENTER);
      gtk_widget_add_css_class (button, "flat");
      g_object_set_data_full (G_OBJECT (button), "name", g_strdup (cred->name), g_free);
      g_signal_connect_object (button, "clicked", i == 0 ? G_CALLBACK (edit_cb)
                                                        : G_CALLBACK (remove_cb), self, 0);
      adw_action_row_add_suffix (ADW_ACTION_ROW (row), button);
    }
  gtk_widget_set_tooltip_text (edit, _("Edit"));
  gtk_widget_set_tooltip_text (remove, _("Remove"));
  gtk_accessible_update_property (GTK_ACCESSIBLE (edit), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Edit"), -1);
  gtk_accessible_update_property (GTK_ACCESSIBLE (remove), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                  _("Remove"), -1);
  return row;
}

static void
reload (SightCredentialsPage *self)
{
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) names = NULL;
  g_autofree char *description = NULL;
  GtkWidget *child;

  while ((child = gtk_widget_get_first_child (GTK_WIDGET (self->list_box))) != NULL)
    gtk_list_box_remove (self->list_box, child);
  g_clear_pointer (&self->project, sight_project_unref);
  if (self->project_path == NULL)
    return;
  if (g_file_test (self->project_path, G_FILE_TEST_EXISTS))
    self->project = sight_project_load (self->project_path, &error);
  /* Translators: %s is the path of the project file (sightline.json) */
  description = g_strdup_printf (_("In %s. A value entered here is kept in your keyring, never "
                                   "in a file."), self->project_path);
  if (error != NULL)
    {
      g_autofree char *text = g_strdup_printf ("%s\n%s", description, error->message);

      adw_preferences_group_set_description (self->list_group, text);
      return;
    }
  adw_preferences_group_set_description (self->list_group, description);
  names = self->project != NULL
            ? sight_secrets_list_names (sight_project_get_secrets (self->project))
            : g_new0 (char *, 1);
  for (guint i = 0; names[i] != NULL; i++)
    gtk_list_box_append (self->list_box, credential_row (self, lookup (self, names[i])));
  if (names[0] == NULL)
    {
      GtkWidget *row = adw_action_row_new ();

      adw_preferences_row_set_title (ADW_PREFERENCES_ROW (row), _("No credentials yet"));
      adw_action_row_set_subtitle (ADW_ACTION_ROW (row),
                                   _("Add one below, or accept the offer while recording a "
                                     "password"));
      gtk_list_box_append (self->list_box, row);
    }
}

static void
clear_form_cb (SightCredentialsPage *self)
{
  gtk_editable_set_text (GTK_EDITABLE (self->name_row), "");
  gtk_editable_set_text (GTK_EDITABLE (self->origins_row), "");
  gtk_editable_set_text (GTK_EDITABLE (self->value_row), "");
  adw_combo_row_set_selected (self->purpose_row, purpose_index ("password"));
  adw_preferences_group_set_title (self->form_group, _("Add a Credential"));
  g_clear_pointer (&self->editing, g_free);
}

static void
saved_cb (GObject      *source,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(SightCredentialsPage) self = user_data;
  g_autoptr(GError) error = NULL;

  end_busy (self);
  if (!sight_credential_save_finish (result, &error))
    {
      g_autofree char *message = NULL;

      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        return;
      message = g_strdup_printf (_("Could not save the credential: %s"), error->message);
      toast (self, message);
      return;
    }
  toast (self, _("Credential saved; its value is in the keyring"));
  clear_form_cb (self);
  reload (self);
  g_signal_emit (self, signals[CHANGED], 0);
}

static void
save_cb (SightCredentialsPage *self)
{
  g_autofree char *name = g_strstrip (g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->name_row))));
  g_autofree char *value = g_strdup (gtk_editable_get_text (GTK_EDITABLE (self->value_row)));
  const char *origins_text = gtk_editable_get_text (GTK_EDITABLE (self->origins_row));
  g_auto(GStrv) words = g_regex_split_simple ("[\\s,]+", origins_text, 0, 0);
  g_autoptr(GPtrArray) origins = g_ptr_array_new_with_free_func (g_free);
  /* The credential edited, under the name it had: a new name is a rename. */
  const SightCredential *existing = lookup (self, self->editing != NULL ? self->editing : name);
  g_autoptr(SightCredential) cred = NULL;
  guint purpose = adw_combo_row_get_selected (self->purpose_row);

  /* The field forgets the value at once; only the keyring keeps it. */
  gtk_editable_set_text (GTK_EDITABLE (self->value_row), "");
  if (self->project_path == NULL || self->busy > 0)
    goto out;
  if (*name == '\0' || strpbrk (name, " \t\n\"{}") != NULL)
    {
      toast (self, _("A credential needs a name without spaces, quotes or braces"));
      goto out;
    }
  for (guint i = 0; words[i] != NULL; i++)
    {
      char *origin;

      if (*words[i] == '\0')
        continue;
      origin = sight_origin_normalize (words[i]);
      if (origin == NULL)
        {
          /* Translators: %s is what was typed as an origin */
          g_autofree char *message = g_strdup_printf (_("“%s” is not an origin such as "
                                                        "http://127.0.0.1:8765"), words[i]);

          toast (self, message);
          goto out;
        }
      g_ptr_array_add (origins, origin);
    }
  if (origins->len == 0)
    {
      toast (self, _("A credential needs at least one allowed origin"));
      goto out;
    }
  if (self->editing != NULL && !g_str_equal (self->editing, name) && lookup (self, name) != NULL)
    {
      /* Translators: %s is a credential's name */
      g_autofree char *message = g_strdup_printf (_("A credential named “%s” already exists"),
                                                  name);

      toast (self, message);
      goto out;
    }
  if (*value == '\0' && existing == NULL)
    {
      toast (self, _("Enter the credential’s value; it goes to the keyring"));
      goto out;
    }
  g_ptr_array_add (origins, NULL);
  cred = existing != NULL ? sight_credential_copy (existing) : g_new0 (SightCredential, 1);
  g_free (cred->name);
  cred->name = g_strdup (name);
  g_free (cred->purpose);
  cred->purpose = g_strdup (sight_credential_purposes ()[MIN (purpose, 4)]);
  g_strfreev (cred->allowed_origins);
  cred->allowed_origins = (GStrv) g_ptr_array_free (g_steal_pointer (&origins), FALSE);
  if (existing == NULL || *value != '\0')
    {
      /* a value entered here lives in the keyring, under the app's attributes */
      if (!sight_credential_keyring_is_own (cred))
        {
          g_clear_pointer (&cred->keyring_attributes, g_hash_table_unref);
          g_clear_pointer (&cred->source_arg, g_free);
        }
      cred->source = SIGHT_CREDENTIAL_SOURCE_KEYRING;
    }
  /* The app's own item is named by the credential, so it follows a rename
   * (sight_credential_replace_async moves the value). */
  if (existing != NULL && !g_str_equal (existing->name, name) &&
      sight_credential_keyring_is_own (cred))
    g_clear_pointer (&cred->keyring_attributes, g_hash_table_unref);
  self->busy++;
  gtk_widget_set_sensitive (self->save_button, FALSE);
  sight_credential_replace_async (self->project_path, existing, cred,
                                  *value != '\0' ? value : NULL, self->cancellable, saved_cb,
                                  g_object_ref (self));
out:
  memset (value, 0, strlen (value));
}

static void
sight_credentials_page_dispose (GObject *object)
{
  SightCredentialsPage *self = SIGHT_CREDENTIALS_PAGE (object);

  g_cancellable_cancel (self->cancellable);
  g_clear_pointer (&self->project, sight_project_unref);
  G_OBJECT_CLASS (sight_credentials_page_parent_class)->dispose (object);
}

static void
sight_credentials_page_finalize (GObject *object)
{
  SightCredentialsPage *self = SIGHT_CREDENTIALS_PAGE (object);

  g_clear_object (&self->cancellable);
  g_free (self->project_path);
  g_free (self->editing);
  G_OBJECT_CLASS (sight_credentials_page_parent_class)->finalize (object);
}

static void
sight_credentials_page_class_init (SightCredentialsPageClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->dispose = sight_credentials_page_dispose;
  object_class->finalize = sight_credentials_page_finalize;

  signals[CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                   NULL, NULL, NULL, G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/dev/sightline/Sightline/sight-credentials-page.ui");
#define BIND(name) gtk_widget_class_bind_template_child (widget_class, SightCredentialsPage, name)
  BIND (list_group);
  BIND (list_box);
  BIND (form_group);
  BIND (name_row);
  BIND (purpose_row);
  BIND (origins_row);
  BIND (value_row);
  BIND (save_button);
#undef BIND
  gtk_widget_class_bind_template_callback (widget_class, save_cb);
  gtk_widget_class_bind_template_callback (widget_class, clear_form_cb);
}

static void
sight_credentials_page_init (SightCredentialsPage *self)
{
  g_autoptr(GtkStringList) purposes = gtk_string_list_new ((const char * const *)
                                                           sight_credential_purposes ());

  gtk_widget_init_template (GTK_WIDGET (self));
  self->cancellable = g_cancellable_new ();
  adw_combo_row_set_model (self->purpose_row, G_LIST_MODEL (purposes));
  adw_combo_row_set_selected (self->purpose_row, purpose_index ("password"));
}

SightCredentialsPage *
sight_credentials_page_new (void)
{
  return g_object_new (SIGHT_TYPE_CREDENTIALS_PAGE, NULL);
}

void
sight_credentials_page_set_project_path (SightCredentialsPage *self,
                                         const char           *path)
{
  g_return_if_fail (SIGHT_IS_CREDENTIALS_PAGE (self));

  g_free (self->project_path);
  self->project_path = g_strdup (path);
  reload (self);
}

const char *
sight_credentials_page_get_project_path (SightCredentialsPage *self)
{
  g_return_val_if_fail (SIGHT_IS_CREDENTIALS_PAGE (self), NULL);
  return self->project_path;
}

GStrv
sight_credentials_page_list_names (SightCredentialsPage *self)
{
  g_return_val_if_fail (SIGHT_IS_CREDENTIALS_PAGE (self), NULL);

  if (self->project == NULL)
    return g_new0 (char *, 1);
  return sight_secrets_list_names (sight_project_get_secrets (self->project));
}

gboolean
sight_credentials_page_get_busy (SightCredentialsPage *self)
{
  g_return_val_if_fail (SIGHT_IS_CREDENTIALS_PAGE (self), FALSE);
  return self->busy > 0;
}

/* images.c - the runtime images as the engine has them (see images.h).
 *
 * Every box whose backend can start it from an image ID gets the ID its policy reference names
 * at that moment (one image_inspect: 2-14 ms over the Engine API on a busy 2-core host, one
 * `docker image inspect` process, ~0.2 s, for docker-cli), checked against the policy's pin by
 * spec_build: an image rebuilt or retagged under a pinned tag is refused, and the warm pool,
 * whose "same box" test compares the ID, never hands a run a box started from the image the
 * tag named before.
 */
#include "config.h"

#include <string.h>

#include "images.h"
#include "lang.h"
#include "loader.h"
#include "probe.h"

#define LABEL_PREFIX "org.brig." /* what scripts/build-images labels its images with */

void image_info_clear(brig_image_info *info)
{
	strv_free(info->repo_tags);
	strv_free(info->repo_digests);
	strv_free(info->labels);
	memset(info, 0, sizeof *info);
	info->struct_size = sizeof *info;
	info->size = -1;
}

int image_lookup(const loaded_backend *lb, const char *ref, brig_image_info *info, brig_error **err)
{
	image_info_clear(info);
	int (*inspect)(const char *, brig_image_info *, brig_error **) =
		BE_HOOK(lb->be, image_inspect);
	if (inspect) {
		int r = inspect(ref, info, err);
		if (r != 1) /* nothing the plugin may have filled is kept */
			image_info_clear(info);
		return r;
	}
	int (*id_only)(const char *, char *, size_t, brig_error **) = BE_HOOK(lb->be, image_id);
	if (!id_only)
		return brig_fail(err, BRIG_E_UNAVAILABLE, 0, "backend %s cannot look images up",
				 lb->be->name);
	return id_only(ref, info->id, sizeof info->id, err);
}

void image_target(const brig_ctx *ctx, const loaded_backend *lb, brig_language lang,
		  brig_image_info *info, spec_target *t)
{
	image_info_clear(info);
	t->image = NULL;
	const char *ref = (unsigned)lang < BRIG_LANG_COUNT ? ctx->policy->images[lang] : NULL;
	if (!ref || (!(lb->be->features & BRIG_FEATURE_IMAGE_ID) && !policy_image_pin(ref)))
		return;
	cleanup_free char *lookup = policy_image_lookup_ref(ref);
	brig_error *e = NULL;
	int r = image_lookup(lb, lookup, info, &e);
	if (r == 1)
		t->image = info;
	else
		core_debug("images: %s: %s", lookup, r == 0 ? "absent" : e ? e->message : "?");
	brig_error_free(e);
}

void image_targets(const brig_ctx *ctx, const loaded_backend *lb, brig_language lang,
		   box_images *im, spec_target *t)
{
	*im = (box_images){ .box = { .struct_size = sizeof im->box },
			    .holder = { .struct_size = sizeof im->holder } };
	image_target(ctx, lb, lang, &im->box, t);
	t->holder_image = NULL;
	if (!ctx->policy->egress_allow || !ctx->policy->egress_allow[0])
		return;
	if (lang == BRIG_LANG_SHELL) { /* the box's own image, looked up just before */
		t->holder_image = t->image;
		return;
	}
	spec_target ht = *t;
	image_target(ctx, lb, BRIG_LANG_SHELL, &im->holder, &ht);
	t->holder_image = ht.image;
}

void box_images_clear(box_images *im)
{
	image_info_clear(&im->box);
	image_info_clear(&im->holder);
}

void image_probe_target(const brig_ctx *ctx, const loaded_backend *lb, brig_image_info *info,
			spec_target *t)
{
	image_target(ctx, lb, BRIG_LANG_SHELL, info, t);
	const char *ref = ctx->policy->images[BRIG_LANG_SHELL];
	const char *pin = policy_image_pin(ref);
	if (!t->image || !pin || policy_image_pin_holds(ref, info->id, info->repo_digests))
		return;
	/* the tag moved: the pinned image itself, when the engine still has it under its ID */
	brig_image_info pinned = { .struct_size = sizeof pinned };
	brig_error *e = NULL;
	if (image_lookup(lb, pin, &pinned, &e) == 1 && strcmp(pinned.id, pin) == 0) {
		image_info_clear(info);
		*info = pinned;
	} else {
		image_info_clear(&pinned);
	}
	brig_error_free(e);
}

/* ---- the report ------------------------------------------------------------------------------ */

/* The backend to ask: the one runs get, else any available one that can look images up (the
 * images are the engine's, whichever backend asks). */
static loaded_backend *report_backend(brig_ctx *ctx, char **why)
{
	loaded_backend *lb = NULL;
	brig_error *e = NULL;
	*why = NULL;
	if (dispatch_select(ctx, &lb, NULL, &e) == 0 && lb &&
	    (BE_HOOK(lb->be, image_inspect) || BE_HOOK(lb->be, image_id))) {
		brig_error_free(e);
		return lb;
	}
	for (size_t i = 0; i < ctx->n_backends; i++) {
		loaded_backend *c = &ctx->backends[i];
		if ((BE_HOOK(c->be, image_inspect) || BE_HOOK(c->be, image_id)) &&
		    probe_backend(ctx, c, NULL)) {
			brig_error_free(e);
			return c;
		}
	}
	*why = xasprintf("no available backend can look images up%s%s", e ? ": " : "",
			 e ? e->message : "");
	brig_error_free(e);
	return NULL;
}

static json_object *str_or_null(const char *s)
{
	return s && *s ? json_object_new_string(s) : NULL;
}

static json_object *strv_json(char *const *v)
{
	json_object *a = json_object_new_array();
	for (size_t i = 0; v && v[i]; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* brig's own labels (org.brig.*) as an object; images built before build-images labelled them
 * have none. */
static json_object *brig_labels(char *const *labels)
{
	json_object *o = json_object_new_object();
	for (size_t i = 0; labels && labels[i]; i++) {
		const char *eq = strchr(labels[i], '=');
		if (!eq || strncmp(labels[i], LABEL_PREFIX, strlen(LABEL_PREFIX)) != 0)
			continue;
		cleanup_free char *key = xstrndup(labels[i], (size_t)(eq - labels[i]));
		json_object_object_add(o, key, json_object_new_string(eq + 1));
	}
	return o;
}

static const char *label(json_object *labels, const char *key)
{
	json_object *v = NULL;
	return json_object_object_get_ex(labels, key, &v) ? json_object_get_string(v) : NULL;
}

/* What the engine has under the reference, and what that means for runs. */
static void add_found(json_object *o, const char *ref, const brig_image_info *info)
{
	json_object *labels = brig_labels(info->labels);
	json_object_object_add(o, "id", json_object_new_string(info->id));
	json_object_object_add(o, "size",
			       info->size >= 0 ? json_object_new_int64(info->size) : NULL);
	json_object_object_add(o, "created", str_or_null(info->created));
	json_object_object_add(o, "tags", strv_json(info->repo_tags));
	json_object_object_add(o, "digests", strv_json(info->repo_digests));
	json_object_object_add(o, "labelled",
			       json_object_new_boolean(json_object_object_length(labels) > 0));
	json_object_object_add(o, "runtime", str_or_null(label(labels, "org.brig.runtime")));
	json_object_object_add(o, "package", str_or_null(label(labels, "org.brig.package")));
	json_object_object_add(o, "libraries", str_or_null(label(labels, "org.brig.libraries")));
	json_object_object_add(o, "labels", labels);
	bool holds = policy_image_pin_holds(ref, info->id, info->repo_digests);
	json_object_object_add(o, "pin_holds",
			       policy_image_pin(ref) ? json_object_new_boolean(holds) : NULL);
	cleanup_free char *pinned = holds ? policy_image_pinned_ref(ref, info->id) : NULL;
	json_object_object_add(o, "pin_ref", str_or_null(pinned));
	cleanup_free char *why = holds ? NULL : policy_image_mismatch(ref, info->id);
	json_object_object_add(o, "problem", str_or_null(why));
}

static const char *const found_keys[] = { "id",        "size",     "created",   "tags",
					  "digests",   "labelled", "runtime",   "package",
					  "libraries", "labels",   "pin_holds", "pin_ref" };

static json_object *image_report(const brig_ctx *ctx, const loaded_backend *lb, brig_language lang)
{
	const char *ref = ctx->policy->images[lang];
	json_object *o = json_object_new_object();
	json_object_object_add(o, "language", json_object_new_string(brig_language_name(lang)));
	json_object_object_add(o, "image", json_object_new_string(ref));
	json_object_object_add(o, "pinned", json_object_new_boolean(policy_image_pin(ref) != NULL));
	json_object_object_add(o, "pin", str_or_null(policy_image_pin(ref)));
	brig_image_info info = { .struct_size = sizeof info };
	brig_error *e = NULL;
	cleanup_free char *lookup = policy_image_lookup_ref(ref);
	int r = lb ? image_lookup(lb, lookup, &info, &e) : -1;
	json_object_object_add(o, "present", r < 0 ? NULL : json_object_new_boolean(r == 1));
	if (r == 1) {
		add_found(o, ref, &info);
	} else {
		for (size_t i = 0; i < sizeof found_keys / sizeof *found_keys; i++)
			json_object_object_add(o, found_keys[i], NULL);
		/* a rebuild gives a pinned reference another ID: it needs a new pin too */
		const char *why =
			!policy_image_pin(ref)
				? "not in the engine, and brig never pulls: build it with "
				  "scripts/setup-host (or scripts/build-images)"
				: "not in the engine, and brig never pulls: build the image "
				  "(scripts/build-images) and pin the new one (`brig images` "
				  "prints the line)";
		json_object_object_add(o, "problem", r == 0 ? json_object_new_string(why) : NULL);
	}
	json_object_object_add(o, "error", r < 0 && e ? json_object_new_string(e->message) : NULL);
	brig_error_free(e);
	image_info_clear(&info);
	return o;
}

json_object *brig_images_object(brig_ctx *ctx)
{
	char *why = NULL;
	loaded_backend *lb = report_backend(ctx, &why);
	json_object *o = json_object_new_object();
	json_object_object_add(o, "backend", lb ? json_object_new_string(lb->be->name) : NULL);
	json_object_object_add(o, "error", why ? json_object_new_string(why) : NULL);
	json_object_object_add(o, "require_pinned",
			       json_object_new_boolean(ctx->policy->require_pinned));
	json_object *arr = json_object_new_array();
	for (int l = 0; l < BRIG_LANG_COUNT; l++)
		json_object_array_add(arr, image_report(ctx, lb, (brig_language)l));
	json_object_object_add(o, "images", arr);
	free(why);
	return o;
}

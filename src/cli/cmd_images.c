/* cmd_images.c - `brig images`: for each language the image in force, what it is, whether the
 * policy pins it and the reference that would; and the one-line form `brig doctor` prints.
 * Both render brig_images_object, the report sandbox_status gives agents too. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "util.h"

#define ID_SHORT 19 /* "sha256:" and 12 hex digits, as `docker images` shortens an ID */

static const char *label(json_object *im, const char *key)
{
	json_object *labels = NULL;
	json_object_object_get_ex(im, "labels", &labels);
	return cli_str(labels, key, NULL);
}

static bool is_null(json_object *o, const char *key)
{
	json_object *v = NULL;
	return !json_object_object_get_ex(o, key, &v) || !v;
}

/* "2026-12-01T20:41:37Z" of "2026-12-01T20:41:37.167084184Z": seconds are enough to read. */
static void print_created(const char *created)
{
	size_t n = strcspn(created, ".");
	printf(", created %.*s%s\n", (int)n, created, created[n] ? "Z" : "");
}

static void print_packages(json_object *im)
{
	const char *count = label(im, "org.brig.packages.count");
	if (!count)
		return;
	const char *sha = label(im, "org.brig.packages.sha256"),
		   *recipe = label(im, "org.brig.recipe");
	const char *from_list = label(im, "org.brig.pinned");
	printf("  %-10s %s Debian packages from %s, list sha256 %.16s...%s%s; %s\n", "packages",
	       count, label(im, "org.brig.suite") ? label(im, "org.brig.suite") : "?",
	       sha ? sha : "?", recipe ? ", recipe " : "", recipe ? recipe : "",
	       from_list && strcmp(from_list, "true") == 0
		       ? "rebuilt from a package list"
		       : "the mirror's versions when it was built");
}

/* What the image is, from brig's labels; "unknown" for an image that has none. */
static void print_contents(json_object *im)
{
	const char *runtime = cli_str(im, "runtime", NULL);
	const char *package = cli_str(im, "package", NULL);
	if (!runtime) {
		printf("  %-10s unknown: no org.brig.* labels (built by an older "
		       "scripts/build-images; rebuild it to label it)\n",
		       "runtime");
		return;
	}
	printf("  %-10s %s%s%s%s\n", "runtime", runtime, package ? " (Debian package " : "",
	       package ? package : "", package ? ")" : "");
	if (cli_str(im, "libraries", NULL))
		printf("  %-10s %s\n", "libraries", cli_str(im, "libraries", ""));
	print_packages(im);
}

static void print_pin(json_object *im)
{
	const char *lang = cli_str(im, "language", "?"), *pin_ref = cli_str(im, "pin_ref", NULL);
	if (!cli_bool(im, "pinned"))
		printf("  %-10s no\n", "pinned");
	else if (cli_bool(im, "pin_holds"))
		printf("  %-10s yes, %s\n", "pinned", cli_str(im, "pin", "?"));
	else
		printf("  %-10s yes, BROKEN: %s; its runs are refused\n", "pinned",
		       cli_str(im, "problem", "?"));
	if (pin_ref)
		printf("  %-10s \"%s\": \"%s\"\n", "pin", lang, pin_ref);
}

/* Can runs of its language use it as it is: present, and holding its pin if it has one? */
static bool usable(json_object *im)
{
	return cli_bool(im, "present") && (!cli_bool(im, "pinned") || cli_bool(im, "pin_holds"));
}

static void print_image(json_object *im)
{
	printf("%-7s %s\n", cli_str(im, "language", "?"), cli_str(im, "image", "?"));
	if (is_null(im, "present")) {
		printf("  %-10s unknown: %s\n", "state",
		       cli_str(im, "error", "the engine could not be asked"));
		return;
	}
	if (!cli_bool(im, "present")) {
		printf("  %-10s MISSING: %s\n", "state", cli_str(im, "problem", "not present"));
		return;
	}
	printf("  %-10s %s\n", "id", cli_str(im, "id", "?"));
	json_object *size = NULL;
	json_object_object_get_ex(im, "size", &size);
	printf("  %-10s %.1f MB", "size", size ? (double)json_object_get_int64(size) / 1e6 : 0.0);
	print_created(cli_str(im, "created", "?"));
	print_contents(im);
	print_pin(im);
}

int cli_print_image_summary(json_object *images)
{
	int problems = 0;
	for (size_t i = 0; images && i < json_object_array_length(images); i++) {
		json_object *im = json_object_array_get_idx(images, i);
		const char *id = cli_str(im, "id", "");
		printf("  %-7s %-28s ", cli_str(im, "language", "?"), cli_str(im, "image", "?"));
		if (is_null(im, "present"))
			printf("unknown (%s)\n", cli_str(im, "error", "no engine"));
		else if (!cli_bool(im, "present"))
			printf("MISSING\n");
		else if (cli_bool(im, "pinned") && !cli_bool(im, "pin_holds"))
			printf("PIN BROKEN: %s\n", cli_str(im, "problem", "?"));
		else
			printf("present %.*s, %s, %s\n", ID_SHORT, id,
			       cli_str(im, "runtime", "runtime unknown"),
			       cli_bool(im, "pinned") ? "pinned" : "not pinned");
		problems += !usable(im);
	}
	return problems;
}

int cmd_images(int argc, char **argv)
{
	cli_policy_opts o = { 0 };
	bool json = false;
	int r = cli_parse_simple(
		argc, argv, &o, &json,
		"Usage: brig images [--json] [OPTIONS]\n"
		"For each language, the image the policy gives its runs: its ID, size and\n"
		"creation time, the runtime and Debian package it carries (its org.brig.* labels;\n"
		"\"unknown\" for an image built without them), whether it is present, whether the\n"
		"policy pins it, and the reference that pins it, to paste into the policy's\n"
		"\"images\" (with \"require_pinned\": true, tags are refused).  Nothing is\n"
		"pulled and no run is started.  Exit 0 when every image is present and holds\n"
		"its pin, 1 if not.\n"
		"      --json             the report as one JSON object\n\n");
	if (r)
		return r < 0 ? 0 : r;
	brig_ctx *ctx = NULL;
	r = cli_make_ctx(&o, &ctx);
	if (r)
		return r;
	json_object *rep = brig_images_object(ctx), *imgs = NULL;
	json_object_object_get_ex(rep, "images", &imgs);
	int problems = 0;
	for (size_t i = 0; imgs && i < json_object_array_length(imgs); i++) {
		problems += !usable(json_object_array_get_idx(imgs, i));
	}
	if (json) {
		printf("%s\n", json_object_to_json_string_ext(
				       rep, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	} else {
		const char *backend = cli_str(rep, "backend", NULL);
		printf("# asked through backend %s; require_pinned %s\n",
		       backend ? backend : "(none)",
		       cli_bool(rep, "require_pinned") ? "true" : "false");
		if (!backend)
			printf("# %s\n", cli_str(rep, "error", "no backend"));
		for (size_t i = 0; imgs && i < json_object_array_length(imgs); i++) {
			printf("\n");
			print_image(json_object_array_get_idx(imgs, i));
		}
		printf("\n# to pin an image, put its \"pin\" line in the policy's \"images\"\n");
	}
	json_object_put(rep);
	brig_ctx_free(ctx);
	return problems ? 1 : 0;
}

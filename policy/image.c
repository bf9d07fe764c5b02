/* image.c - image references in a policy: which forms are valid, which of them pin an image,
 * what to ask the engine for, and whether what the engine found is what the policy pinned.
 *
 * A reference is a tag (NAME:TAG), or pinned: an image ID (sha256:<64 hex>, what a locally
 * built image has), NAME@sha256:<registry digest>, or NAME:TAG@sha256:<image ID or registry
 * digest>.  The last one names the image twice on purpose: the engine is asked about NAME:TAG,
 * and the run is refused unless that tag still names the pinned image, so an image rebuilt or
 * retagged under the tag is caught (the engine alone would take NAME:TAG@sha256:... as a
 * registry digest and ignore the tag; a locally built image has none).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "util.h"

#define IMAGE_REF_MAX 512
#define REF_ALNUM     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
#define SHA256_PREFIX "sha256:"

static bool is_lower_hex(const char *s, size_t n)
{
	return strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/* "sha256:" and 64 lowercase hex digits. */
static bool is_sha256(const char *s)
{
	return strncmp(s, SHA256_PREFIX, 7) == 0 && is_lower_hex(s + 7, 64);
}

/* Characters of a reference: a strict subset also keeps shell and flag syntax out of argv. */
static const char *bad_ref_char(const char *ref)
{
	for (const char *s = ref; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= 0x20 || c >= 0x7f)
			return "whitespace, a control character or a non-ASCII byte";
		if (!strchr(REF_ALNUM "._-/:@", c))
			return "a character that is not allowed in an image reference";
	}
	return NULL;
}

/* Repository path "[domain[:port]/]comp/comp": no empty component, lowercase components (the
 * engine refuses uppercase), and a ':' only as the port of a leading domain. */
static bool repository_ok(const char *name, size_t len)
{
	if (len == 0 || name[0] == '/' || name[len - 1] == '/')
		return false;
	const char *slash = memchr(name, '/', len);
	size_t first = slash ? (size_t)(slash - name) : len;
	bool domain = slash && (memchr(name, '.', first) || memchr(name, ':', first) ||
				(first == 9 && strncmp(name, "localhost", 9) == 0));
	size_t start = domain ? first + 1 : 0;
	for (size_t i = start; i < len; i++) {
		char c = name[i];
		if (c == ':' || (c >= 'A' && c <= 'Z') || (c == '/' && name[i - 1] == '/'))
			return false;
	}
	return true;
}

static bool tag_ok(const char *tag)
{
	size_t len = strlen(tag);
	return len >= 1 && len <= 128 && strchr(REF_ALNUM "_", tag[0]) &&
	       strspn(tag, REF_ALNUM "_.-") == len;
}

/* The ':' of the tag in NAME (`len` bytes), or NULL: only in the last path component, since
 * "reg:5000/python" has a port and no tag. */
static const char *tag_colon(const char *name, size_t len)
{
	const char *last = name;
	for (size_t i = 0; i < len; i++)
		if (name[i] == '/')
			last = name + i + 1;
	return memchr(last, ':', len - (size_t)(last - name));
}

/* "name@sha256:<64 hex>" (the name may carry a tag too); fills why on failure. */
static int check_digest_ref(const char *ref, const char *at, const char *q, char *why, size_t n)
{
	cleanup_free char *name = xstrndup(ref, (size_t)(at - ref));
	char *colon = (char *)tag_colon(name, strlen(name));
	bool ok = !colon || tag_ok(colon + 1);
	if (colon)
		*colon = '\0';
	if (!ok || !repository_ok(name, strlen(name))) {
		snprintf(why, n, "%s is not a valid image name", q);
		return -1;
	}
	if (!is_sha256(at + 1)) {
		snprintf(why, n,
			 "%s has an invalid digest (write name@sha256:<64 lowercase hex digits>)",
			 q);
		return -1;
	}
	return 0;
}

/* "name:tag" with the tag in the last path component. */
static int check_tag_ref(const char *ref, const char *q, char *why, size_t n)
{
	const char *colon = tag_colon(ref, strlen(ref));
	if (!colon) {
		snprintf(why, n, "%s has no tag or digest (write name:tag or name@sha256:...)", q);
		return -1;
	}
	if (!tag_ok(colon + 1)) {
		snprintf(why, n,
			 "%s has an invalid tag (1 to 128 of A-Z a-z 0-9 _ . -, not starting with "
			 ". or -)",
			 q);
		return -1;
	}
	if (!repository_ok(ref, (size_t)(colon - ref))) {
		snprintf(why, n, "%s is not a valid image name", q);
		return -1;
	}
	return 0;
}

/* Empty, too long, odd characters, or a leading '-' that an argv would take for a flag. */
static const char *bad_ref_text(const char *ref)
{
	if (!*ref)
		return "it is empty";
	if (strlen(ref) > IMAGE_REF_MAX)
		return "it is too long";
	if (ref[0] == '-')
		return "it starts with '-'";
	return bad_ref_char(ref);
}

int policy_check_image(const char *ref, bool require_pinned, char *why, size_t why_len)
{
	cleanup_free char *q = policy_quoted(ref ? ref : "");
	const char *bad = bad_ref_text(ref ? ref : "");
	if (bad) {
		snprintf(why, why_len, "%s is not an image reference: %s", q, bad);
		return -1;
	}
	if (strncmp(ref, SHA256_PREFIX, 7) == 0) {
		if (!is_sha256(ref)) {
			snprintf(why, why_len,
				 "%s is not an image ID (sha256: and 64 lowercase hex digits)", q);
			return -1;
		}
	} else {
		const char *at = strchr(ref, '@');
		if (at && strchr(at + 1, '@')) {
			snprintf(why, why_len, "%s has more than one '@'", q);
			return -1;
		}
		int r = at ? check_digest_ref(ref, at, q, why, why_len)
			   : check_tag_ref(ref, q, why, why_len);
		if (r < 0)
			return r;
	}
	if (require_pinned && !policy_image_pin(ref)) {
		snprintf(why, why_len,
			 "%s is not pinned (require_pinned is true): write NAME:TAG@sha256:<image "
			 "ID> (`brig images` prints it), NAME@sha256:<registry digest> or "
			 "sha256:<image ID>",
			 q);
		return -1;
	}
	return 0;
}

/* ---- pins (on references policy_check_image accepted) --------------------------------------- */

const char *policy_image_pin(const char *ref)
{
	if (is_sha256(ref))
		return ref;
	const char *at = strchr(ref, '@');
	return at && is_sha256(at + 1) ? at + 1 : NULL;
}

char *policy_image_lookup_ref(const char *ref)
{
	const char *at = strchr(ref, '@');
	if (at && tag_colon(ref, (size_t)(at - ref)))
		return xstrndup(ref, (size_t)(at - ref)); /* NAME:TAG: the tag must still hold */
	return xstrdup(ref);
}

/* Only NAME:TAG@sha256:H is looked up by something that may have moved (the tag); every other
 * form is looked up by the content address itself, so what the engine finds is the pinned
 * image.  H may be the image ID or a registry digest of it (the engine lists those as
 * NAME@sha256:H in RepoDigests; a manifest digest determines the image, whatever the NAME). */
bool policy_image_pin_holds(const char *ref, const char *id, char *const *repo_digests)
{
	const char *pin = policy_image_pin(ref);
	cleanup_free char *lookup = policy_image_lookup_ref(ref);
	if (!pin || strcmp(lookup, ref) == 0)
		return true;
	if (id && strcmp(id, pin) == 0)
		return true;
	size_t n = strlen(pin);
	for (size_t i = 0; repo_digests && repo_digests[i]; i++) {
		const char *at = strrchr(repo_digests[i], '@');
		if (at && strlen(at + 1) == n && strcmp(at + 1, pin) == 0)
			return true;
	}
	return false;
}

char *policy_image_pinned_ref(const char *ref, const char *id)
{
	if (policy_image_pin(ref) || !id || !is_sha256(id))
		return xstrdup(ref);
	return xasprintf("%s@%s", ref, id);
}

char *policy_image_mismatch(const char *ref, const char *id)
{
	cleanup_free char *lookup = policy_image_lookup_ref(ref);
	const char *pin = policy_image_pin(ref);
	return xasprintf("%s names image %s now, not the pinned %s (neither its ID nor one of its "
			 "registry digests): the image was rebuilt or the tag moved since it was "
			 "pinned",
			 lookup, id ? id : "(unknown)", pin ? pin : "(none)");
}

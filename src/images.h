/* images.h - the runtime images as the engine has them, asked through a backend's hooks: one
 * lookup for runs, the warm pool, gVisor's smoke box, and the one report `brig images`,
 * `brig doctor` and sandbox_status show (brig_images_object). */
#ifndef BRIG_IMAGES_H
#define BRIG_IMAGES_H

#include "internal.h"

/* Look `ref` up through lb (its image_inspect hook, else image_id: the ID alone): 1 present,
 * *info filled (struct_size set here; free with image_info_clear), 0 absent, < 0 when it could
 * not be asked (no hook, the engine failed). */
int image_lookup(const loaded_backend *lb, const char *ref, brig_image_info *info,
		 brig_error **err);
void image_info_clear(brig_image_info *info);

/* For a box of `lang` through lb: look the policy's reference up and point t->image at *info
 * when the image is there, so that spec_build checks the pin and the box starts from the ID.
 * Skipped (t->image NULL) for a backend that cannot start a box from an ID, unless the
 * reference is pinned (spec_build then refuses that backend); when the image is absent or the
 * engine did not answer, the box starts from the reference and the engine's own error is the
 * run's sandbox_error.  Clear *info after spec_build. */
void image_target(const brig_ctx *ctx, const loaded_backend *lb, brig_language lang,
		  brig_image_info *info, spec_target *t);

/* The images of a box and of its network holder, as looked up for one spec_build. */
typedef struct box_images {
	brig_image_info box;
	brig_image_info holder;
} box_images;

/* image_target for a box of `lang`, and the same for its network holder when the policy has an
 * egress allowlist (the shell image, t->holder_image; a shell box's own answer, not looked up
 * twice).  Clear *im with box_images_clear after spec_build. */
void image_targets(const brig_ctx *ctx, const loaded_backend *lb, brig_language lang,
		   box_images *im, spec_target *t);
void box_images_clear(box_images *im);

/* The same for the gVisor smoke box (shell): when the policy's shell tag moved away from its pin,
 * the smoke box runs in the pinned image itself if the engine still has it, so that whether
 * gVisor works does not depend on a tag (the shell runs themselves are refused by spec_build,
 * with both IDs). */
void image_probe_target(const brig_ctx *ctx, const loaded_backend *lb, brig_image_info *info,
			spec_target *t);

#endif

/* spec-access.h - reading fields appended to brig_spec after ABI 1.0: a host built before them
 * hands a shorter struct, so check its struct_size first. */
#ifndef BRIG_SPEC_ACCESS_H
#define BRIG_SPEC_ACCESS_H

#include <stddef.h>

#include "spec.h"

#define SPEC_HAS(s, field) ((s)->struct_size >= offsetof(brig_spec, field) + sizeof((s)->field))
#define SPEC_GET(s, field) (SPEC_HAS(s, field) ? (s)->field : NULL)

#endif

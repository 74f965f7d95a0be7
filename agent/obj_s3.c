/* obj_s3: the S3 backend of obj.h (work in progress: not wired yet). */
#include <errno.h>

#include "agent/obj_be.h"

static int s3_open(struct obj_store *s)
{
	return -EINVAL;
}

const struct obj_ops obj_s3_ops = {
	.open = s3_open,
};

/* The platform layer: device memory, streams and kernel launch.  Everything specific to a
 * kind of device stays behind this interface; the cpu platform (platform/cpu/) emulates a
 * device with threads: a stream is an ordered queue served by a worker thread and a kernel
 * runs one thread per block. */
#ifndef SHMEMI_PLATFORM_H
#define SHMEMI_PLATFORM_H

#include "aclshmem/types.h"
#include "core/instance.h"

/* Creates inst->default_stream. */
int shmemi_platform_instance_init(shmemi_instance_t *inst);
/* Drains and destroys the instance's streams. */
void shmemi_platform_instance_fini(shmemi_instance_t *inst);

/* The platform's name, "cpu" here. */
const char *shmemi_platform_name(void);

#endif

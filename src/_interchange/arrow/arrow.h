/* dfbuffer: the Arrow C data interface (structs declared from the spec)
 * and the PyCapsule interface, both ways.
 */
#ifndef DFBUFFER_ARROW_H
#define DFBUFFER_ARROW_H

#include "common.h"

/* The Arrow C data and C stream interface structs: declared once, in the
   public C API header (under the spec's standard guards). */
#include "dfbuffer/dfbuffer.h"

/* The Arrow C device data interface (declared from its specification): an
   ArrowArray whose buffers live on a device, and a stream of them.  The
   device type values are DLPack's DLDeviceType values. */
#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
    struct ArrowArray array; /* its release releases everything, the
                                sync_event included */
    int64_t device_id;
    ArrowDeviceType device_type;
    void *sync_event;    /* NULL, or an event to wait on before any access */
    int64_t reserved[3]; /* zero */
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
#define ARROW_C_DEVICE_STREAM_INTERFACE

struct ArrowDeviceArrayStream {
    ArrowDeviceType device_type; /* of every array it gives */
    int (*get_schema)(struct ArrowDeviceArrayStream *,
                      struct ArrowSchema *out);
    int (*get_next)(struct ArrowDeviceArrayStream *,
                    struct ArrowDeviceArray *out);
    const char *(*get_last_error)(struct ArrowDeviceArrayStream *);
    void (*release)(struct ArrowDeviceArrayStream *);
    void *private_data;
};

#endif /* ARROW_C_DEVICE_STREAM_INTERFACE */

#endif /* DFBUFFER_ARROW_H */

/* dfbuffer core: DLPack data types (see dlpack_types.h). */
#include "dlpack_types.h"
#include "format.h"

#include <dlpack/dlpack.h>

int
dfb_dlpack_typestr(uint8_t code, uint8_t bits, uint16_t lanes, char *buf,
                   size_t size)
{
    char kind;
    if (lanes != 1) {
        return -1;
    }
    switch (code) {
        case kDLInt:
        case kDLUInt:
            if (bits != 8 && bits != 16 && bits != 32 && bits != 64) {
                return -1;
            }
            kind = code == kDLInt ? 'i' : 'u';
            break;
        case kDLFloat:
            if (bits != 16 && bits != 32 && bits != 64) {
                return -1;
            }
            kind = 'f';
            break;
        case kDLComplex:
            if (bits != 64 && bits != 128) {
                return -1;
            }
            kind = 'c';
            break;
        case kDLBool:
            if (bits != 8) {
                return -1;
            }
            kind = 'b';
            break;
        default:
            return -1;
    }
    return dfb_typestr_put(buf, size, bits == 8 ? '|' : '=', kind, bits / 8) >
                   0
               ? 0
               : -1;
}

int
dfb_dlpack_from_numpy(char kind, int itemsize, uint8_t *code, uint8_t *bits)
{
    if (itemsize <= 0 || itemsize > 31) {
        return -1; /* 8 * itemsize must fit DLDataType.bits */
    }
    switch (kind) {
        case 'b':
            *code = kDLBool;
            break;
        case 'i':
            *code = kDLInt;
            break;
        case 'u':
            *code = kDLUInt;
            break;
        case 'f':
            if (itemsize != 2 && itemsize != 4 && itemsize != 8) {
                return -1;
            }
            *code = kDLFloat;
            break;
        case 'c':
            if (itemsize != 8 && itemsize != 16) {
                return -1;
            }
            *code = kDLComplex;
            break;
        default:
            return -1;
    }
    *bits = (uint8_t)(8 * itemsize);
    return 0;
}

/* Every device type DLPack names: its DeviceType member name, and the name
   messages use. */
static const struct {
    int type;
    const char *member, *human;
} device_names[] = {
    {kDLCPU, "CPU", "CPU"},
    {kDLCUDA, "CUDA", "CUDA"},
    {kDLCUDAHost, "CUDA_HOST", "CUDA host (pinned)"},
    {kDLOpenCL, "OPENCL", "OpenCL"},
    {kDLVulkan, "VULKAN", "Vulkan"},
    {kDLMetal, "METAL", "Metal"},
    {kDLVPI, "VPI", "VPI"},
    {kDLROCM, "ROCM", "ROCm"},
    {kDLROCMHost, "ROCM_HOST", "ROCm host (pinned)"},
    {kDLExtDev, "EXT_DEV", "ext_dev"},
    {kDLCUDAManaged, "CUDA_MANAGED", "CUDA managed"},
    {kDLOneAPI, "ONE_API", "oneAPI"},
    {kDLWebGPU, "WEBGPU", "WebGPU"},
    {kDLHexagon, "HEXAGON", "Hexagon"},
    {kDLMAIA, "MAIA", "MAIA"},
    {kDLTrn, "TRN", "Trainium"},
};

int
dfb_dlpack_host_readable(int type)
{
    return type == kDLCPU || type == kDLCUDAHost || type == kDLROCMHost ||
           type == kDLCUDAManaged;
}

const char *
dfb_dlpack_device_name(int type, int human)
{
    for (size_t i = 0; i < sizeof(device_names) / sizeof(device_names[0]);
         i++) {
        if (device_names[i].type == type) {
            return human ? device_names[i].human : device_names[i].member;
        }
    }
    return NULL;
}

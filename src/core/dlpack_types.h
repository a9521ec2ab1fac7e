/* dfbuffer core: DLPack data types to and from NumPy type strings (pure C,
 * no Python; DLPack's type codes from dlpack/dlpack.h).
 */
#ifndef DFBUFFER_CORE_DLPACK_TYPES_H
#define DFBUFFER_CORE_DLPACK_TYPES_H

#include <stddef.h>
#include <stdint.h>

/* Writes the NumPy type string ("=i8", "|b1", "=c16", ...) of the DLPack
   type (code, bits, lanes) into buf (size >= 8).  Returns 0, or -1 for a
   type NumPy has no equivalent of here (lanes != 1, bfloat, the float8 /
   float6 / float4 codes, opaque handles, other widths). */
int
dfb_dlpack_typestr(uint8_t code, uint8_t bits, uint16_t lanes, char *buf,
                   size_t size);

/* Stores the DLPack type code and bit width of a native-order NumPy dtype
   given by kind letter and item size ('b' 1 -> kDLBool 8, 'i' / 'u' any
   size, 'f' 2/4/8, 'c' 8/16) in *code and *bits (lanes are 1).  Returns 0,
   or -1 for kinds DLPack cannot describe (datetimes, objects, strings,
   other widths). */
int
dfb_dlpack_from_numpy(char kind, int itemsize, uint8_t *code, uint8_t *bits);

/* Returns the name of DLPack device type `type`: its dfbuffer.DeviceType
   member name ("CPU", "CUDA_HOST", ...) when `human` is 0, else the name
   messages use ("CPU", "CUDA host (pinned)", ...).  NULL for a type
   outside the table. */
const char *
dfb_dlpack_device_name(int type, int human);

/* Returns 1 if the host can read the memory of DLPack device type `type`
   directly (the CPU, CUDA and ROCm pinned host memory, CUDA managed
   memory), else 0: THE host-readable-device predicate of dfbuffer.  Cannot
   fail. */
int
dfb_dlpack_host_readable(int type);

#endif /* DFBUFFER_CORE_DLPACK_TYPES_H */

/* C unit tests of DLPack type codes against NumPy typestrs in both directions
 * (src/core/dlpack_types.c).
 * Run by `meson test`; exits non-zero if any check fails.
 */
#include "dlpack_types.h"

#include <dlpack/dlpack.h>

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* DLPack (code, bits, lanes) <-> NumPy typestr, both directions. */
static void
test_dlpack_types(void)
{
    static const struct {
        uint8_t code, bits;
        char kind;
        const char *typestr;
    } ok[] = {{kDLInt, 8, 'i', "|i1"},        {kDLInt, 16, 'i', "=i2"},
              {kDLInt, 32, 'i', "=i4"},       {kDLInt, 64, 'i', "=i8"},
              {kDLUInt, 8, 'u', "|u1"},       {kDLUInt, 16, 'u', "=u2"},
              {kDLUInt, 32, 'u', "=u4"},      {kDLUInt, 64, 'u', "=u8"},
              {kDLFloat, 16, 'f', "=f2"},     {kDLFloat, 32, 'f', "=f4"},
              {kDLFloat, 64, 'f', "=f8"},     {kDLComplex, 64, 'c', "=c8"},
              {kDLComplex, 128, 'c', "=c16"}, {kDLBool, 8, 'b', "|b1"}};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        char ts[8];
        uint8_t code = 99, bits = 0;
        CHECK(dfb_dlpack_typestr(ok[i].code, ok[i].bits, 1, ts, sizeof(ts)) ==
              0);
        CHECK_STR(ts, ok[i].typestr);
        CHECK(dfb_dlpack_from_numpy(ok[i].kind, ok[i].bits / 8, &code,
                                    &bits) == 0);
        CHECK(code == ok[i].code && bits == ok[i].bits);
    }
    char ts[8];
    CHECK(dfb_dlpack_typestr(kDLInt, 32, 4, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLInt, 24, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLFloat, 8, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLBfloat, 16, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLComplex, 32, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLBool, 1, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLOpaqueHandle, 64, 1, ts, sizeof(ts)) < 0);
    CHECK(dfb_dlpack_typestr(kDLComplex, 128, 1, ts, 4) < 0);
    uint8_t code, bits;
    CHECK(dfb_dlpack_from_numpy('M', 8, &code, &bits) < 0);
    /* device names: DeviceType member names and message names */
    CHECK_STR(dfb_dlpack_device_name(kDLCPU, 0), "CPU");
    CHECK_STR(dfb_dlpack_device_name(kDLCUDAHost, 0), "CUDA_HOST");
    CHECK_STR(dfb_dlpack_device_name(kDLCUDAHost, 1), "CUDA host (pinned)");
    CHECK_STR(dfb_dlpack_device_name(kDLTrn, 0), "TRN");
    CHECK_STR(dfb_dlpack_device_name(kDLTrn, 1), "Trainium");
    CHECK(dfb_dlpack_device_name(12345, 0) == NULL);
    CHECK(dfb_dlpack_device_name(-1, 1) == NULL);
    /* the one host-readable-device predicate */
    CHECK(dfb_dlpack_host_readable(kDLCPU) &&
          dfb_dlpack_host_readable(kDLCUDAHost));
    CHECK(dfb_dlpack_host_readable(kDLROCMHost) &&
          dfb_dlpack_host_readable(kDLCUDAManaged));
    CHECK(!dfb_dlpack_host_readable(kDLCUDA) &&
          !dfb_dlpack_host_readable(kDLROCM));
    CHECK(!dfb_dlpack_host_readable(kDLOneAPI) &&
          !dfb_dlpack_host_readable(0));
    CHECK(!dfb_dlpack_host_readable(-1) && !dfb_dlpack_host_readable(12345));
    CHECK(dfb_dlpack_from_numpy('f', 16, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('c', 32, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('O', 8, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('i', 0, &code, &bits) < 0);
    CHECK(dfb_dlpack_from_numpy('V', 16, &code, &bits) < 0);
}

int
main(void)
{
    test_dlpack_types();
    return check_report("test_dlpack_types");
}

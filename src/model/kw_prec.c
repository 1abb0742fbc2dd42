/* kw_prec.c - precision names and element sizes (src/model-facts.md#precision). */
#include <string.h>

#include "kw_model.h"

static const char *const kw_prec_names[KW_PREC_COUNT] = {
    "fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8",
};

/* Storage bytes per element: IEEE binary32 4, bfloat16/binary16 2, OCP fp8 and int8 1. */
static const int kw_prec_elem_bytes[KW_PREC_COUNT] = {4, 2, 2, 1, 1, 1};

int kw_prec_parse(const char *name)
{
    for (int i = 0; i < KW_PREC_COUNT; i++)
        if (strcmp(name, kw_prec_names[i]) == 0)
            return i;
    return -1;
}

const char *kw_prec_name(kw_prec p)
{
    return (p >= 0 && p < KW_PREC_COUNT) ? kw_prec_names[p] : "?";
}

int kw_prec_bytes(kw_prec p)
{
    return (p >= 0 && p < KW_PREC_COUNT) ? kw_prec_elem_bytes[p] : 4;
}

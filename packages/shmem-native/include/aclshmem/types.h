/*
 * aclshmem/types.h - constants, enums and structures of the public API.
 *
 * Plain C11: no C++ default arguments or references, so that a C compiler and,
 * after preprocessing, cffi can both read it.  Values match the Ascend SHMEM API.
 */
#ifndef ACLSHMEM_TYPES_H
#define ACLSHMEM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ACLSHMEM_HOST_API __attribute__((visibility("default")))
#else
#define ACLSHMEM_HOST_API
#endif

/* ---- versions and limits ---------------------------------------------- */
#define ACLSHMEM_MAJOR_VERSION 1
#define ACLSHMEM_MINOR_VERSION 1
#define ACLSHMEM_VENDOR_MAJOR_VER 1
#define ACLSHMEM_VENDOR_MINOR_VER 1
#define ACLSHMEM_VENDOR_PATCH_VER 1
#define ACLSHMEM_MAX_NAME_LEN 256
#define ACLSHMEM_MAX_IP_PORT_LEN 64
#define ACLSHMEM_UNIQUE_ID_INNER_LEN 124
#define ACLSHMEM_UNIQUEID_VERSION 65672 /* (1 << 16) + sizeof(aclshmemx_uniqueid_t) */
#define ACLSHMEM_DEFAULT_TIMEOUT 120    /* seconds */
#define ACLSHMEM_MAX_PES 16384
#define ACLSHMEM_MAX_TEAMS 2048
#define ACLSHMEM_MAX_LOCAL_SIZE (40ULL * 1024 * 1024 * 1024)
#define ACLSHMEM_MAX_INSTANCES 255
#define ACLSHMEM_MAX_QP_NUM 32
#define ACLSHMEM_SIGNAL_SIZE 8
#define ACLSHMEM_PAGE_SIZE (2ULL * 1024 * 1024)
#define ACLSHMEM_CYCLE_PROF_MAX_BLOCK 64
#define ACLSHMEM_CYCLE_PROF_FRAME_CNT 1024

/* ---- error codes ------------------------------------------------------ */
typedef enum {
    ACLSHMEM_SUCCESS = 0,
    ACLSHMEM_INVALID_PARAM = -1,
    ACLSHMEM_INVALID_VALUE = -2,
    ACLSHMEM_SMEM_ERROR = -3,
    ACLSHMEM_INNER_ERROR = -4,
    ACLSHMEM_NOT_INITED = -5,
    ACLSHMEM_BOOTSTRAP_ERROR = -6,
    ACLSHMEM_TIMEOUT_ERROR = -7,
    ACLSHMEM_MALLOC_FAILED = -8,
    ACLSHMEM_DL_FUNC_FAILED = -9,
    ACLSHMEM_INNER_TIMEOUT = -10,
    ACLSHMEM_UNDER_API_UNLOAD = -11,
    ACLSHMEM_NOT_SUPPORTED = -100
} aclshmem_error_code_t;

/* ---- init --------------------------------------------------------------- */
/* Bootstrap flags of aclshmemx_init_attr. */
typedef enum {
    ACLSHMEMX_INIT_WITH_DEFAULT = 1 << 0, /* attr.ip_port = "tcp://ip:port" */
    ACLSHMEMX_INIT_WITH_MPI = 1 << 1,     /* not available on this platform */
    ACLSHMEMX_INIT_WITH_UNIQUEID = 1 << 3 /* attr.comm_args = aclshmemx_uniqueid_t * */
} aclshmemx_bootstrap_t;
#define ACLSHMEMX_INIT_MAX 0x80000000U

typedef enum {
    ACLSHMEM_STATUS_NOT_INITIALIZED = 0,
    ACLSHMEM_STATUS_SHM_CREATED = 1,
    ACLSHMEM_STATUS_IS_INITIALIZED = 2,
    ACLSHMEM_STATUS_INVALID = 0x7fffffff
} aclshmemx_init_status_t;

typedef enum {
    ACLSHMEM_TRANSPORT_MTE = 1 << 0,
    ACLSHMEM_TRANSPORT_ROCE = 1 << 1,
    ACLSHMEM_TRANSPORT_SDMA = 1 << 2,
    ACLSHMEM_TRANSPORT_UDMA = 1 << 3
} aclshmem_transport_t;

/* Data engines, a bitmask. */
typedef enum {
    ACLSHMEM_DATA_OP_MTE = 0x01,
    ACLSHMEM_DATA_OP_SDMA = 0x02,
    ACLSHMEM_DATA_OP_ROCE = 0x04,
    ACLSHMEM_DATA_OP_UDMA = 0x08,
    ACLSHMEM_DATA_OP_MAX = 0x08
} data_op_engine_type_t;

typedef struct {
    int version;
    data_op_engine_type_t data_op_engine_type;
    uint32_t shm_init_timeout;          /* seconds */
    uint32_t shm_create_timeout;        /* seconds */
    uint32_t control_operation_timeout; /* seconds */
    int32_t sockFd;
} aclshmem_init_optional_attr_t;

#define ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION ((1 << 16) + (int)sizeof(aclshmem_init_optional_attr_t))

typedef struct aclshmemx_init_attr_t {
    int my_pe;
    int n_pes;
    char ip_port[ACLSHMEM_MAX_IP_PORT_LEN];
    uint64_t local_mem_size;
    aclshmem_init_optional_attr_t option_attr;
    void *comm_args;      /* UNIQUEID / DEFAULT: aclshmemx_uniqueid_t * */
    uint64_t instance_id; /* 0 .. 254 */
} aclshmemx_init_attr_t;

/* C has no default member initialisers: start from this and fill in the rest. */
#define ACLSHMEMX_INIT_ATTR_INITIALIZER                                                        \
    { 0, 0, {0}, 0,                                                                            \
      { ACLSHMEM_INIT_OPTIONAL_ATTR_VERSION, ACLSHMEM_DATA_OP_MTE, ACLSHMEM_DEFAULT_TIMEOUT,   \
        ACLSHMEM_DEFAULT_TIMEOUT, ACLSHMEM_DEFAULT_TIMEOUT, -1 },                              \
      NULL, 0 }

/* The 136-byte unique ID.  internal[] is opaque (PE 0's address and the job secret). */
typedef struct {
    int32_t version;
    int my_pe;
    int n_pes;
    char internal[ACLSHMEM_UNIQUE_ID_INNER_LEN];
} aclshmemx_uniqueid_t;

#define ACLSHMEM_UNIQUEID_INITIALIZER { ACLSHMEM_UNIQUEID_VERSION, 0, 0, {0} }

/* Decrypts an encrypted TLS private-key password.  Returns 0 on success. */
typedef int (*aclshmem_decrypt_handler)(const char *cipher, size_t cipher_len,
                                        char *plain, size_t *plain_len);

/* ---- 16-bit floating-point storage types -------------------------------- */
/* The bit pattern of an IEEE 754 binary16 ("half") or a bfloat16 number (the upper half
 * of a binary32).  They are storage types: the library converts to float, computes and
 * rounds back to nearest even where an operation does arithmetic (atomic add). */
typedef uint16_t aclshmem_half_t;
typedef uint16_t aclshmem_bfloat16_t;

/* ---- memory ------------------------------------------------------------- */
typedef enum { HOST_SIDE = 0, DEVICE_SIDE = 1 } aclshmem_mem_type_t;

/* ---- signals and comparisons -------------------------------------------- */
typedef enum { ACLSHMEM_SIGNAL_SET = 0, ACLSHMEM_SIGNAL_ADD = 1 } aclshmem_signal_op_type_t;

typedef enum {
    ACLSHMEM_CMP_EQ = 0,
    ACLSHMEM_CMP_NE = 1,
    ACLSHMEM_CMP_GT = 2,
    ACLSHMEM_CMP_GE = 3,
    ACLSHMEM_CMP_LT = 4,
    ACLSHMEM_CMP_LE = 5
} aclshmem_cmp_op_type_t;

typedef enum { NO_NBI = 0, NBI = 1 } aclshmem_block_mode_t;

/* ---- teams -------------------------------------------------------------- */
typedef enum { ACLSHMEM_TEAM_INVALID = -1, ACLSHMEM_TEAM_WORLD = 0 } aclshmem_team_index_t;
typedef int aclshmem_team_t;
typedef uint64_t aclshmemx_team_uniqueid_t;

typedef struct {
    int32_t version;
    int32_t num_contexts;
    aclshmemx_team_uniqueid_t uniqueid;
    char padding[48];
} aclshmem_team_config_t; /* 64 bytes */

/* A team-scoped handle for aclshmemx_handle_wait. */
typedef struct {
    aclshmem_team_t team_id;
} aclshmem_handle_t;

/* ---- streams, instances, engines, profiling ----------------------------- */
/* A stream handle.  On the cpu platform it is the address of an emulated stream;
 * NULL is the active instance's default stream. */
typedef void *aclrtStream;

/* A kernel body: runs once per block, on its own thread. */
typedef void (*aclshmemx_kernel_fn)(uint32_t block_idx, uint32_t block_dim, void *arg);

typedef struct {
    uint64_t id;
    void *instance;
} aclshmem_instance_ctx;

typedef struct {
    int64_t aclshmem_ub;
    uint32_t ub_size;
    uint32_t sync_id;
} aclshmem_ub_config_t;

typedef struct {
    int64_t ccount[ACLSHMEM_CYCLE_PROF_FRAME_CNT];
    int64_t cycles[ACLSHMEM_CYCLE_PROF_FRAME_CNT];
} aclshmem_prof_block_t;

typedef struct {
    int32_t pe_id; /* -1 on PEs that are not profiled */
    aclshmem_prof_block_t block_prof[ACLSHMEM_CYCLE_PROF_MAX_BLOCK];
} aclshmem_prof_pe_t;

/* ---- the library's description (aclshmemx_describe) --------------------- */
/* The transports a PE reaches other PEs through, as bits of a mask. */
typedef enum {
    ACLSHMEMX_TRANSPORT_SHM = 1 << 0, /* shared memory: the PEs of this node (and itself) */
    ACLSHMEMX_TRANSPORT_UCX = 1 << 1  /* the UCX plug-in (libaclshmem_ucx.so): PEs on other nodes */
} aclshmemx_transport_kind_t;

/* Flags of aclshmemx_describe. */
typedef enum {
    ACLSHMEMX_DESCRIBE_NO_LOAD = 1 << 0 /* do not load the UCX plug-in only to describe it */
} aclshmemx_describe_flags_t;

/* Whether the UCX plug-in is loaded, and if not, why. */
typedef enum {
    ACLSHMEMX_PLUGIN_LOADED = 0,       /* loaded and of this library's build: usable */
    ACLSHMEMX_PLUGIN_NOT_LOADED_YET = 1, /* not looked for yet (ACLSHMEMX_DESCRIBE_NO_LOAD) */
    ACLSHMEMX_PLUGIN_DISABLED = 2,     /* SHMEM_UCX_PLUGIN=none */
    ACLSHMEMX_PLUGIN_NOT_FOUND = 3,    /* no file at path */
    ACLSHMEMX_PLUGIN_LOAD_FAILED = 4,  /* the dynamic loader refused it: reason is its error */
    ACLSHMEMX_PLUGIN_NOT_A_PLUGIN = 5, /* it loads but has no plug-in entry */
    ACLSHMEMX_PLUGIN_MISMATCH = 6      /* built for another libaclshmem version or plug-in ABI */
} aclshmemx_plugin_status_t;

/* The UCX plug-in, as libaclshmem sees it.  The strings live as long as the process.
 * name, version and abi are what the plug-in says of itself (also one of another build).
 * data_plane: the data plane this environment selects ("am (UCX_TLS=tcp ...); socket
 * filter on") once the plug-in is loaded, or why the environment is invalid. */
typedef struct {
    aclshmemx_plugin_status_t status;
    int from_env;         /* 1: path is SHMEM_UCX_PLUGIN's; 0: the file beside libaclshmem */
    int abi;              /* the plug-in's ABI (0: unknown) */
    int expected_abi;     /* the plug-in ABI this library loads */
    const char *path;     /* the file it loads or would load ("" when disabled) */
    const char *name;     /* "UCX 1.13.1" (NULL when the file has no plug-in entry) */
    const char *version;  /* the libaclshmem version it was built for (NULL: unknown) */
    const char *reason;   /* why it is not loaded ("" when it is) */
    int data_plane_error; /* 1: data_plane says why this environment is invalid */
    char data_plane[256]; /* "" until the plug-in is loaded */
} aclshmemx_plugin_info_t;

/* What aclshmemx_describe fills.  Set size to sizeof(aclshmemx_description_t) first (or
 * start from ACLSHMEMX_DESCRIPTION_INITIALIZER): later versions of the library append
 * fields and fill only the first size bytes, and write back how many they filled.
 * transports_available: the aclshmemx_transport_kind_t bits a job would use (shm, and UCX
 * for PEs on other nodes when the plug-in loads); transports_in_use: the active
 * instance's. */
typedef struct {
    size_t size;                   /* in: the caller's sizeof; out: the bytes filled */
    const char *version;           /* this library's version, "1.1.1" */
    const char *library_path;      /* this library's file as the dynamic loader names it */
    int initialized;               /* 1: an instance is active and transports_in_use is its */
    int my_pe;                     /* the active instance's PE (-1 before init) */
    int n_pes;                     /* its PE count (-1 before init) */
    uint32_t transports_available; /* what a job would use */
    uint32_t transports_in_use;    /* what the active instance uses (0 before init) */
    aclshmemx_plugin_info_t ucx;   /* the UCX plug-in */
} aclshmemx_description_t;

#define ACLSHMEMX_DESCRIPTION_INITIALIZER { .size = sizeof(aclshmemx_description_t) }

/* ---- type tables for the generated families ----------------------------- */
/* X(NAME, TYPE): the element types of the typed RMA families. */
#define ACLSHMEM_RMA_TYPES(X)                                                                  \
    X(float, float) X(double, double) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t)       \
    X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t)                \
    X(uint64, uint64_t) X(char, char) X(half, aclshmem_half_t) X(bfloat16, aclshmem_bfloat16_t)

/* X(NAME, TYPE): the element types of the point-to-point wait/test families (no double). */
#define ACLSHMEM_P2P_SYNC_TYPES(X)                                                             \
    X(float, float) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) X(int64, int64_t)      \
    X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t) X(char, char)

/* X(NAME, TYPE): the element types of the atomic memory operations (aclshmem/amo.h).
 * Integers take every operation; float and double the arithmetic ones and compare_swap;
 * half and bfloat16 add, fetch_add, set, fetch and swap. */
#define ACLSHMEM_AMO_INT_TYPES(X)                                                              \
    X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t)    \
    X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t)
#define ACLSHMEM_AMO_FLOAT_TYPES(X) X(float, float) X(double, double)
#define ACLSHMEM_AMO_HALF_TYPES(X) X(half, aclshmem_half_t) X(bfloat16, aclshmem_bfloat16_t)

/* X(BITS): the element widths of the sized RMA families. */
#define ACLSHMEM_RMA_SIZES(X) X(8) X(16) X(32) X(64) X(128)

/* X(NAME, TYPE): the element types of the collectives that move data (aclshmem/coll.h:
 * broadcast, collect, fcollect, alltoall, alltoalls): OpenSHMEM 1.5's standard types, half
 * and bfloat16. */
#define ACLSHMEM_COLL_TYPES(X)                                                                 \
    X(float, float) X(double, double) X(longdouble, long double) X(char, char)                 \
    X(schar, signed char) X(short, short) X(int, int) X(long, long) X(longlong, long long)     \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                    \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)                  \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)              \
    X(half, aclshmem_half_t) X(bfloat16, aclshmem_bfloat16_t)

/* X(NAME, TYPE): the element types of the and, or and xor reductions (OpenSHMEM 1.5's
 * table: unsigned and fixed-width integers). */
#define ACLSHMEM_REDUCE_BITWISE_TYPES(X)                                                       \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                    \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)                  \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)

/* X(NAME, TYPE): the element types of the min and max reductions (every integer and real
 * floating type of OpenSHMEM 1.5's table, half and bfloat16). */
#define ACLSHMEM_REDUCE_MINMAX_TYPES(X)                                                        \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) X(long, long)              \
    X(longlong, long long) X(ptrdiff, ptrdiff_t) X(uchar, unsigned char)                       \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)                    \
    X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t)       \
    X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t)                \
    X(uint64, uint64_t) X(size, size_t) X(float, float) X(double, double)                      \
    X(longdouble, long double) X(half, aclshmem_half_t) X(bfloat16, aclshmem_bfloat16_t)

/* X(NAME, TYPE): the element types of the sum and prod reductions: those of min and max,
 * and the complex types. */
#define ACLSHMEM_REDUCE_ARITH_TYPES(X)                                                         \
    ACLSHMEM_REDUCE_MINMAX_TYPES(X) X(complexf, float _Complex) X(complexd, double _Complex)

#ifdef __cplusplus
}
#endif
#endif /* ACLSHMEM_TYPES_H */

/* The C declarations of libaclshmem that shmem-core binds (cffi's cdef). Generated from the public headers (packages/shmem-native/include) by `python -m shmem._abi_build`: do not edit. */
/* aclshmem/types.h */
typedef enum
{
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
typedef enum
{
  ACLSHMEMX_INIT_WITH_DEFAULT = 1 << 0,
  ACLSHMEMX_INIT_WITH_MPI = 1 << 1,
  ACLSHMEMX_INIT_WITH_UNIQUEID = 1 << 3
} aclshmemx_bootstrap_t;
typedef enum
{
  ACLSHMEM_STATUS_NOT_INITIALIZED = 0,
  ACLSHMEM_STATUS_SHM_CREATED = 1,
  ACLSHMEM_STATUS_IS_INITIALIZED = 2,
  ACLSHMEM_STATUS_INVALID = 0x7fffffff
} aclshmemx_init_status_t;
typedef enum
{
  ACLSHMEM_TRANSPORT_MTE = 1 << 0,
  ACLSHMEM_TRANSPORT_ROCE = 1 << 1,
  ACLSHMEM_TRANSPORT_SDMA = 1 << 2,
  ACLSHMEM_TRANSPORT_UDMA = 1 << 3
} aclshmem_transport_t;
typedef enum
{
  ACLSHMEM_DATA_OP_MTE = 0x01,
  ACLSHMEM_DATA_OP_SDMA = 0x02,
  ACLSHMEM_DATA_OP_ROCE = 0x04,
  ACLSHMEM_DATA_OP_UDMA = 0x08,
  ACLSHMEM_DATA_OP_MAX = 0x08
} data_op_engine_type_t;
typedef struct
{
  int version;
  data_op_engine_type_t data_op_engine_type;
  uint32_t shm_init_timeout;
  uint32_t shm_create_timeout;
  uint32_t control_operation_timeout;
  int32_t sockFd;
} aclshmem_init_optional_attr_t;
typedef struct aclshmemx_init_attr_t
{
  int my_pe;
  int n_pes;
  char ip_port[64];
  uint64_t local_mem_size;
  aclshmem_init_optional_attr_t option_attr;
  void *comm_args;
  uint64_t instance_id;
} aclshmemx_init_attr_t;
typedef struct
{
  int32_t version;
  int my_pe;
  int n_pes;
  char internal[124];
} aclshmemx_uniqueid_t;
typedef int (*aclshmem_decrypt_handler)(const char *cipher, size_t cipher_len, char *plain, size_t *plain_len);
typedef uint16_t aclshmem_half_t;
typedef uint16_t aclshmem_bfloat16_t;
typedef enum
{
  HOST_SIDE = 0,
  DEVICE_SIDE = 1
} aclshmem_mem_type_t;
typedef enum
{
  ACLSHMEM_SIGNAL_SET = 0,
  ACLSHMEM_SIGNAL_ADD = 1
} aclshmem_signal_op_type_t;
typedef enum
{
  ACLSHMEM_CMP_EQ = 0,
  ACLSHMEM_CMP_NE = 1,
  ACLSHMEM_CMP_GT = 2,
  ACLSHMEM_CMP_GE = 3,
  ACLSHMEM_CMP_LT = 4,
  ACLSHMEM_CMP_LE = 5
} aclshmem_cmp_op_type_t;
typedef enum
{
  NO_NBI = 0,
  NBI = 1
} aclshmem_block_mode_t;
typedef enum
{
  ACLSHMEM_TEAM_INVALID = -1,
  ACLSHMEM_TEAM_WORLD = 0
} aclshmem_team_index_t;
typedef int aclshmem_team_t;
typedef uint64_t aclshmemx_team_uniqueid_t;
typedef struct
{
  int32_t version;
  int32_t num_contexts;
  aclshmemx_team_uniqueid_t uniqueid;
  char padding[48];
} aclshmem_team_config_t;
typedef struct
{
  aclshmem_team_t team_id;
} aclshmem_handle_t;
typedef void *aclrtStream;
typedef void (*aclshmemx_kernel_fn)(uint32_t block_idx, uint32_t block_dim, void *arg);
typedef struct
{
  uint64_t id;
  void *instance;
} aclshmem_instance_ctx;
typedef struct
{
  int64_t aclshmem_ub;
  uint32_t ub_size;
  uint32_t sync_id;
} aclshmem_ub_config_t;
typedef struct
{
  int64_t ccount[1024];
  int64_t cycles[1024];
} aclshmem_prof_block_t;
typedef struct
{
  int32_t pe_id;
  aclshmem_prof_block_t block_prof[64];
} aclshmem_prof_pe_t;
typedef enum
{
  ACLSHMEMX_TRANSPORT_SHM = 1 << 0,
  ACLSHMEMX_TRANSPORT_UCX = 1 << 1
} aclshmemx_transport_kind_t;
typedef enum
{
  ACLSHMEMX_DESCRIBE_NO_LOAD = 1 << 0
} aclshmemx_describe_flags_t;
typedef enum
{
  ACLSHMEMX_PLUGIN_LOADED = 0,
  ACLSHMEMX_PLUGIN_NOT_LOADED_YET = 1,
  ACLSHMEMX_PLUGIN_DISABLED = 2,
  ACLSHMEMX_PLUGIN_NOT_FOUND = 3,
  ACLSHMEMX_PLUGIN_LOAD_FAILED = 4,
  ACLSHMEMX_PLUGIN_NOT_A_PLUGIN = 5,
  ACLSHMEMX_PLUGIN_MISMATCH = 6
} aclshmemx_plugin_status_t;
typedef struct
{
  aclshmemx_plugin_status_t status;
  int from_env;
  int abi;
  int expected_abi;
  const char *path;
  const char *name;
  const char *version;
  const char *reason;
  int data_plane_error;
  char data_plane[256];
} aclshmemx_plugin_info_t;
typedef struct
{
  size_t size;
  const char *version;
  const char *library_path;
  int initialized;
  int my_pe;
  int n_pes;
  uint32_t transports_available;
  uint32_t transports_in_use;
  aclshmemx_plugin_info_t ucx;
} aclshmemx_description_t;

/* aclshmem/init.h */
int aclshmemx_init_status(void);
int aclshmemx_get_uniqueid(aclshmemx_uniqueid_t *uid);
int aclshmemx_set_attr_uniqueid_args(int my_pe, int n_pes, int64_t local_mem_size, aclshmemx_uniqueid_t *uid, aclshmemx_init_attr_t *attr);
int aclshmemx_set_qp_num(data_op_engine_type_t engine, uint32_t qp_num);
int aclshmemx_init_attr(aclshmemx_bootstrap_t bootstrap_flags, aclshmemx_init_attr_t *attributes);
int aclshmem_finalize(void);
int aclshmemx_finalize(uint64_t instance_id);
void aclshmem_info_get_version(int *major, int *minor);
void aclshmem_info_get_name(char *name);
int aclshmemx_describe(aclshmemx_description_t *desc, uint32_t flags);
void aclshmem_global_exit(int status);
int32_t aclshmemx_set_conf_store_tls(_Bool enable, const char *tls_info, const uint32_t tls_info_len);
int32_t aclshmemx_set_config_store_tls_key(const char *tls_pk, const uint32_t tls_pk_len, const char *tls_pk_pw, const uint32_t tls_pk_pw_len, const aclshmem_decrypt_handler decrypt_handler);
aclshmem_instance_ctx *aclshmemx_instance_ctx_get(void);
int aclshmemx_instance_ctx_set(uint64_t instance_id);
const char *aclshmemx_get_last_error(void);
void aclshmemx_clear_last_error(void);

/* aclshmem/mem.h */
void *aclshmem_malloc(size_t size);
void *aclshmem_calloc(size_t nmemb, size_t size);
void *aclshmem_align(size_t alignment, size_t size);
void aclshmem_free(void *ptr);
void *aclshmemx_malloc(size_t size, aclshmem_mem_type_t mem_type);
void *aclshmemx_calloc(size_t count, size_t size, aclshmem_mem_type_t mem_type);
void *aclshmemx_align(size_t alignment, size_t size, aclshmem_mem_type_t mem_type);
void aclshmemx_free(void *ptr, aclshmem_mem_type_t mem_type);
void *aclshmemx_get_heap_base(aclshmem_mem_type_t mem_type);
void *aclshmem_ptr(void *ptr, int pe);

/* aclshmem/team.h */
int aclshmem_team_split_strided(aclshmem_team_t parent_team, int pe_start, int pe_stride, int pe_size, aclshmem_team_t *new_team);
int aclshmem_team_split_2d(aclshmem_team_t parent_team, int x_range, aclshmem_team_t *x_team, aclshmem_team_t *y_team);
int aclshmem_team_translate_pe(aclshmem_team_t src_team, int src_pe, aclshmem_team_t dest_team);
void aclshmem_team_destroy(aclshmem_team_t team);
int aclshmem_my_pe(void);
int aclshmem_n_pes(void);
int aclshmem_team_my_pe(aclshmem_team_t team);
int aclshmem_team_n_pes(aclshmem_team_t team);
int aclshmem_team_get_config(aclshmem_team_t team, aclshmem_team_config_t *config);

/* aclshmem/rma.h */
void aclshmem_putmem(void *dst, const void *src, size_t elem_size, int32_t pe);
void aclshmem_getmem(void *dst, const void *src, size_t elem_size, int32_t pe);
void aclshmem_putmem_nbi(void *dst, const void *src, size_t elem_size, int32_t pe);
void aclshmem_getmem_nbi(void *dst, const void *src, size_t elem_size, int32_t pe);
void aclshmem_float_put(float *dest, const float *source, size_t nelems, int pe);
void aclshmem_float_get(float *dest, const float *source, size_t nelems, int pe);
void aclshmem_float_put_nbi(float *dest, const float *source, size_t nelems, int pe);
void aclshmem_float_get_nbi(float *dest, const float *source, size_t nelems, int pe);
void aclshmem_float_p(float *dst, const float value, int pe);
float aclshmem_float_g(const float *src, int32_t pe);
void aclshmem_float_iput(float *dest, const float *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_float_iget(float *dest, const float *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_double_put(double *dest, const double *source, size_t nelems, int pe);
void aclshmem_double_get(double *dest, const double *source, size_t nelems, int pe);
void aclshmem_double_put_nbi(double *dest, const double *source, size_t nelems, int pe);
void aclshmem_double_get_nbi(double *dest, const double *source, size_t nelems, int pe);
void aclshmem_double_p(double *dst, const double value, int pe);
double aclshmem_double_g(const double *src, int32_t pe);
void aclshmem_double_iput(double *dest, const double *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_double_iget(double *dest, const double *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int8_put(int8_t *dest, const int8_t *source, size_t nelems, int pe);
void aclshmem_int8_get(int8_t *dest, const int8_t *source, size_t nelems, int pe);
void aclshmem_int8_put_nbi(int8_t *dest, const int8_t *source, size_t nelems, int pe);
void aclshmem_int8_get_nbi(int8_t *dest, const int8_t *source, size_t nelems, int pe);
void aclshmem_int8_p(int8_t *dst, const int8_t value, int pe);
int8_t aclshmem_int8_g(const int8_t *src, int32_t pe);
void aclshmem_int8_iput(int8_t *dest, const int8_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int8_iget(int8_t *dest, const int8_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int16_put(int16_t *dest, const int16_t *source, size_t nelems, int pe);
void aclshmem_int16_get(int16_t *dest, const int16_t *source, size_t nelems, int pe);
void aclshmem_int16_put_nbi(int16_t *dest, const int16_t *source, size_t nelems, int pe);
void aclshmem_int16_get_nbi(int16_t *dest, const int16_t *source, size_t nelems, int pe);
void aclshmem_int16_p(int16_t *dst, const int16_t value, int pe);
int16_t aclshmem_int16_g(const int16_t *src, int32_t pe);
void aclshmem_int16_iput(int16_t *dest, const int16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int16_iget(int16_t *dest, const int16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int32_put(int32_t *dest, const int32_t *source, size_t nelems, int pe);
void aclshmem_int32_get(int32_t *dest, const int32_t *source, size_t nelems, int pe);
void aclshmem_int32_put_nbi(int32_t *dest, const int32_t *source, size_t nelems, int pe);
void aclshmem_int32_get_nbi(int32_t *dest, const int32_t *source, size_t nelems, int pe);
void aclshmem_int32_p(int32_t *dst, const int32_t value, int pe);
int32_t aclshmem_int32_g(const int32_t *src, int32_t pe);
void aclshmem_int32_iput(int32_t *dest, const int32_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int32_iget(int32_t *dest, const int32_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int64_put(int64_t *dest, const int64_t *source, size_t nelems, int pe);
void aclshmem_int64_get(int64_t *dest, const int64_t *source, size_t nelems, int pe);
void aclshmem_int64_put_nbi(int64_t *dest, const int64_t *source, size_t nelems, int pe);
void aclshmem_int64_get_nbi(int64_t *dest, const int64_t *source, size_t nelems, int pe);
void aclshmem_int64_p(int64_t *dst, const int64_t value, int pe);
int64_t aclshmem_int64_g(const int64_t *src, int32_t pe);
void aclshmem_int64_iput(int64_t *dest, const int64_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_int64_iget(int64_t *dest, const int64_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint8_put(uint8_t *dest, const uint8_t *source, size_t nelems, int pe);
void aclshmem_uint8_get(uint8_t *dest, const uint8_t *source, size_t nelems, int pe);
void aclshmem_uint8_put_nbi(uint8_t *dest, const uint8_t *source, size_t nelems, int pe);
void aclshmem_uint8_get_nbi(uint8_t *dest, const uint8_t *source, size_t nelems, int pe);
void aclshmem_uint8_p(uint8_t *dst, const uint8_t value, int pe);
uint8_t aclshmem_uint8_g(const uint8_t *src, int32_t pe);
void aclshmem_uint8_iput(uint8_t *dest, const uint8_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint8_iget(uint8_t *dest, const uint8_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint16_put(uint16_t *dest, const uint16_t *source, size_t nelems, int pe);
void aclshmem_uint16_get(uint16_t *dest, const uint16_t *source, size_t nelems, int pe);
void aclshmem_uint16_put_nbi(uint16_t *dest, const uint16_t *source, size_t nelems, int pe);
void aclshmem_uint16_get_nbi(uint16_t *dest, const uint16_t *source, size_t nelems, int pe);
void aclshmem_uint16_p(uint16_t *dst, const uint16_t value, int pe);
uint16_t aclshmem_uint16_g(const uint16_t *src, int32_t pe);
void aclshmem_uint16_iput(uint16_t *dest, const uint16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint16_iget(uint16_t *dest, const uint16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint32_put(uint32_t *dest, const uint32_t *source, size_t nelems, int pe);
void aclshmem_uint32_get(uint32_t *dest, const uint32_t *source, size_t nelems, int pe);
void aclshmem_uint32_put_nbi(uint32_t *dest, const uint32_t *source, size_t nelems, int pe);
void aclshmem_uint32_get_nbi(uint32_t *dest, const uint32_t *source, size_t nelems, int pe);
void aclshmem_uint32_p(uint32_t *dst, const uint32_t value, int pe);
uint32_t aclshmem_uint32_g(const uint32_t *src, int32_t pe);
void aclshmem_uint32_iput(uint32_t *dest, const uint32_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint32_iget(uint32_t *dest, const uint32_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint64_put(uint64_t *dest, const uint64_t *source, size_t nelems, int pe);
void aclshmem_uint64_get(uint64_t *dest, const uint64_t *source, size_t nelems, int pe);
void aclshmem_uint64_put_nbi(uint64_t *dest, const uint64_t *source, size_t nelems, int pe);
void aclshmem_uint64_get_nbi(uint64_t *dest, const uint64_t *source, size_t nelems, int pe);
void aclshmem_uint64_p(uint64_t *dst, const uint64_t value, int pe);
uint64_t aclshmem_uint64_g(const uint64_t *src, int32_t pe);
void aclshmem_uint64_iput(uint64_t *dest, const uint64_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_uint64_iget(uint64_t *dest, const uint64_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_char_put(char *dest, const char *source, size_t nelems, int pe);
void aclshmem_char_get(char *dest, const char *source, size_t nelems, int pe);
void aclshmem_char_put_nbi(char *dest, const char *source, size_t nelems, int pe);
void aclshmem_char_get_nbi(char *dest, const char *source, size_t nelems, int pe);
void aclshmem_char_p(char *dst, const char value, int pe);
char aclshmem_char_g(const char *src, int32_t pe);
void aclshmem_char_iput(char *dest, const char *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_char_iget(char *dest, const char *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_half_put(aclshmem_half_t *dest, const aclshmem_half_t *source, size_t nelems, int pe);
void aclshmem_half_get(aclshmem_half_t *dest, const aclshmem_half_t *source, size_t nelems, int pe);
void aclshmem_half_put_nbi(aclshmem_half_t *dest, const aclshmem_half_t *source, size_t nelems, int pe);
void aclshmem_half_get_nbi(aclshmem_half_t *dest, const aclshmem_half_t *source, size_t nelems, int pe);
void aclshmem_half_p(aclshmem_half_t *dst, const aclshmem_half_t value, int pe);
aclshmem_half_t aclshmem_half_g(const aclshmem_half_t *src, int32_t pe);
void aclshmem_half_iput(aclshmem_half_t *dest, const aclshmem_half_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_half_iget(aclshmem_half_t *dest, const aclshmem_half_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_bfloat16_put(aclshmem_bfloat16_t *dest, const aclshmem_bfloat16_t *source, size_t nelems, int pe);
void aclshmem_bfloat16_get(aclshmem_bfloat16_t *dest, const aclshmem_bfloat16_t *source, size_t nelems, int pe);
void aclshmem_bfloat16_put_nbi(aclshmem_bfloat16_t *dest, const aclshmem_bfloat16_t *source, size_t nelems, int pe);
void aclshmem_bfloat16_get_nbi(aclshmem_bfloat16_t *dest, const aclshmem_bfloat16_t *source, size_t nelems, int pe);
void aclshmem_bfloat16_p(aclshmem_bfloat16_t *dst, const aclshmem_bfloat16_t value, int pe);
aclshmem_bfloat16_t aclshmem_bfloat16_g(const aclshmem_bfloat16_t *src, int32_t pe);
void aclshmem_bfloat16_iput(aclshmem_bfloat16_t *dest, const aclshmem_bfloat16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_bfloat16_iget(aclshmem_bfloat16_t *dest, const aclshmem_bfloat16_t *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_put8(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get8(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_put8_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get8_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_iput8(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_iget8(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_put16(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get16(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_put16_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get16_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_iput16(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_iget16(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_put32(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get32(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_put32_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get32_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_iput32(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_iget32(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_put64(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get64(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_put64_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get64_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_iput64(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_iget64(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_put128(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get128(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_put128_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_get128_nbi(void *dst, const void *src, uint32_t elem_size, int32_t pe);
void aclshmem_iput128(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_iget128(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe);
void aclshmem_quiet(void);
void aclshmem_fence(void);
int aclshmemx_set_mte_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_set_sdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_set_rdma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_set_udma_config(uint64_t offset, uint32_t ub_size, uint32_t sync_id);
int aclshmemx_get_engine_config(data_op_engine_type_t engine, aclshmem_ub_config_t *config);

/* aclshmem/amo.h */
void aclshmem_int8_atomic_add(int8_t *dst, int8_t value, int32_t pe);
int8_t aclshmem_int8_atomic_fetch_add(int8_t *dst, int8_t value, int32_t pe);
void aclshmem_int8_atomic_set(int8_t *dst, int8_t value, int32_t pe);
int8_t aclshmem_int8_atomic_fetch(const int8_t *src, int32_t pe);
int8_t aclshmem_int8_atomic_swap(int8_t *dst, int8_t value, int32_t pe);
void aclshmem_int16_atomic_add(int16_t *dst, int16_t value, int32_t pe);
int16_t aclshmem_int16_atomic_fetch_add(int16_t *dst, int16_t value, int32_t pe);
void aclshmem_int16_atomic_set(int16_t *dst, int16_t value, int32_t pe);
int16_t aclshmem_int16_atomic_fetch(const int16_t *src, int32_t pe);
int16_t aclshmem_int16_atomic_swap(int16_t *dst, int16_t value, int32_t pe);
void aclshmem_int32_atomic_add(int32_t *dst, int32_t value, int32_t pe);
int32_t aclshmem_int32_atomic_fetch_add(int32_t *dst, int32_t value, int32_t pe);
void aclshmem_int32_atomic_set(int32_t *dst, int32_t value, int32_t pe);
int32_t aclshmem_int32_atomic_fetch(const int32_t *src, int32_t pe);
int32_t aclshmem_int32_atomic_swap(int32_t *dst, int32_t value, int32_t pe);
void aclshmem_int64_atomic_add(int64_t *dst, int64_t value, int32_t pe);
int64_t aclshmem_int64_atomic_fetch_add(int64_t *dst, int64_t value, int32_t pe);
void aclshmem_int64_atomic_set(int64_t *dst, int64_t value, int32_t pe);
int64_t aclshmem_int64_atomic_fetch(const int64_t *src, int32_t pe);
int64_t aclshmem_int64_atomic_swap(int64_t *dst, int64_t value, int32_t pe);
void aclshmem_uint8_atomic_add(uint8_t *dst, uint8_t value, int32_t pe);
uint8_t aclshmem_uint8_atomic_fetch_add(uint8_t *dst, uint8_t value, int32_t pe);
void aclshmem_uint8_atomic_set(uint8_t *dst, uint8_t value, int32_t pe);
uint8_t aclshmem_uint8_atomic_fetch(const uint8_t *src, int32_t pe);
uint8_t aclshmem_uint8_atomic_swap(uint8_t *dst, uint8_t value, int32_t pe);
void aclshmem_uint16_atomic_add(uint16_t *dst, uint16_t value, int32_t pe);
uint16_t aclshmem_uint16_atomic_fetch_add(uint16_t *dst, uint16_t value, int32_t pe);
void aclshmem_uint16_atomic_set(uint16_t *dst, uint16_t value, int32_t pe);
uint16_t aclshmem_uint16_atomic_fetch(const uint16_t *src, int32_t pe);
uint16_t aclshmem_uint16_atomic_swap(uint16_t *dst, uint16_t value, int32_t pe);
void aclshmem_uint32_atomic_add(uint32_t *dst, uint32_t value, int32_t pe);
uint32_t aclshmem_uint32_atomic_fetch_add(uint32_t *dst, uint32_t value, int32_t pe);
void aclshmem_uint32_atomic_set(uint32_t *dst, uint32_t value, int32_t pe);
uint32_t aclshmem_uint32_atomic_fetch(const uint32_t *src, int32_t pe);
uint32_t aclshmem_uint32_atomic_swap(uint32_t *dst, uint32_t value, int32_t pe);
void aclshmem_uint64_atomic_add(uint64_t *dst, uint64_t value, int32_t pe);
uint64_t aclshmem_uint64_atomic_fetch_add(uint64_t *dst, uint64_t value, int32_t pe);
void aclshmem_uint64_atomic_set(uint64_t *dst, uint64_t value, int32_t pe);
uint64_t aclshmem_uint64_atomic_fetch(const uint64_t *src, int32_t pe);
uint64_t aclshmem_uint64_atomic_swap(uint64_t *dst, uint64_t value, int32_t pe);
void aclshmem_float_atomic_add(float *dst, float value, int32_t pe);
float aclshmem_float_atomic_fetch_add(float *dst, float value, int32_t pe);
void aclshmem_float_atomic_set(float *dst, float value, int32_t pe);
float aclshmem_float_atomic_fetch(const float *src, int32_t pe);
float aclshmem_float_atomic_swap(float *dst, float value, int32_t pe);
void aclshmem_double_atomic_add(double *dst, double value, int32_t pe);
double aclshmem_double_atomic_fetch_add(double *dst, double value, int32_t pe);
void aclshmem_double_atomic_set(double *dst, double value, int32_t pe);
double aclshmem_double_atomic_fetch(const double *src, int32_t pe);
double aclshmem_double_atomic_swap(double *dst, double value, int32_t pe);
void aclshmem_half_atomic_add(aclshmem_half_t *dst, aclshmem_half_t value, int32_t pe);
aclshmem_half_t aclshmem_half_atomic_fetch_add(aclshmem_half_t *dst, aclshmem_half_t value, int32_t pe);
void aclshmem_half_atomic_set(aclshmem_half_t *dst, aclshmem_half_t value, int32_t pe);
aclshmem_half_t aclshmem_half_atomic_fetch(const aclshmem_half_t *src, int32_t pe);
aclshmem_half_t aclshmem_half_atomic_swap(aclshmem_half_t *dst, aclshmem_half_t value, int32_t pe);
void aclshmem_bfloat16_atomic_add(aclshmem_bfloat16_t *dst, aclshmem_bfloat16_t value, int32_t pe);
aclshmem_bfloat16_t aclshmem_bfloat16_atomic_fetch_add(aclshmem_bfloat16_t *dst, aclshmem_bfloat16_t value, int32_t pe);
void aclshmem_bfloat16_atomic_set(aclshmem_bfloat16_t *dst, aclshmem_bfloat16_t value, int32_t pe);
aclshmem_bfloat16_t aclshmem_bfloat16_atomic_fetch(const aclshmem_bfloat16_t *src, int32_t pe);
aclshmem_bfloat16_t aclshmem_bfloat16_atomic_swap(aclshmem_bfloat16_t *dst, aclshmem_bfloat16_t value, int32_t pe);
int8_t aclshmem_int8_atomic_compare_swap(int8_t *dst, int8_t cond, int8_t value, int32_t pe);
int16_t aclshmem_int16_atomic_compare_swap(int16_t *dst, int16_t cond, int16_t value, int32_t pe);
int32_t aclshmem_int32_atomic_compare_swap(int32_t *dst, int32_t cond, int32_t value, int32_t pe);
int64_t aclshmem_int64_atomic_compare_swap(int64_t *dst, int64_t cond, int64_t value, int32_t pe);
uint8_t aclshmem_uint8_atomic_compare_swap(uint8_t *dst, uint8_t cond, uint8_t value, int32_t pe);
uint16_t aclshmem_uint16_atomic_compare_swap(uint16_t *dst, uint16_t cond, uint16_t value, int32_t pe);
uint32_t aclshmem_uint32_atomic_compare_swap(uint32_t *dst, uint32_t cond, uint32_t value, int32_t pe);
uint64_t aclshmem_uint64_atomic_compare_swap(uint64_t *dst, uint64_t cond, uint64_t value, int32_t pe);
float aclshmem_float_atomic_compare_swap(float *dst, float cond, float value, int32_t pe);
double aclshmem_double_atomic_compare_swap(double *dst, double cond, double value, int32_t pe);
void aclshmem_int8_atomic_inc(int8_t *dst, int32_t pe);
int8_t aclshmem_int8_atomic_fetch_inc(int8_t *dst, int32_t pe);
void aclshmem_int8_atomic_and(int8_t *dst, int8_t value, int32_t pe);
void aclshmem_int8_atomic_or(int8_t *dst, int8_t value, int32_t pe);
void aclshmem_int8_atomic_xor(int8_t *dst, int8_t value, int32_t pe);
int8_t aclshmem_int8_atomic_fetch_and(int8_t *dst, int8_t value, int32_t pe);
int8_t aclshmem_int8_atomic_fetch_or(int8_t *dst, int8_t value, int32_t pe);
int8_t aclshmem_int8_atomic_fetch_xor(int8_t *dst, int8_t value, int32_t pe);
void aclshmem_int16_atomic_inc(int16_t *dst, int32_t pe);
int16_t aclshmem_int16_atomic_fetch_inc(int16_t *dst, int32_t pe);
void aclshmem_int16_atomic_and(int16_t *dst, int16_t value, int32_t pe);
void aclshmem_int16_atomic_or(int16_t *dst, int16_t value, int32_t pe);
void aclshmem_int16_atomic_xor(int16_t *dst, int16_t value, int32_t pe);
int16_t aclshmem_int16_atomic_fetch_and(int16_t *dst, int16_t value, int32_t pe);
int16_t aclshmem_int16_atomic_fetch_or(int16_t *dst, int16_t value, int32_t pe);
int16_t aclshmem_int16_atomic_fetch_xor(int16_t *dst, int16_t value, int32_t pe);
void aclshmem_int32_atomic_inc(int32_t *dst, int32_t pe);
int32_t aclshmem_int32_atomic_fetch_inc(int32_t *dst, int32_t pe);
void aclshmem_int32_atomic_and(int32_t *dst, int32_t value, int32_t pe);
void aclshmem_int32_atomic_or(int32_t *dst, int32_t value, int32_t pe);
void aclshmem_int32_atomic_xor(int32_t *dst, int32_t value, int32_t pe);
int32_t aclshmem_int32_atomic_fetch_and(int32_t *dst, int32_t value, int32_t pe);
int32_t aclshmem_int32_atomic_fetch_or(int32_t *dst, int32_t value, int32_t pe);
int32_t aclshmem_int32_atomic_fetch_xor(int32_t *dst, int32_t value, int32_t pe);
void aclshmem_int64_atomic_inc(int64_t *dst, int32_t pe);
int64_t aclshmem_int64_atomic_fetch_inc(int64_t *dst, int32_t pe);
void aclshmem_int64_atomic_and(int64_t *dst, int64_t value, int32_t pe);
void aclshmem_int64_atomic_or(int64_t *dst, int64_t value, int32_t pe);
void aclshmem_int64_atomic_xor(int64_t *dst, int64_t value, int32_t pe);
int64_t aclshmem_int64_atomic_fetch_and(int64_t *dst, int64_t value, int32_t pe);
int64_t aclshmem_int64_atomic_fetch_or(int64_t *dst, int64_t value, int32_t pe);
int64_t aclshmem_int64_atomic_fetch_xor(int64_t *dst, int64_t value, int32_t pe);
void aclshmem_uint8_atomic_inc(uint8_t *dst, int32_t pe);
uint8_t aclshmem_uint8_atomic_fetch_inc(uint8_t *dst, int32_t pe);
void aclshmem_uint8_atomic_and(uint8_t *dst, uint8_t value, int32_t pe);
void aclshmem_uint8_atomic_or(uint8_t *dst, uint8_t value, int32_t pe);
void aclshmem_uint8_atomic_xor(uint8_t *dst, uint8_t value, int32_t pe);
uint8_t aclshmem_uint8_atomic_fetch_and(uint8_t *dst, uint8_t value, int32_t pe);
uint8_t aclshmem_uint8_atomic_fetch_or(uint8_t *dst, uint8_t value, int32_t pe);
uint8_t aclshmem_uint8_atomic_fetch_xor(uint8_t *dst, uint8_t value, int32_t pe);
void aclshmem_uint16_atomic_inc(uint16_t *dst, int32_t pe);
uint16_t aclshmem_uint16_atomic_fetch_inc(uint16_t *dst, int32_t pe);
void aclshmem_uint16_atomic_and(uint16_t *dst, uint16_t value, int32_t pe);
void aclshmem_uint16_atomic_or(uint16_t *dst, uint16_t value, int32_t pe);
void aclshmem_uint16_atomic_xor(uint16_t *dst, uint16_t value, int32_t pe);
uint16_t aclshmem_uint16_atomic_fetch_and(uint16_t *dst, uint16_t value, int32_t pe);
uint16_t aclshmem_uint16_atomic_fetch_or(uint16_t *dst, uint16_t value, int32_t pe);
uint16_t aclshmem_uint16_atomic_fetch_xor(uint16_t *dst, uint16_t value, int32_t pe);
void aclshmem_uint32_atomic_inc(uint32_t *dst, int32_t pe);
uint32_t aclshmem_uint32_atomic_fetch_inc(uint32_t *dst, int32_t pe);
void aclshmem_uint32_atomic_and(uint32_t *dst, uint32_t value, int32_t pe);
void aclshmem_uint32_atomic_or(uint32_t *dst, uint32_t value, int32_t pe);
void aclshmem_uint32_atomic_xor(uint32_t *dst, uint32_t value, int32_t pe);
uint32_t aclshmem_uint32_atomic_fetch_and(uint32_t *dst, uint32_t value, int32_t pe);
uint32_t aclshmem_uint32_atomic_fetch_or(uint32_t *dst, uint32_t value, int32_t pe);
uint32_t aclshmem_uint32_atomic_fetch_xor(uint32_t *dst, uint32_t value, int32_t pe);
void aclshmem_uint64_atomic_inc(uint64_t *dst, int32_t pe);
uint64_t aclshmem_uint64_atomic_fetch_inc(uint64_t *dst, int32_t pe);
void aclshmem_uint64_atomic_and(uint64_t *dst, uint64_t value, int32_t pe);
void aclshmem_uint64_atomic_or(uint64_t *dst, uint64_t value, int32_t pe);
void aclshmem_uint64_atomic_xor(uint64_t *dst, uint64_t value, int32_t pe);
uint64_t aclshmem_uint64_atomic_fetch_and(uint64_t *dst, uint64_t value, int32_t pe);
uint64_t aclshmem_uint64_atomic_fetch_or(uint64_t *dst, uint64_t value, int32_t pe);
uint64_t aclshmem_uint64_atomic_fetch_xor(uint64_t *dst, uint64_t value, int32_t pe);

/* aclshmem/signal.h */
void aclshmemx_putmem_signal(void *dst, const void *src, size_t elem_size, void *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmemx_putmem_signal_nbi(void *dst, const void *src, size_t elem_size, void *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_float_put_signal(float *dst, const float *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_float_put_signal_nbi(float *dst, const float *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_double_put_signal(double *dst, const double *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_double_put_signal_nbi(double *dst, const double *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int8_put_signal(int8_t *dst, const int8_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int8_put_signal_nbi(int8_t *dst, const int8_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int16_put_signal(int16_t *dst, const int16_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int16_put_signal_nbi(int16_t *dst, const int16_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int32_put_signal(int32_t *dst, const int32_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int32_put_signal_nbi(int32_t *dst, const int32_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int64_put_signal(int64_t *dst, const int64_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_int64_put_signal_nbi(int64_t *dst, const int64_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint8_put_signal(uint8_t *dst, const uint8_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint8_put_signal_nbi(uint8_t *dst, const uint8_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint16_put_signal(uint16_t *dst, const uint16_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint16_put_signal_nbi(uint16_t *dst, const uint16_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint32_put_signal(uint32_t *dst, const uint32_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint32_put_signal_nbi(uint32_t *dst, const uint32_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint64_put_signal(uint64_t *dst, const uint64_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_uint64_put_signal_nbi(uint64_t *dst, const uint64_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_char_put_signal(char *dst, const char *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_char_put_signal_nbi(char *dst, const char *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_half_put_signal(aclshmem_half_t *dst, const aclshmem_half_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_half_put_signal_nbi(aclshmem_half_t *dst, const aclshmem_half_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_bfloat16_put_signal(aclshmem_bfloat16_t *dst, const aclshmem_bfloat16_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_bfloat16_put_signal_nbi(aclshmem_bfloat16_t *dst, const aclshmem_bfloat16_t *src, size_t elem_size, uint8_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put8_signal(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put8_signal_nbi(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put16_signal(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put16_signal_nbi(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put32_signal(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put32_signal_nbi(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put64_signal(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put64_signal_nbi(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put128_signal(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmem_put128_signal_nbi(void *dst, const void *src, size_t nelems, int32_t *sig_addr, int32_t signal, int sig_op, int pe);
void aclshmemx_signal_op(int32_t *sig_addr, int32_t signal, int sig_op, int pe);

/* aclshmem/p2p_sync.h */
int32_t aclshmem_signal_wait_until(int32_t *sig_addr, int cmp, int32_t cmp_val);
void aclshmem_float_wait_until(float *ivar, int cmp, float cmp_value);
void aclshmem_float_wait(float *ivar, float cmp_value);
void aclshmem_float_wait_until_all(float *ivars, size_t nelems, const int *status, int cmp, float cmp_value);
void aclshmem_float_wait_until_any(float *ivars, size_t nelems, const int *status, int cmp, float cmp_value, size_t *res_out);
void aclshmem_float_wait_until_some(float *ivars, size_t nelems, size_t *indices, const int *status, int cmp, float cmp_value, size_t *res_out);
void aclshmem_float_wait_until_all_vector(float *ivars, size_t nelems, const int *status, int cmp, float *cmp_values);
void aclshmem_float_wait_until_any_vector(float *ivars, size_t nelems, const int *status, int cmp, float *cmp_values, size_t *res_out);
void aclshmem_float_wait_until_some_vector(float *ivars, size_t nelems, size_t *indices, const int *status, int cmp, float *cmp_values, size_t *res_out);
void aclshmem_float_test(float *ivars, int cmp, float cmp_value, int *res_out);
void aclshmem_float_test_any(float *ivars, size_t nelems, const int *status, int cmp, float cmp_value, size_t *res_out);
void aclshmem_float_test_some(float *ivars, size_t nelems, size_t *indices, const int *status, int cmp, float cmp_value, size_t *res_out);
void aclshmem_float_test_all_vector(float *ivars, size_t nelems, const int *status, int cmp, float *cmp_values, int *res_out);
void aclshmem_float_test_any_vector(float *ivars, size_t nelems, const int *status, int cmp, float *cmp_values, size_t *res_out);
void aclshmem_float_test_some_vector(float *ivars, size_t nelems, size_t *indices, const int *status, int cmp, float *cmp_values, size_t *res_out);
void aclshmem_int8_wait_until(int8_t *ivar, int cmp, int8_t cmp_value);
void aclshmem_int8_wait(int8_t *ivar, int8_t cmp_value);
void aclshmem_int8_wait_until_all(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t cmp_value);
void aclshmem_int8_wait_until_any(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t cmp_value, size_t *res_out);
void aclshmem_int8_wait_until_some(int8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int8_t cmp_value, size_t *res_out);
void aclshmem_int8_wait_until_all_vector(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t *cmp_values);
void aclshmem_int8_wait_until_any_vector(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t *cmp_values, size_t *res_out);
void aclshmem_int8_wait_until_some_vector(int8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int8_t *cmp_values, size_t *res_out);
void aclshmem_int8_test(int8_t *ivars, int cmp, int8_t cmp_value, int *res_out);
void aclshmem_int8_test_any(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t cmp_value, size_t *res_out);
void aclshmem_int8_test_some(int8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int8_t cmp_value, size_t *res_out);
void aclshmem_int8_test_all_vector(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t *cmp_values, int *res_out);
void aclshmem_int8_test_any_vector(int8_t *ivars, size_t nelems, const int *status, int cmp, int8_t *cmp_values, size_t *res_out);
void aclshmem_int8_test_some_vector(int8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int8_t *cmp_values, size_t *res_out);
void aclshmem_int16_wait_until(int16_t *ivar, int cmp, int16_t cmp_value);
void aclshmem_int16_wait(int16_t *ivar, int16_t cmp_value);
void aclshmem_int16_wait_until_all(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t cmp_value);
void aclshmem_int16_wait_until_any(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t cmp_value, size_t *res_out);
void aclshmem_int16_wait_until_some(int16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int16_t cmp_value, size_t *res_out);
void aclshmem_int16_wait_until_all_vector(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t *cmp_values);
void aclshmem_int16_wait_until_any_vector(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t *cmp_values, size_t *res_out);
void aclshmem_int16_wait_until_some_vector(int16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int16_t *cmp_values, size_t *res_out);
void aclshmem_int16_test(int16_t *ivars, int cmp, int16_t cmp_value, int *res_out);
void aclshmem_int16_test_any(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t cmp_value, size_t *res_out);
void aclshmem_int16_test_some(int16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int16_t cmp_value, size_t *res_out);
void aclshmem_int16_test_all_vector(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t *cmp_values, int *res_out);
void aclshmem_int16_test_any_vector(int16_t *ivars, size_t nelems, const int *status, int cmp, int16_t *cmp_values, size_t *res_out);
void aclshmem_int16_test_some_vector(int16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int16_t *cmp_values, size_t *res_out);
void aclshmem_int32_wait_until(int32_t *ivar, int cmp, int32_t cmp_value);
void aclshmem_int32_wait(int32_t *ivar, int32_t cmp_value);
void aclshmem_int32_wait_until_all(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t cmp_value);
void aclshmem_int32_wait_until_any(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t cmp_value, size_t *res_out);
void aclshmem_int32_wait_until_some(int32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int32_t cmp_value, size_t *res_out);
void aclshmem_int32_wait_until_all_vector(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t *cmp_values);
void aclshmem_int32_wait_until_any_vector(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t *cmp_values, size_t *res_out);
void aclshmem_int32_wait_until_some_vector(int32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int32_t *cmp_values, size_t *res_out);
void aclshmem_int32_test(int32_t *ivars, int cmp, int32_t cmp_value, int *res_out);
void aclshmem_int32_test_any(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t cmp_value, size_t *res_out);
void aclshmem_int32_test_some(int32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int32_t cmp_value, size_t *res_out);
void aclshmem_int32_test_all_vector(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t *cmp_values, int *res_out);
void aclshmem_int32_test_any_vector(int32_t *ivars, size_t nelems, const int *status, int cmp, int32_t *cmp_values, size_t *res_out);
void aclshmem_int32_test_some_vector(int32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int32_t *cmp_values, size_t *res_out);
void aclshmem_int64_wait_until(int64_t *ivar, int cmp, int64_t cmp_value);
void aclshmem_int64_wait(int64_t *ivar, int64_t cmp_value);
void aclshmem_int64_wait_until_all(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t cmp_value);
void aclshmem_int64_wait_until_any(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t cmp_value, size_t *res_out);
void aclshmem_int64_wait_until_some(int64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int64_t cmp_value, size_t *res_out);
void aclshmem_int64_wait_until_all_vector(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t *cmp_values);
void aclshmem_int64_wait_until_any_vector(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t *cmp_values, size_t *res_out);
void aclshmem_int64_wait_until_some_vector(int64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int64_t *cmp_values, size_t *res_out);
void aclshmem_int64_test(int64_t *ivars, int cmp, int64_t cmp_value, int *res_out);
void aclshmem_int64_test_any(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t cmp_value, size_t *res_out);
void aclshmem_int64_test_some(int64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int64_t cmp_value, size_t *res_out);
void aclshmem_int64_test_all_vector(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t *cmp_values, int *res_out);
void aclshmem_int64_test_any_vector(int64_t *ivars, size_t nelems, const int *status, int cmp, int64_t *cmp_values, size_t *res_out);
void aclshmem_int64_test_some_vector(int64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, int64_t *cmp_values, size_t *res_out);
void aclshmem_uint8_wait_until(uint8_t *ivar, int cmp, uint8_t cmp_value);
void aclshmem_uint8_wait(uint8_t *ivar, uint8_t cmp_value);
void aclshmem_uint8_wait_until_all(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t cmp_value);
void aclshmem_uint8_wait_until_any(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t cmp_value, size_t *res_out);
void aclshmem_uint8_wait_until_some(uint8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint8_t cmp_value, size_t *res_out);
void aclshmem_uint8_wait_until_all_vector(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t *cmp_values);
void aclshmem_uint8_wait_until_any_vector(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t *cmp_values, size_t *res_out);
void aclshmem_uint8_wait_until_some_vector(uint8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint8_t *cmp_values, size_t *res_out);
void aclshmem_uint8_test(uint8_t *ivars, int cmp, uint8_t cmp_value, int *res_out);
void aclshmem_uint8_test_any(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t cmp_value, size_t *res_out);
void aclshmem_uint8_test_some(uint8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint8_t cmp_value, size_t *res_out);
void aclshmem_uint8_test_all_vector(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t *cmp_values, int *res_out);
void aclshmem_uint8_test_any_vector(uint8_t *ivars, size_t nelems, const int *status, int cmp, uint8_t *cmp_values, size_t *res_out);
void aclshmem_uint8_test_some_vector(uint8_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint8_t *cmp_values, size_t *res_out);
void aclshmem_uint16_wait_until(uint16_t *ivar, int cmp, uint16_t cmp_value);
void aclshmem_uint16_wait(uint16_t *ivar, uint16_t cmp_value);
void aclshmem_uint16_wait_until_all(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t cmp_value);
void aclshmem_uint16_wait_until_any(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t cmp_value, size_t *res_out);
void aclshmem_uint16_wait_until_some(uint16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint16_t cmp_value, size_t *res_out);
void aclshmem_uint16_wait_until_all_vector(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t *cmp_values);
void aclshmem_uint16_wait_until_any_vector(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t *cmp_values, size_t *res_out);
void aclshmem_uint16_wait_until_some_vector(uint16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint16_t *cmp_values, size_t *res_out);
void aclshmem_uint16_test(uint16_t *ivars, int cmp, uint16_t cmp_value, int *res_out);
void aclshmem_uint16_test_any(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t cmp_value, size_t *res_out);
void aclshmem_uint16_test_some(uint16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint16_t cmp_value, size_t *res_out);
void aclshmem_uint16_test_all_vector(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t *cmp_values, int *res_out);
void aclshmem_uint16_test_any_vector(uint16_t *ivars, size_t nelems, const int *status, int cmp, uint16_t *cmp_values, size_t *res_out);
void aclshmem_uint16_test_some_vector(uint16_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint16_t *cmp_values, size_t *res_out);
void aclshmem_uint32_wait_until(uint32_t *ivar, int cmp, uint32_t cmp_value);
void aclshmem_uint32_wait(uint32_t *ivar, uint32_t cmp_value);
void aclshmem_uint32_wait_until_all(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t cmp_value);
void aclshmem_uint32_wait_until_any(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t cmp_value, size_t *res_out);
void aclshmem_uint32_wait_until_some(uint32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint32_t cmp_value, size_t *res_out);
void aclshmem_uint32_wait_until_all_vector(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t *cmp_values);
void aclshmem_uint32_wait_until_any_vector(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t *cmp_values, size_t *res_out);
void aclshmem_uint32_wait_until_some_vector(uint32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint32_t *cmp_values, size_t *res_out);
void aclshmem_uint32_test(uint32_t *ivars, int cmp, uint32_t cmp_value, int *res_out);
void aclshmem_uint32_test_any(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t cmp_value, size_t *res_out);
void aclshmem_uint32_test_some(uint32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint32_t cmp_value, size_t *res_out);
void aclshmem_uint32_test_all_vector(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t *cmp_values, int *res_out);
void aclshmem_uint32_test_any_vector(uint32_t *ivars, size_t nelems, const int *status, int cmp, uint32_t *cmp_values, size_t *res_out);
void aclshmem_uint32_test_some_vector(uint32_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint32_t *cmp_values, size_t *res_out);
void aclshmem_uint64_wait_until(uint64_t *ivar, int cmp, uint64_t cmp_value);
void aclshmem_uint64_wait(uint64_t *ivar, uint64_t cmp_value);
void aclshmem_uint64_wait_until_all(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t cmp_value);
void aclshmem_uint64_wait_until_any(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t cmp_value, size_t *res_out);
void aclshmem_uint64_wait_until_some(uint64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint64_t cmp_value, size_t *res_out);
void aclshmem_uint64_wait_until_all_vector(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t *cmp_values);
void aclshmem_uint64_wait_until_any_vector(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t *cmp_values, size_t *res_out);
void aclshmem_uint64_wait_until_some_vector(uint64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint64_t *cmp_values, size_t *res_out);
void aclshmem_uint64_test(uint64_t *ivars, int cmp, uint64_t cmp_value, int *res_out);
void aclshmem_uint64_test_any(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t cmp_value, size_t *res_out);
void aclshmem_uint64_test_some(uint64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint64_t cmp_value, size_t *res_out);
void aclshmem_uint64_test_all_vector(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t *cmp_values, int *res_out);
void aclshmem_uint64_test_any_vector(uint64_t *ivars, size_t nelems, const int *status, int cmp, uint64_t *cmp_values, size_t *res_out);
void aclshmem_uint64_test_some_vector(uint64_t *ivars, size_t nelems, size_t *indices, const int *status, int cmp, uint64_t *cmp_values, size_t *res_out);
void aclshmem_char_wait_until(char *ivar, int cmp, char cmp_value);
void aclshmem_char_wait(char *ivar, char cmp_value);
void aclshmem_char_wait_until_all(char *ivars, size_t nelems, const int *status, int cmp, char cmp_value);
void aclshmem_char_wait_until_any(char *ivars, size_t nelems, const int *status, int cmp, char cmp_value, size_t *res_out);
void aclshmem_char_wait_until_some(char *ivars, size_t nelems, size_t *indices, const int *status, int cmp, char cmp_value, size_t *res_out);
void aclshmem_char_wait_until_all_vector(char *ivars, size_t nelems, const int *status, int cmp, char *cmp_values);
void aclshmem_char_wait_until_any_vector(char *ivars, size_t nelems, const int *status, int cmp, char *cmp_values, size_t *res_out);
void aclshmem_char_wait_until_some_vector(char *ivars, size_t nelems, size_t *indices, const int *status, int cmp, char *cmp_values, size_t *res_out);
void aclshmem_char_test(char *ivars, int cmp, char cmp_value, int *res_out);
void aclshmem_char_test_any(char *ivars, size_t nelems, const int *status, int cmp, char cmp_value, size_t *res_out);
void aclshmem_char_test_some(char *ivars, size_t nelems, size_t *indices, const int *status, int cmp, char cmp_value, size_t *res_out);
void aclshmem_char_test_all_vector(char *ivars, size_t nelems, const int *status, int cmp, char *cmp_values, int *res_out);
void aclshmem_char_test_any_vector(char *ivars, size_t nelems, const int *status, int cmp, char *cmp_values, size_t *res_out);
void aclshmem_char_test_some_vector(char *ivars, size_t nelems, size_t *indices, const int *status, int cmp, char *cmp_values, size_t *res_out);
uint64_t util_get_ffts_config(void);

/* aclshmem/sync.h */
void aclshmem_barrier(aclshmem_team_t team);
void aclshmem_barrier_all(void);
void aclshmem_sync(aclshmem_team_t team);
void aclshmem_sync_all(void);
void aclshmemx_barrier_vec(aclshmem_team_t team);
void aclshmemx_barrier_all_vec(void);

/* aclshmem/coll.h */
int aclshmemx_team_exchange(aclshmem_team_t team, const void *mine, size_t size, void *all);
int aclshmem_broadcastmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems, int pe_root);
int aclshmem_collectmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems);
int aclshmem_fcollectmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems);
int aclshmem_alltoallmem(aclshmem_team_t team, void *dest, const void *source, size_t nelems);
int aclshmem_alltoallsmem(aclshmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems);
int aclshmemx_broadcastmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems, int pe_root, aclrtStream stream);
int aclshmemx_collectmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems, aclrtStream stream);
int aclshmemx_fcollectmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems, aclrtStream stream);
int aclshmemx_alltoallmem_on_stream(aclshmem_team_t team, void *dest, const void *source, size_t nelems, aclrtStream stream);
int aclshmemx_alltoallsmem_on_stream(aclshmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, aclrtStream stream);
typedef enum
{
  ACLSHMEMX_TYPE_char,
  ACLSHMEMX_TYPE_schar,
  ACLSHMEMX_TYPE_short,
  ACLSHMEMX_TYPE_int,
  ACLSHMEMX_TYPE_long,
  ACLSHMEMX_TYPE_longlong,
  ACLSHMEMX_TYPE_ptrdiff,
  ACLSHMEMX_TYPE_uchar,
  ACLSHMEMX_TYPE_ushort,
  ACLSHMEMX_TYPE_uint,
  ACLSHMEMX_TYPE_ulong,
  ACLSHMEMX_TYPE_ulonglong,
  ACLSHMEMX_TYPE_int8,
  ACLSHMEMX_TYPE_int16,
  ACLSHMEMX_TYPE_int32,
  ACLSHMEMX_TYPE_int64,
  ACLSHMEMX_TYPE_uint8,
  ACLSHMEMX_TYPE_uint16,
  ACLSHMEMX_TYPE_uint32,
  ACLSHMEMX_TYPE_uint64,
  ACLSHMEMX_TYPE_size,
  ACLSHMEMX_TYPE_float,
  ACLSHMEMX_TYPE_double,
  ACLSHMEMX_TYPE_longdouble,
  ACLSHMEMX_TYPE_half,
  ACLSHMEMX_TYPE_bfloat16,
  ACLSHMEMX_TYPE_complexf,
  ACLSHMEMX_TYPE_complexd,
  ACLSHMEMX_TYPE_COUNT
} aclshmemx_type_t;
typedef enum
{
  ACLSHMEMX_OP_AND,
  ACLSHMEMX_OP_OR,
  ACLSHMEMX_OP_XOR,
  ACLSHMEMX_OP_MIN,
  ACLSHMEMX_OP_MAX,
  ACLSHMEMX_OP_SUM,
  ACLSHMEMX_OP_PROD,
  ACLSHMEMX_OP_COUNT
} aclshmemx_reduce_op_t;
int aclshmemx_reduce_local(aclshmem_team_t team, void *dest, const void *source, void *work, size_t nreduce, aclshmemx_type_t dtype, aclshmemx_reduce_op_t op);
int aclshmemx_broadcastmem_local(aclshmem_team_t team, void *dest, const void *source, void *work, size_t nelems, int pe_root);

/* aclshmem/stream.h */
int aclshmemx_stream_create(aclrtStream *stream);
int aclshmemx_stream_synchronize(aclrtStream stream);
int aclshmemx_stream_destroy(aclrtStream stream);
int aclshmemx_kernel_launch(aclrtStream stream, aclshmemx_kernel_fn fn, uint32_t block_dim, void *arg);
uint32_t aclshmemx_block_idx(void);
uint32_t aclshmemx_block_num(void);
void aclshmemx_putmem_on_stream(void *dst, const void *src, size_t elem_size, int32_t pe, aclrtStream stream);
void aclshmemx_getmem_on_stream(void *dst, const void *src, size_t elem_size, int32_t pe, aclrtStream stream);
void aclshmemx_signal_op_on_stream(int32_t *sig_addr, int32_t signal, int sig_op, int pe, aclrtStream stream);
void aclshmemx_signal_wait_until_on_stream(int32_t *sig_addr, int cmp, int32_t cmp_val, aclrtStream stream);
void aclshmemx_quiet_on_stream(aclrtStream stream);
void aclshmemx_barrier_on_stream(aclshmem_team_t team, aclrtStream stream);
void aclshmemx_barrier_all_on_stream(aclrtStream stream);
void aclshmemx_handle_wait(aclshmem_handle_t handle, aclrtStream stream);

/* aclshmem/log.h */
int32_t aclshmemx_set_log_level(int level);
int32_t aclshmemx_set_extern_logger(void (*func)(int level, const char *msg));
void aclshmemx_get_prof(aclshmem_prof_pe_t **out_profs, _Bool verbose);
void aclshmemx_show_prof(void);
void aclshmemx_prof_start(uint32_t frame);
void aclshmemx_prof_end(uint32_t frame);

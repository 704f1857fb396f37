/*
 * tlc runtime over the CUDA driver API; see tlc_runtime.h.
 *
 * cuda.h is deliberately not included: the few types, enum values and
 * prototypes used are declared below (values from the CUDA driver API
 * reference), and the entry points are resolved with dlsym so that nothing
 * needs the CUDA toolkit to build and nothing needs a driver to load.
 */
#define _POSIX_C_SOURCE 200809L

#include "tlc_runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- The slice of the driver API we use --------------------------------- */

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef unsigned long long CUdeviceptr; /* the 64-bit (_v2) pointer type */

enum { CUDA_SUCCESS = 0 };

enum { /* CUjit_option */
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 };

/* A TMA descriptor: 128 opaque bytes. CUDA 12's cuda.h aligns it to 64 bytes,
 * CUDA 13's to 128; the stricter one suits both. */
typedef struct {
  _Alignas(128) uint64_t opaque[16];
} CUtensorMap;
enum { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum { /* CUtensorMapSwizzle */
  CU_TENSOR_MAP_SWIZZLE_NONE = 0,
  CU_TENSOR_MAP_SWIZZLE_32B = 1,
  CU_TENSOR_MAP_SWIZZLE_64B = 2,
  CU_TENSOR_MAP_SWIZZLE_128B = 3
};
enum { /* CUtensorMapL2promotion */
  CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
  CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
  CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
  CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3
};
enum { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 }; /* out-of-bounds reads give zeros */
#define TLC_MAX_TENSOR_MAP_RANK 5
enum { CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9 };
enum {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97
};

/*
 * Symbol names. Only the unsuffixed names are used: none of these calls had
 * its ABI changed by a _v2 (unlike cuMemAlloc or cuCtxCreate), and newer
 * drivers export cuCtxSynchronize_v2 / cuCtxGetDevice_v2 with a different
 * signature (an explicit CUcontext argument), so resolving "_v2 first" would
 * be wrong here.
 */
#define TLC_DRIVER_FUNCTIONS(X)                                                \
  X(cuInit, (unsigned flags))                                                  \
  X(cuGetErrorName, (CUresult e, const char **s))                              \
  X(cuGetErrorString, (CUresult e, const char **s))                            \
  X(cuDeviceGet, (CUdevice * d, int ordinal))                                  \
  X(cuDeviceGetAttribute, (int *v, int attr, CUdevice d))                      \
  X(cuDevicePrimaryCtxRetain, (CUcontext * c, CUdevice d))                     \
  X(cuCtxGetCurrent, (CUcontext * c))                                          \
  X(cuCtxSetCurrent, (CUcontext c))                                            \
  X(cuCtxGetDevice, (CUdevice * d))                                            \
  X(cuCtxSynchronize, (void))                                                  \
  X(cuPointerGetAttribute, (void *data, int attr, CUdeviceptr p))              \
  X(cuModuleLoadDataEx, (CUmodule * m, const void *image, unsigned n,          \
                         int *options, void **values))                         \
  X(cuModuleGetFunction, (CUfunction * f, CUmodule m, const char *name))       \
  X(cuFuncSetAttribute, (CUfunction f, int attr, int value))                   \
  X(cuLaunchKernel, (CUfunction f, unsigned gx, unsigned gy, unsigned gz,      \
                     unsigned bx, unsigned by, unsigned bz, unsigned smem,     \
                     CUstream s, void **params, void **extra))

/* Device memory, for the global scratch tensors (T.alloc_global) of a call
 * whose arguments are not torch tensors; resolved, not required, as only
 * those calls need them. Here the _v2 names are the right ones: the
 * unsuffixed cuMemAlloc/cuMemFree take 32-bit pointers. cuMemsetD8Async has
 * no _v2: it came with 64-bit pointers (and, unsuffixed, takes NULL as the
 * legacy default stream, as cuLaunchKernel does). */
#define TLC_MEMORY_DRIVER_FUNCTIONS(X)                                         \
  X(cuMemAlloc_v2, (CUdeviceptr * p, size_t bytes))                            \
  X(cuMemFree_v2, (CUdeviceptr p))                                             \
  X(cuMemsetD8Async,                                                           \
    (CUdeviceptr p, unsigned char value, size_t n, CUstream s))

/* Entry points only some kernels need, resolved but not required at
 * initialisation: a driver older than CUDA 12.0 lacks cuTensorMapEncodeTiled
 * yet still launches every kernel without TMA. */
#define TLC_OPTIONAL_DRIVER_FUNCTIONS(X)                                       \
  X(cuTensorMapEncodeTiled,                                                    \
    (CUtensorMap * map, int data_type, uint32_t rank, void *address,           \
     const uint64_t *dims, const uint64_t *strides, const uint32_t *box,       \
     const uint32_t *element_strides, int interleave, int swizzle,             \
     int l2_promotion, int oob_fill))                                          \
  X(cuLaunchCooperativeKernel,                                                 \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,         \
     unsigned by, unsigned bz, unsigned smem, CUstream s, void **params))

#define TLC_DECLARE_POINTER(name, args) static CUresult (*p_##name) args;
TLC_DRIVER_FUNCTIONS(TLC_DECLARE_POINTER)
TLC_OPTIONAL_DRIVER_FUNCTIONS(TLC_DECLARE_POINTER)
TLC_MEMORY_DRIVER_FUNCTIONS(TLC_DECLARE_POINTER)

/* ---- State ---------------------------------------------------------------- */

/* Guards the driver initialisation, the retained contexts and module cache. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_libcuda;
/* Symbols resolved and cuInit succeeded; read without the lock by every
 * launch (set once, after the symbols it publishes). */
static atomic_int g_ready;

/* Primary contexts we retained, retained once per device and kept for the
 * life of the process (releasing them could tear down PyTorch's context). */
#define TLC_MAX_PARAMS 512
#define TLC_MAP_SLOTS 16 /* 8-byte slots per 128-byte tensor map */
#define TLC_MAX_DEVICES 64
/* Read without the lock by launches; written once per device under it. */
static _Atomic(CUcontext) g_primary[TLC_MAX_DEVICES];

typedef struct ModuleEntry {
  struct ModuleEntry *next;
  CUcontext ctx;
  uint64_t hash;
  size_t len;
  char *ptx; /* our own copy: a hash hit is confirmed by full comparison */
  CUmodule module;
} ModuleEntry;
static ModuleEntry *g_modules;

/* ---- Error messages -------------------------------------------------------- */

static int fail(char *err, size_t err_len, const char *fmt, ...) {
  if (err && err_len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
  }
  return 1;
}

/* "NAME (description)" for a driver error code, even if the lookup fails. */
static void describe(CUresult rc, char *out, size_t out_len) {
  const char *name = NULL, *text = NULL;
  if (!p_cuGetErrorName || p_cuGetErrorName(rc, &name) != CUDA_SUCCESS)
    name = NULL;
  if (!p_cuGetErrorString || p_cuGetErrorString(rc, &text) != CUDA_SUCCESS)
    text = NULL;
  if (name)
    snprintf(out, out_len, "%s (%s)", name, text ? text : "no description");
  else
    snprintf(out, out_len, "CUDA error %d", rc);
}

/* "<call> failed[ for kernel 'k']: NAME (description)<suffix>" */
static int cu_fail(CUresult rc, const char *call, const char *kernel,
                   const char *suffix, char *err, size_t err_len) {
  char what[256];
  describe(rc, what, sizeof what);
  if (kernel && *kernel)
    return fail(err, err_len, "%s failed for kernel '%s': %s%s", call, kernel,
                what, suffix ? suffix : "");
  return fail(err, err_len, "%s failed: %s%s", call, what,
              suffix ? suffix : "");
}

/* ---- Initialisation ---------------------------------------------------------- */

static int init_locked(char *err, size_t err_len) {
  if (atomic_load_explicit(&g_ready, memory_order_relaxed))
    return 0;
  if (!g_libcuda) {
    dlerror();
    g_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g_libcuda) {
      const char *why = dlerror();
      return fail(err, err_len,
                  "tlc runtime: cannot load the CUDA driver (libcuda.so.1): "
                  "%s; a machine with an NVIDIA GPU and driver is needed to "
                  "launch kernels",
                  why ? why : "unknown error");
    }
  }
  /* memcpy: ISO C has no cast between object and function pointers. */
#define TLC_RESOLVE_OPTIONAL(name, args)                                       \
  {                                                                            \
    void *sym = dlsym(g_libcuda, #name);                                       \
    memcpy(&p_##name, &sym, sizeof sym);                                       \
  }
#define TLC_RESOLVE(name, args)                                                \
  TLC_RESOLVE_OPTIONAL(name, args)                                             \
  if (!p_##name)                                                               \
    return fail(err, err_len,                                                  \
                "tlc runtime: the CUDA driver (libcuda.so.1) lacks the "       \
                "entry point %s; the driver is probably too old",              \
                #name);
  TLC_DRIVER_FUNCTIONS(TLC_RESOLVE)
  TLC_MEMORY_DRIVER_FUNCTIONS(TLC_RESOLVE_OPTIONAL)
  TLC_OPTIONAL_DRIVER_FUNCTIONS(TLC_RESOLVE_OPTIONAL)
#undef TLC_RESOLVE
#undef TLC_RESOLVE_OPTIONAL
  CUresult rc = p_cuInit(0);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuInit", NULL,
                   "; the CUDA driver is installed but no usable GPU was found",
                   err, err_len);
  atomic_store_explicit(&g_ready, 1, memory_order_release);
  return 0;
}

int tlc_rt_init(char *err, size_t err_len) {
  /* Every call initialises first: once done, no lock (launches call this). */
  if (atomic_load_explicit(&g_ready, memory_order_acquire))
    return 0;
  pthread_mutex_lock(&g_lock);
  int rc = init_locked(err, err_len);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* ---- Contexts ------------------------------------------------------------------ */

static int primary_context(int device, CUcontext *ctx_out, char *err,
                           size_t err_len);

int tlc_rt_ensure_context(int device, char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  CUcontext current = NULL;
  CUresult rc = p_cuCtxGetCurrent(&current);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxGetCurrent", NULL, NULL, err, err_len);
  if (current) {
    if (device < 0)
      return 0;
    CUdevice owner = -1;
    rc = p_cuCtxGetDevice(&owner);
    if (rc != CUDA_SUCCESS)
      return cu_fail(rc, "cuCtxGetDevice", NULL, NULL, err, err_len);
    if (owner == device)
      return 0;
  }
  if (device < 0)
    device = 0;
  CUcontext ctx = NULL;
  if (primary_context(device, &ctx, err, err_len))
    return 1;
  rc = p_cuCtxSetCurrent(ctx);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxSetCurrent", NULL, NULL, err, err_len);
  return 0;
}

/* The primary context of `device`, retained once and kept. */
static int primary_context(int device, CUcontext *ctx_out, char *err,
                           size_t err_len) {
  if (device < 0 || device >= TLC_MAX_DEVICES)
    return fail(err, err_len, "tlc runtime: device %d is out of range", device);
  CUcontext ctx = atomic_load_explicit(&g_primary[device], memory_order_acquire);
  if (ctx) { /* retained before: no lock (every launch asks) */
    *ctx_out = ctx;
    return 0;
  }
  CUresult rc;
  pthread_mutex_lock(&g_lock);
  ctx = atomic_load_explicit(&g_primary[device], memory_order_relaxed);
  if (!ctx) {
    CUdevice dev;
    char suffix[64];
    snprintf(suffix, sizeof suffix, " (device %d)", device);
    rc = p_cuDeviceGet(&dev, device);
    if (rc != CUDA_SUCCESS) {
      pthread_mutex_unlock(&g_lock);
      return cu_fail(rc, "cuDeviceGet", NULL, suffix, err, err_len);
    }
    rc = p_cuDevicePrimaryCtxRetain(&ctx, dev);
    if (rc != CUDA_SUCCESS) {
      pthread_mutex_unlock(&g_lock);
      return cu_fail(rc, "cuDevicePrimaryCtxRetain", NULL, suffix, err,
                     err_len);
    }
    atomic_store_explicit(&g_primary[device], ctx, memory_order_release);
  }
  pthread_mutex_unlock(&g_lock);
  *ctx_out = ctx;
  return 0;
}

int tlc_rt_current_context(void **ctx_out, char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  CUcontext current = NULL;
  CUresult rc = p_cuCtxGetCurrent(&current);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxGetCurrent", NULL, NULL, err, err_len);
  *ctx_out = current;
  return 0;
}

int tlc_rt_pointer_device(const void *ptr, int *device_out, char *err,
                          size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  int ordinal = -1;
  CUresult rc = p_cuPointerGetAttribute(
      &ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)(uintptr_t)ptr);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuPointerGetAttribute(DEVICE_ORDINAL)", NULL,
                   "; is it a CUDA device pointer?", err, err_len);
  *device_out = ordinal;
  return 0;
}

/* The device of the current context (initialising the driver first). */
static int current_device(CUdevice *dev, char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  CUresult rc = p_cuCtxGetDevice(dev);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxGetDevice", NULL, "", err, err_len);
  return 0;
}

int tlc_rt_device_capability(int *major_out, int *minor_out, char *err,
                             size_t err_len) {
  CUdevice dev;
  if (current_device(&dev, err, err_len))
    return 1;
  CUresult rc = p_cuDeviceGetAttribute(major_out, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  if (rc == CUDA_SUCCESS)
    rc = p_cuDeviceGetAttribute(minor_out, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuDeviceGetAttribute(COMPUTE_CAPABILITY)", NULL, "", err, err_len);
  return 0;
}

int tlc_rt_device_sm_count(int *count_out, char *err, size_t err_len) {
  CUdevice dev;
  if (current_device(&dev, err, err_len))
    return 1;
  int count = 0;
  CUresult rc = p_cuDeviceGetAttribute(&count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", NULL, "", err,
                   err_len);
  if (count < 1)
    return fail(err, err_len,
                "tlc runtime: the device reports %d multiprocessors", count);
  *count_out = count;
  return 0;
}

/* ---- Modules --------------------------------------------------------------------- */

static uint64_t fnv1a(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) {
    h ^= (unsigned char)s[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* Large enough for ptxas diagnostics of a broken kernel. */
#define TLC_JIT_LOG_SIZE 16384

static int load_locked(CUcontext ctx, const char *ptx, size_t len,
                       uint64_t hash, const char *kernel, CUmodule *out,
                       char *err, size_t err_len) {
  for (ModuleEntry *e = g_modules; e; e = e->next) {
    if (e->ctx == ctx && e->hash == hash && e->len == len &&
        memcmp(e->ptx, ptx, len) == 0) {
      *out = e->module;
      return 0;
    }
  }
  static char error_log[TLC_JIT_LOG_SIZE], info_log[TLC_JIT_LOG_SIZE];
  error_log[0] = info_log[0] = '\0';
  int options[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                    CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[4] = {error_log, (void *)(uintptr_t)TLC_JIT_LOG_SIZE, info_log,
                     (void *)(uintptr_t)TLC_JIT_LOG_SIZE};
  CUmodule module = NULL;
  CUresult rc = p_cuModuleLoadDataEx(&module, ptx, 4, options, values);
  if (rc != CUDA_SUCCESS) {
    error_log[TLC_JIT_LOG_SIZE - 1] = '\0';
    char suffix[TLC_JIT_LOG_SIZE + 64];
    snprintf(suffix, sizeof suffix, "\nJIT error log:\n%s",
             error_log[0] ? error_log : "(empty)");
    return cu_fail(rc, "cuModuleLoadDataEx", kernel, suffix, err, err_len);
  }
  ModuleEntry *e = malloc(sizeof *e);
  char *copy = malloc(len + 1);
  if (e && copy) { /* on OOM the module still works, it is just not cached */
    memcpy(copy, ptx, len + 1);
    *e = (ModuleEntry){g_modules, ctx, hash, len, copy, module};
    g_modules = e;
  } else {
    free(e);
    free(copy);
  }
  *out = module;
  return 0;
}

int tlc_rt_load_module(const char *ptx, const char *kernel_name,
                       void **module_out, char *err, size_t err_len) {
  if (!ptx || !module_out)
    return fail(err, err_len, "tlc_rt_load_module: null argument");
  if (tlc_rt_init(err, err_len))
    return 1;
  CUcontext ctx = NULL;
  CUresult rc = p_cuCtxGetCurrent(&ctx);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxGetCurrent", kernel_name, NULL, err, err_len);
  if (!ctx)
    return fail(err, err_len,
                "cannot load the module of kernel '%s': no CUDA context is "
                "current (call tlc_rt_ensure_context first)",
                kernel_name ? kernel_name : "?");
  size_t len = strlen(ptx);
  uint64_t hash = fnv1a(ptx, len); /* hashed outside the lock */
  CUmodule module = NULL;
  pthread_mutex_lock(&g_lock);
  int status = load_locked(ctx, ptx, len, hash, kernel_name, &module, err,
                           err_len);
  pthread_mutex_unlock(&g_lock);
  if (status == 0)
    *module_out = module;
  return status;
}

int tlc_rt_get_function(void *module, const char *name, void **fn_out,
                        char *err, size_t err_len) {
  if (!module || !name || !fn_out)
    return fail(err, err_len, "tlc_rt_get_function: null argument");
  if (tlc_rt_init(err, err_len))
    return 1;
  CUfunction fn = NULL;
  CUresult rc = p_cuModuleGetFunction(&fn, (CUmodule)module, name);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuModuleGetFunction", name,
                   "; is the entry name in the PTX the kernel name?", err,
                   err_len);
  *fn_out = fn;
  return 0;
}

/* ---- Launching --------------------------------------------------------------------- */

int tlc_rt_set_dynamic_smem(void *fn, int bytes, const char *kernel_name,
                            char *err, size_t err_len) {
  if (!fn)
    return fail(err, err_len, "tlc_rt_set_dynamic_smem: null function");
  if (tlc_rt_init(err, err_len))
    return 1;
  CUresult rc = p_cuFuncSetAttribute(
      (CUfunction)fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  if (rc == CUDA_SUCCESS)
    return 0;
  /* Say what the device allows: the usual cause is asking for too much. */
  char suffix[160];
  CUdevice dev;
  int limit = -1;
  if (p_cuCtxGetDevice(&dev) == CUDA_SUCCESS &&
      p_cuDeviceGetAttribute(
          &limit, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev) ==
          CUDA_SUCCESS)
    snprintf(suffix, sizeof suffix,
             "; asked for %d bytes of dynamic shared memory, the device "
             "allows at most %d per block",
             bytes, limit);
  else
    snprintf(suffix, sizeof suffix,
             "; asked for %d bytes of dynamic shared memory", bytes);
  return cu_fail(rc, "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                 kernel_name, suffix, err, err_len);
}

/* The functions launched cooperatively (T.sync_grid: all blocks resident at
 * once); registered once per loaded function, read lock-free by launches. */
#define TLC_MAX_COOPERATIVE 1024
static void *g_cooperative[TLC_MAX_COOPERATIVE];
static atomic_int g_n_cooperative;

int tlc_rt_set_cooperative(void *fn, char *err, size_t err_len) {
  if (!fn)
    return fail(err, err_len, "tlc_rt_set_cooperative: null function");
  if (tlc_rt_init(err, err_len))
    return 1;
  if (!p_cuLaunchCooperativeKernel)
    return fail(err, err_len,
                "this CUDA driver has no cuLaunchCooperativeKernel, which a "
                "kernel using T.sync_grid needs");
  pthread_mutex_lock(&g_lock);
  int n = atomic_load(&g_n_cooperative), status = 0;
  int known = 0;
  for (int i = 0; i < n; ++i)
    known |= g_cooperative[i] == fn;
  if (!known && n == TLC_MAX_COOPERATIVE)
    status = fail(err, err_len, "tlc runtime: more than %d cooperative kernels loaded",
                  TLC_MAX_COOPERATIVE);
  else if (!known) {
    g_cooperative[n] = fn;
    atomic_store(&g_n_cooperative, n + 1); /* after the entry it publishes */
  }
  pthread_mutex_unlock(&g_lock);
  return status;
}

static int is_cooperative(void *fn) {
  int n = atomic_load(&g_n_cooperative);
  for (int i = 0; i < n; ++i)
    if (g_cooperative[i] == fn)
      return 1;
  return 0;
}

/* cuLaunchKernel (cuLaunchCooperativeKernel for a function registered by
 * tlc_rt_set_cooperative), its failure described with the launch's shape. */
static int launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                  unsigned by, unsigned bz, unsigned smem_bytes, void *stream,
                  void **params, const char *kernel_name, char *err,
                  size_t err_len) {
  int cooperative = is_cooperative(fn);
  CUresult rc = cooperative
                    ? p_cuLaunchCooperativeKernel((CUfunction)fn, gx, gy, gz, bx, by,
                                                  bz, smem_bytes, (CUstream)stream, params)
                    : p_cuLaunchKernel((CUfunction)fn, gx, gy, gz, bx, by, bz,
                                       smem_bytes, (CUstream)stream, params, NULL);
  if (rc == CUDA_SUCCESS)
    return 0;
  char suffix[160];
  snprintf(suffix, sizeof suffix,
           " [grid %ux%ux%u, block %ux%ux%u, dynamic shared memory %u bytes]",
           gx, gy, gz, bx, by, bz, smem_bytes);
  return cu_fail(rc, cooperative ? "cuLaunchCooperativeKernel" : "cuLaunchKernel",
                 kernel_name, suffix, err, err_len);
}

int tlc_rt_launch(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                  unsigned by, unsigned bz, unsigned smem_bytes, void *stream,
                  void **params, const char *kernel_name, char *err,
                  size_t err_len) {
  if (!fn)
    return fail(err, err_len, "tlc_rt_launch: null function");
  if (tlc_rt_init(err, err_len))
    return 1;
  return launch(fn, gx, gy, gz, bx, by, bz, smem_bytes, stream, params, kernel_name,
                err, err_len);
}

int tlc_rt_launch_on(int device, void *fn, const uint32_t *dims, void *stream,
                     const uint64_t *slots, unsigned n_slots, unsigned n_maps,
                     const char *kernel_name, char *err, size_t err_len) {
  if (!fn || !dims || (n_slots && !slots))
    return fail(err, err_len, "tlc_rt_launch_on: null argument");
  unsigned gx = dims[0], gy = dims[1], gz = dims[2], bx = dims[3], by = dims[4],
           bz = dims[5], smem_bytes = dims[6];
  if (n_slots > TLC_MAX_PARAMS)
    return fail(err, err_len, "tlc_rt_launch_on: %u parameter values, at most %d",
                n_slots, TLC_MAX_PARAMS);
  if (n_maps > n_slots / TLC_MAP_SLOTS)
    return fail(err, err_len,
                "tlc_rt_launch_on: %u tensor maps do not fit in %u slots", n_maps,
                n_slots);
  if (tlc_rt_init(err, err_len))
    return 1;
  CUcontext want = NULL, previous = NULL;
  if (primary_context(device, &want, err, err_len))
    return 1;
  CUresult rc = p_cuCtxGetCurrent(&previous);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxGetCurrent", NULL, NULL, err, err_len);
  if (previous != want && (rc = p_cuCtxSetCurrent(want)) != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxSetCurrent", NULL, NULL, err, err_len);
  void *params[TLC_MAX_PARAMS];
  unsigned n_plain = n_slots - n_maps * TLC_MAP_SLOTS;
  for (unsigned i = 0; i < n_plain; ++i)
    params[i] = (void *)&slots[i];
  /* The maps are copied to storage aligned as a CUtensorMap is (the caller's
   * buffer need not be). */
  CUtensorMap maps[TLC_MAX_PARAMS / TLC_MAP_SLOTS];
  for (unsigned j = 0; j < n_maps; ++j) {
    memcpy(&maps[j], &slots[n_plain + j * TLC_MAP_SLOTS], sizeof maps[j]);
    params[n_plain + j] = &maps[j];
  }
  int status = launch(fn, gx, gy, gz, bx, by, bz, smem_bytes, stream, params,
                      kernel_name, err, err_len);
  /* Leave the thread's context as the caller (e.g. torch) had it. */
  if (previous != want && previous)
    p_cuCtxSetCurrent(previous);
  return status;
}

#define TLC_PLAN_NAME_OFFSET 56

static _Thread_local char g_launch_error[4096];

int tlc_rt_launch_packed(const void *plan, const void *call) {
  if (!plan || !call)
    return fail(g_launch_error, sizeof g_launch_error,
                "tlc_rt_launch_packed: null argument");
  const unsigned char *p = plan;
  void *fn, *stream;
  int64_t device;
  uint32_t dims[7], n_slots, n_maps;
  memcpy(&fn, p, 8);
  memcpy(&device, p + 8, 8);
  memcpy(dims, p + 16, sizeof dims);
  memcpy(&n_slots, p + 44, 4);
  memcpy(&n_maps, p + 48, 4);
  memcpy(&stream, call, 8);
  if (device < 0 || device >= TLC_MAX_DEVICES)
    return fail(g_launch_error, sizeof g_launch_error,
                "tlc runtime: device %lld is out of range", (long long)device);
  return tlc_rt_launch_on((int)device, fn, dims, stream,
                          (const uint64_t *)((const char *)call + 8), n_slots,
                          n_maps, (const char *)p + TLC_PLAN_NAME_OFFSET,
                          g_launch_error, sizeof g_launch_error);
}

int tlc_rt_last_launch_error(char *err, size_t err_len) {
  fail(err, err_len, "%s", g_launch_error);
  return 0;
}

/* ---- Tensor maps (TMA) ---------------------------------------------------------------- */

/* Bytes per element of a CUtensorMapDataType, 0 for the ones tlc never uses. */
static unsigned tensor_map_element_size(int data_type) {
  static const unsigned sizes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2};
  return data_type >= 0 && data_type < 10 ? sizes[data_type] : 0;
}

/* "(a, b, c)" of n 64-bit values into out. */
static void show_tuple(char *out, size_t len, const uint64_t *v, unsigned n) {
  size_t at = 0;
  at += (size_t)snprintf(out, len, "(");
  for (unsigned i = 0; i < n && at < len; ++i)
    at += (size_t)snprintf(out + at, len - at, "%s%llu", i ? ", " : "",
                           (unsigned long long)v[i]);
  if (at < len)
    snprintf(out + at, len - at, ")");
}

int tlc_rt_encode_tensor_map(void *out, int data_type, unsigned rank,
                             uint64_t address, const uint64_t *sizes,
                             const uint64_t *strides_bytes, const uint32_t *box,
                             int swizzle_bytes, const char *kernel_name,
                             const char *param_name, char *err, size_t err_len) {
  const char *kernel = kernel_name ? kernel_name : "?";
  const char *param = param_name ? param_name : "?";
  if (!out || !sizes || !strides_bytes || !box)
    return fail(err, err_len, "tlc_rt_encode_tensor_map: null argument");
  unsigned element = tensor_map_element_size(data_type);
  if (rank < 1 || rank > TLC_MAX_TENSOR_MAP_RANK || !element)
    return fail(err, err_len,
                "tensor map of argument '%s' of kernel '%s': rank %u or data "
                "type %d is not supported (rank 1 to %d)",
                param, kernel, rank, data_type, TLC_MAX_TENSOR_MAP_RANK);
  if (strides_bytes[rank - 1] != element)
    return fail(err, err_len,
                "tensor map of argument '%s' of kernel '%s': the innermost "
                "stride is %llu bytes, TMA needs it to be one element (%u bytes)",
                param, kernel, (unsigned long long)strides_bytes[rank - 1],
                element);
  int swizzle;
  switch (swizzle_bytes) {
  case 0: swizzle = CU_TENSOR_MAP_SWIZZLE_NONE; break;
  case 32: swizzle = CU_TENSOR_MAP_SWIZZLE_32B; break;
  case 64: swizzle = CU_TENSOR_MAP_SWIZZLE_64B; break;
  case 128: swizzle = CU_TENSOR_MAP_SWIZZLE_128B; break;
  default:
    return fail(err, err_len,
                "tensor map of argument '%s' of kernel '%s': swizzle %d bytes, "
                "expected 0, 32, 64 or 128",
                param, kernel, swizzle_bytes);
  }
  if (!p_cuTensorMapEncodeTiled) {
    if (tlc_rt_init(err, err_len))
      return 1;
    if (!p_cuTensorMapEncodeTiled)
      return fail(err, err_len,
                  "kernel '%s' uses TMA (argument '%s'), but the CUDA driver "
                  "(libcuda.so.1) lacks cuTensorMapEncodeTiled; CUDA 12.0 or "
                  "later is needed",
                  kernel, param);
  }
  /* The driver counts dimensions innermost first; Python outermost first. */
  uint64_t dims[TLC_MAX_TENSOR_MAP_RANK], strides[TLC_MAX_TENSOR_MAP_RANK];
  uint32_t boxes[TLC_MAX_TENSOR_MAP_RANK], ones[TLC_MAX_TENSOR_MAP_RANK];
  for (unsigned i = 0; i < rank; ++i) {
    dims[i] = sizes[rank - 1 - i];
    boxes[i] = box[rank - 1 - i];
    ones[i] = 1;
    if (i > 0) /* the strides of dims 1.. only: dim 0 is contiguous */
      strides[i - 1] = strides_bytes[rank - 1 - i];
  }
  /* L2 promotion 128B: one L2 line per promoted access. A swizzled box row is
   * at most 128 bytes, so a line fetched is a line used, whereas 256B would
   * fetch a second line that narrow boxes never touch; wide unswizzled boxes
   * might gain from 256B, which only a measurement on a GPU can tell. */
  CUtensorMap map;
  CUresult rc = p_cuTensorMapEncodeTiled(
      &map, data_type, rank, (void *)(uintptr_t)address, dims, strides, boxes,
      ones, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (rc != CUDA_SUCCESS) {
    char shape[160], steps[160], tile[160], suffix[600];
    uint64_t box64[TLC_MAX_TENSOR_MAP_RANK];
    for (unsigned i = 0; i < rank; ++i)
      box64[i] = box[i];
    show_tuple(shape, sizeof shape, sizes, rank);
    show_tuple(steps, sizeof steps, strides_bytes, rank);
    show_tuple(tile, sizeof tile, box64, rank);
    snprintf(suffix, sizeof suffix,
             " (tensor map of argument '%s': address %#llx, sizes %s, byte "
             "strides %s, box %s, swizzle %d bytes)",
             param, (unsigned long long)address, shape, steps, tile,
             swizzle_bytes);
    return cu_fail(rc, "cuTensorMapEncodeTiled", kernel, suffix, err, err_len);
  }
  memcpy(out, &map, sizeof map);
  return 0;
}

int tlc_rt_synchronize(char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  CUcontext current = NULL;
  CUresult rc = p_cuCtxGetCurrent(&current);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxGetCurrent", NULL, NULL, err, err_len);
  if (!current) /* nothing was launched from this thread */
    return 0;
  rc = p_cuCtxSynchronize();
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuCtxSynchronize", NULL,
                   " (it also reports failures of earlier asynchronous launches)", err,
                   err_len);
  return 0;
}

int tlc_rt_mem_alloc(size_t bytes, void **ptr_out, char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  if (!p_cuMemAlloc_v2 || !p_cuMemFree_v2)
    return fail(err, err_len,
                "tlc runtime: the CUDA driver (libcuda.so.1) lacks cuMemAlloc_v2 "
                "or cuMemFree_v2, which the global scratch of arguments that are "
                "not torch tensors needs");
  CUdeviceptr ptr = 0;
  CUresult rc = p_cuMemAlloc_v2(&ptr, bytes ? bytes : 1);
  if (rc != CUDA_SUCCESS) {
    char suffix[96];
    snprintf(suffix, sizeof suffix, " (allocating %zu bytes of global scratch)",
             bytes);
    return cu_fail(rc, "cuMemAlloc", NULL, suffix, err, err_len);
  }
  *ptr_out = (void *)(uintptr_t)ptr;
  return 0;
}

int tlc_rt_mem_free(void *ptr, char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  if (!p_cuMemFree_v2)
    return fail(err, err_len, "tlc runtime: the CUDA driver lacks cuMemFree_v2");
  CUresult rc = p_cuMemFree_v2((CUdeviceptr)(uintptr_t)ptr);
  if (rc != CUDA_SUCCESS)
    return cu_fail(rc, "cuMemFree", NULL, NULL, err, err_len);
  return 0;
}

int tlc_rt_memset_d8_async(void *ptr, unsigned char value, size_t bytes,
                           void *stream, char *err, size_t err_len) {
  if (tlc_rt_init(err, err_len))
    return 1;
  if (!p_cuMemsetD8Async)
    return fail(err, err_len,
                "tlc runtime: the CUDA driver (libcuda.so.1) lacks "
                "cuMemsetD8Async, which zero-filled global scratch of "
                "arguments that are not torch tensors needs");
  CUresult rc = p_cuMemsetD8Async((CUdeviceptr)(uintptr_t)ptr, value, bytes,
                                  (CUstream)stream);
  if (rc != CUDA_SUCCESS) {
    char suffix[96];
    snprintf(suffix, sizeof suffix, " (setting %zu bytes of global scratch)",
             bytes);
    return cu_fail(rc, "cuMemsetD8Async", NULL, suffix, err, err_len);
  }
  return 0;
}

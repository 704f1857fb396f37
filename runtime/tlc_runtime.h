/*
 * tlc runtime: a thin layer over the CUDA driver API that loads PTX produced
 * by the tlc compiler and launches its kernels.
 *
 * The library never links against libcuda: it dlopen()s libcuda.so.1 at the
 * first call, so it loads (and tlc imports) on machines without a GPU, and the
 * failure comes at launch time with a readable message.
 *
 * Every function returns 0 on success and non-zero on failure; on failure a
 * human-readable, NUL-terminated message is written into err[0..err_len).
 * All functions initialise the driver themselves when needed, so calling
 * tlc_rt_init() first is optional.
 */
#ifndef TLC_RUNTIME_H
#define TLC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TLC_RT_API __attribute__((visibility("default")))
#else
#define TLC_RT_API
#endif

/* dlopen libcuda.so.1 (once) and cuInit(0). */
TLC_RT_API int tlc_rt_init(char *err, size_t err_len);

/* Make sure a context for `device` is current on the calling thread: keep the
 * current one when it belongs to `device` (or when device < 0), otherwise
 * retain the device's primary context (the one PyTorch uses) and make it
 * current. device < 0 with no current context means device 0. */
TLC_RT_API int tlc_rt_ensure_context(int device, char *err, size_t err_len);

/* The current context (NULL when none), e.g. as a cache key for functions. */
TLC_RT_API int tlc_rt_current_context(void **ctx_out, char *err, size_t err_len);

/* The device ordinal that owns a device pointer (cuPointerGetAttribute). */
TLC_RT_API int tlc_rt_pointer_device(const void *ptr, int *device_out,
                                     char *err, size_t err_len);

/* The compute capability (major, minor) of the current context's device. */
TLC_RT_API int tlc_rt_device_capability(int *major_out, int *minor_out,
                                        char *err, size_t err_len);

/* The number of streaming multiprocessors of the current context's device
 * (the grid symbol __sm_count__ of persistent kernels). */
TLC_RT_API int tlc_rt_device_sm_count(int *count_out, char *err, size_t err_len);

/* JIT-load PTX text into the current context. Loading the same text twice in
 * one context returns the same module (cached for the life of the process).
 * kernel_name is only used in error messages. */
TLC_RT_API int tlc_rt_load_module(const char *ptx, const char *kernel_name,
                                  void **module_out, char *err, size_t err_len);

TLC_RT_API int tlc_rt_get_function(void *module, const char *name,
                                   void **fn_out, char *err, size_t err_len);

/* Raise the function's dynamic shared memory limit; needed above 48 KiB. */
TLC_RT_API int tlc_rt_set_dynamic_smem(void *fn, int bytes,
                                       const char *kernel_name, char *err,
                                       size_t err_len);

/* cuLaunchKernel; params[i] points at the value of kernel parameter i.
 * stream NULL is the legacy default stream. */
TLC_RT_API int tlc_rt_launch(void *fn, unsigned gx, unsigned gy, unsigned gz,
                             unsigned bx, unsigned by, unsigned bz,
                             unsigned smem_bytes, void *stream, void **params,
                             const char *kernel_name, char *err,
                             size_t err_len);

/* Marks a loaded function to be launched cooperatively from now on
 * (cuLaunchCooperativeKernel: every block resident at once, or the launch
 * fails), as a kernel using T.sync_grid needs. */
TLC_RT_API int tlc_rt_set_cooperative(void *fn, char *err, size_t err_len);

/* The launch fast path: makes device's primary context current only for the
 * launch (the caller's context is restored after it), and passes kernel
 * parameter i from the 8-byte slot slots[i] (a value narrower than 8 bytes in
 * the slot's low bytes). The last n_maps * 16 slots are instead n_maps
 * 128-byte parameters (tensor maps, see tlc_rt_encode_tensor_map), 16
 * consecutive slots each, passed after the others in order; slots needs no
 * particular alignment. dims: grid x, y, z, block x, y, z, dynamic shared
 * memory bytes. n_slots is at most 512. */
TLC_RT_API int tlc_rt_launch_on(int device, void *fn, const uint32_t *dims,
                                void *stream, const uint64_t *slots,
                                unsigned n_slots, unsigned n_maps,
                                const char *kernel_name, char *err,
                                size_t err_len);

/* tlc_rt_launch_on with its arguments in two buffers, so that a caller
 * through an FFI (Python's ctypes) makes one cheap call per launch: `plan`
 * holds what stays the same across launches, `call` what changes.
 *
 *   plan: offset 0 fn (8 bytes), 8 device (int64), 16 dims (7 x uint32, as
 *         tlc_rt_launch_on takes them), 44 n_slots (uint32), 48 n_maps
 *         (uint32), 52 unused (4 bytes), 56 the kernel's name, NUL-terminated;
 *   call: the stream (8 bytes), then the n_slots slots of tlc_rt_launch_on;
 *
 * all little-endian, neither buffer aligned. On failure the message is kept
 * per thread until that thread's next failing call of this function, and
 * tlc_rt_last_launch_error copies it out. */
TLC_RT_API int tlc_rt_launch_packed(const void *plan, const void *call);
TLC_RT_API int tlc_rt_last_launch_error(char *err, size_t err_len);

/* Encode the TMA descriptor (CUtensorMap, 128 bytes) of a row-major tensor
 * into out[0..128), which needs no particular alignment: a tiled map with no
 * interleave, element strides 1, zeros for out-of-bounds elements.
 * data_type: a CUtensorMapDataType. rank: 1 to 5. sizes, strides_bytes and
 * box list the rank dimensions OUTERMOST first (the reverse of the driver's
 * order); strides_bytes[rank - 1] must be the element size. swizzle_bytes: 0,
 * 32, 64 or 128. kernel_name and param_name only name the map in messages.
 * Needs a CUDA 12.0 driver (cuTensorMapEncodeTiled). */
TLC_RT_API int tlc_rt_encode_tensor_map(
    void *out, int data_type, unsigned rank, uint64_t address,
    const uint64_t *sizes, const uint64_t *strides_bytes, const uint32_t *box,
    int swizzle_bytes, const char *kernel_name, const char *param_name,
    char *err, size_t err_len);

/* cuCtxSynchronize on the current context (a no-op when none is current). */
TLC_RT_API int tlc_rt_synchronize(char *err, size_t err_len);

/* cuMemAlloc in the current context: `bytes` (at least 1) of device memory,
 * 256-byte aligned, for the global scratch tensors of a kernel sequence. */
TLC_RT_API int tlc_rt_mem_alloc(size_t bytes, void **ptr_out, char *err,
                                size_t err_len);

/* cuMemFree of a pointer tlc_rt_mem_alloc returned. */
TLC_RT_API int tlc_rt_mem_free(void *ptr, char *err, size_t err_len);

/* cuMemsetD8Async: sets `bytes` bytes from `ptr` (device memory of the
 * current context) to `value`, in order on `stream` (NULL: the legacy default
 * stream); for the zero-filled global scratch tensors of a kernel sequence. */
TLC_RT_API int tlc_rt_memset_d8_async(void *ptr, unsigned char value,
                                      size_t bytes, void *stream, char *err,
                                      size_t err_len);

#ifdef __cplusplus
}
#endif

#endif /* TLC_RUNTIME_H */

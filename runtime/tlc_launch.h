/*
 * The types shared by the two halves of tlc.runtime._launch (see
 * tlc_launch.c): a Plan's parts, the Plan and Launcher objects.
 */
#ifndef TLC_LAUNCH_H
#define TLC_LAUNCH_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define TLC_MAX_RANK 8
#define TLC_MAX_ARGS 64
#define TLC_MAX_SLOTS 512 /* tlc_rt_launch_on's limit */
#define TLC_ALIGNMENT 16  /* tlc.runtime.args.ALIGNMENT */
#define TLC_MAX_PLANS 8   /* per Launcher, most recently used first */

typedef int (*LaunchPacked)(const void *plan, const void *call);
typedef int (*LastLaunchError)(char *err, size_t err_len);

enum { K_TENSOR, K_FIXED, K_FREE };
/* How a free scalar is packed: as struct's codes b h i q B H I f d ?, or by
 * a Python callable returning the 8-byte slot. */
enum { C_I8, C_I16, C_I32, C_I64, C_U8, C_U16, C_U32, C_F32, C_F64, C_BOOL, C_CALL };

typedef struct {
  int kind;
  int src;         /* args[src], or for src < 0 the output -src - 1 */
  PyObject *dtype; /* tensor: its dtype; scalars: the exact type */
  PyObject *value; /* fixed scalar: the value; free C_CALL: the callable */
  int rank;
  int64_t shape[TLC_MAX_RANK], strides[TLC_MAX_RANK];
  long device;
  int holds;      /* the tensor holds an element: its pointer is checked */
  PyObject *tail; /* tensor: slots after its two pointers; fixed: its slot */
  int code;
} Spec;

typedef struct {
  PyObject_HEAD
  Py_ssize_t n_args;
  int n_specs;
  Spec *specs;
  PyObject *device;        /* int, the stream getter's argument */
  PyObject *tensor_type;   /* torch.Tensor */
  PyObject *stream_getter; /* torch._C._cuda_getCurrentRawStream */
  LaunchPacked launch;
  LastLaunchError last_error;
  PyObject *header; /* bytes: tlc_rt_launch_packed's plan */
  Py_ssize_t call_len; /* 8 + 8 * slots, tensor maps included */
  int launches;        /* 0: an empty grid, nothing to launch */
  int n_maps;       /* tensor maps, after the slots */
  PyObject *encode; /* encode(pointers of every tensor): the maps' bytes */
  int n_outputs;
  PyObject *outputs; /* tuple of (args tuple, kwargs values tuple) for empty */
  PyObject *empty;   /* torch.empty */
} PlanObject;

typedef struct {
  PyObject_HEAD
  PyObject *plans; /* list of Plans */
  Py_ssize_t launched, missed;
} LauncherObject;

/* A tuple of ints into out[0..TLC_MAX_RANK); the rank, or -1
 * (tlc_launch_plan.c). */
int tlc_read_ints(PyObject *seq, int64_t *out);

/* The Plan type (tlc_launch_plan.c): built from plans.py's description. */
extern PyTypeObject TlcPlanType;

#endif /* TLC_LAUNCH_H */

/*
 * tlc.runtime._launch: the native launch path of tlc/runtime/plans.py.
 *
 * A Plan holds what a call with torch tensors must match to launch without
 * the full argument checks: per tensor its dtype, shape, strides and device
 * (the plan key of plans.py), per scalar its type (and value when the key
 * fixes it), and the launch's constant part (the packed descriptor slots,
 * tlc_rt_launch_packed's plan buffer). A Launcher holds a kernel's recent
 * Plans; Launcher.launch(args, stream) checks a call against them, packs the
 * stream and the slots into a stack buffer and calls tlc_rt_launch_packed of
 * the runtime library (its address comes from Python: the library the ctypes
 * side loaded, whichever TLC_RUNTIME_LIB names). It returns None whenever
 * anything differs from every Plan (another shape, dtype, device or argument
 * count, a tensor that is not exactly torch.Tensor, a null or misaligned
 * pointer, a scalar that does not encode, a stream that is not an int): the
 * caller then takes the Python path, whose full checks give the errors.
 *
 * Neither torch's nor CUDA's headers are needed: tensors are read through
 * their Python attributes, as plans.py reads them.
 */
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

static PyObject *g_launch_error; /* tlc.runtime.LaunchError */
static PyObject *s_dtype, *s_shape, *s_stride, *s_get_device, *s_data_ptr;
static PyObject *g_empty_kwnames; /* ("dtype", "device") */

/* ---- Plan ----------------------------------------------------------------- */

static void plan_dealloc(PlanObject *self) {
  for (int i = 0; i < self->n_specs; ++i) {
    Py_XDECREF(self->specs[i].dtype);
    Py_XDECREF(self->specs[i].value);
    Py_XDECREF(self->specs[i].tail);
  }
  PyMem_Free(self->specs);
  Py_XDECREF(self->device);
  Py_XDECREF(self->tensor_type);
  Py_XDECREF(self->stream_getter);
  Py_XDECREF(self->header);
  Py_XDECREF(self->encode);
  Py_XDECREF(self->outputs);
  Py_XDECREF(self->empty);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A tuple of ints into out[0..TLC_MAX_RANK); the rank, or -1. */
static int read_ints(PyObject *seq, int64_t *out) {
  if (!PyTuple_Check(seq))
    return -1;
  Py_ssize_t n = PyTuple_GET_SIZE(seq);
  if (n > TLC_MAX_RANK)
    return -1;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *v = PyTuple_GET_ITEM(seq, i);
    if (!PyLong_Check(v))
      return -1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (x == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return -1;
    }
    out[i] = x;
  }
  return (int)n;
}

static int code_of(const char *s) {
  static const char codes[] = "bhiqBHIfd?";
  const char *at = s && s[0] ? strchr(codes, s[0]) : NULL;
  return at ? (int)(at - codes) : -1;
}

/* One spec tuple of Plan(): see plans.native_specs. */
static int parse_spec(PyObject *t, Spec *s) {
  const char *kind;
  if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) < 4 ||
      !(kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, 0))))
    goto bad;
  s->src = (int)PyLong_AsLong(PyTuple_GET_ITEM(t, 1));
  if (PyErr_Occurred())
    return -1;
  s->dtype = Py_NewRef(PyTuple_GET_ITEM(t, 2));
  if (kind[0] == 't') { /* ("t", src, dtype, shape, strides, device, holds, tail) */
    if (PyTuple_GET_SIZE(t) != 8)
      goto bad;
    s->kind = K_TENSOR;
    int rank = read_ints(PyTuple_GET_ITEM(t, 3), s->shape);
    if (rank < 0 || read_ints(PyTuple_GET_ITEM(t, 4), s->strides) != rank)
      goto bad;
    s->rank = rank;
    s->device = PyLong_AsLong(PyTuple_GET_ITEM(t, 5));
    s->holds = PyObject_IsTrue(PyTuple_GET_ITEM(t, 6));
    if (PyErr_Occurred())
      return -1;
    s->tail = Py_NewRef(PyTuple_GET_ITEM(t, 7));
    if (!PyBytes_Check(s->tail) || PyBytes_GET_SIZE(s->tail) != 16 * (Py_ssize_t)rank + 8)
      goto bad;
  } else if (kind[0] == 'f') { /* ("f", src, type, value, slot) */
    if (PyTuple_GET_SIZE(t) != 5)
      goto bad;
    s->kind = K_FIXED;
    s->value = Py_NewRef(PyTuple_GET_ITEM(t, 3));
    s->tail = Py_NewRef(PyTuple_GET_ITEM(t, 4));
    if (!PyBytes_Check(s->tail) || PyBytes_GET_SIZE(s->tail) != 8)
      goto bad;
  } else if (kind[0] == 's') { /* ("s", src, type, struct code or callable) */
    s->kind = K_FREE;
    PyObject *how = PyTuple_GET_ITEM(t, 3);
    if (PyUnicode_Check(how)) {
      s->code = code_of(PyUnicode_AsUTF8(how));
      if (s->code < 0)
        goto bad;
    } else {
      s->code = C_CALL;
      s->value = Py_NewRef(how);
    }
  } else {
    goto bad;
  }
  return 0;
bad:
  PyErr_SetString(PyExc_ValueError, "tlc.runtime._launch.Plan: malformed spec");
  return -1;
}

static PyObject *plan_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  Py_ssize_t n_args, call_len;
  PyObject *specs, *device, *tensor_type, *getter, *header, *encode, *outputs, *empty;
  unsigned long long launch, last_error;
  int launches, n_maps;
  if (kw && PyDict_GET_SIZE(kw)) {
    PyErr_SetString(PyExc_TypeError, "Plan() takes positional arguments only");
    return NULL;
  }
  if (!PyArg_ParseTuple(args, "nO!OOOKKSnpiOO!O:Plan", &n_args, &PyTuple_Type, &specs,
                        &device, &tensor_type, &getter, &launch, &last_error, &header,
                        &call_len, &launches, &n_maps, &encode, &PyTuple_Type, &outputs,
                        &empty))
    return NULL;
  Py_ssize_t n_specs = PyTuple_GET_SIZE(specs);
  if (n_args < 0 || n_args > TLC_MAX_ARGS || n_specs > TLC_MAX_ARGS || !launch ||
      !last_error || call_len < 8 || call_len > 8 + 8 * TLC_MAX_SLOTS ||
      n_maps < 0 || n_maps > TLC_MAX_SLOTS / 16 || (n_maps && !PyCallable_Check(encode)) ||
      PyTuple_GET_SIZE(outputs) > TLC_MAX_ARGS ||
      !PyLong_Check(device)) {
    PyErr_SetString(PyExc_ValueError, "tlc.runtime._launch.Plan: out of range");
    return NULL;
  }
  PlanObject *self = (PlanObject *)type->tp_alloc(type, 0);
  if (!self)
    return NULL;
  self->specs = PyMem_Calloc(n_specs ? n_specs : 1, sizeof(Spec));
  if (!self->specs) {
    Py_DECREF(self);
    return PyErr_NoMemory();
  }
  self->n_args = n_args;
  self->device = Py_NewRef(device);
  self->tensor_type = Py_NewRef(tensor_type);
  self->stream_getter = Py_NewRef(getter);
  self->launch = (LaunchPacked)(uintptr_t)launch;
  self->last_error = (LastLaunchError)(uintptr_t)last_error;
  self->header = Py_NewRef(header);
  self->call_len = call_len;
  self->launches = launches;
  self->encode = Py_NewRef(encode);
  self->outputs = Py_NewRef(outputs);
  self->empty = Py_NewRef(empty);
  self->n_outputs = (int)PyTuple_GET_SIZE(outputs);
  Py_ssize_t packed = 8;
  for (Py_ssize_t i = 0; i < n_specs; ++i) {
    Spec *s = &self->specs[i];
    self->n_specs = (int)i + 1;
    if (parse_spec(PyTuple_GET_ITEM(specs, i), s)) {
      Py_DECREF(self);
      return NULL;
    }
    if ((s->src < 0 ? -s->src > self->n_outputs : s->src >= n_args)) {
      PyErr_SetString(PyExc_ValueError, "tlc.runtime._launch.Plan: source out of range");
      Py_DECREF(self);
      return NULL;
    }
    packed += s->kind == K_TENSOR ? 16 + PyBytes_GET_SIZE(s->tail) : 8;
  }
  self->n_maps = n_maps;
  if (packed + 128 * n_maps != call_len) {
    PyErr_Format(PyExc_ValueError,
                 "tlc.runtime._launch.Plan: the specs pack %zd bytes, the call has %zd",
                 packed + 128 * (Py_ssize_t)n_maps, call_len);
    Py_DECREF(self);
    return NULL;
  }
  for (int k = 0; k < self->n_outputs; ++k) {
    PyObject *o = PyTuple_GET_ITEM(outputs, k); /* (shape, dtype, device) */
    if (!PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 3 || !PyCallable_Check(empty)) {
      PyErr_SetString(PyExc_ValueError, "tlc.runtime._launch.Plan: malformed outputs");
      Py_DECREF(self);
      return NULL;
    }
  }
  return (PyObject *)self;
}

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tlc.runtime._launch.Plan",
    .tp_basicsize = sizeof(PlanObject),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Plan(n_args, specs, device, tensor_type, stream_getter, launch, last_error, "
              "header, call_len, launches, n_maps, encode, outputs, empty): see plans.py",
    .tp_new = plan_new,
};

/* ---- Reading a call --------------------------------------------------------- */

/* What a call's tensor argument showed, read once however many plans look. */
typedef struct {
  int state; /* 0 unread, 1 read, -1 not readable (the call misses) */
  PyObject *dtype;
  int rank;
  long device;
  int64_t shape[TLC_MAX_RANK], strides[TLC_MAX_RANK];
} Seen;

static PyObject *call_method(PyObject *obj, PyObject *name) {
  return PyObject_VectorcallMethod(name, &obj, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

/* 0 read, -1 not readable (any error cleared: the Python path decides). */
static int see(PyObject *t, PyObject *tensor_type, Seen *seen) {
  if (seen->state)
    return seen->state > 0 ? 0 : -1;
  seen->state = -1;
  if ((PyObject *)Py_TYPE(t) != tensor_type)
    return -1;
  PyObject *shape = NULL, *strides = NULL, *device = NULL;
  seen->dtype = PyObject_GetAttr(t, s_dtype);
  if (!seen->dtype || !(shape = PyObject_GetAttr(t, s_shape)) ||
      !(strides = call_method(t, s_stride)) || !(device = call_method(t, s_get_device)))
    goto fail;
  seen->rank = read_ints(shape, seen->shape);
  if (seen->rank < 0 || read_ints(strides, seen->strides) != seen->rank ||
      !PyLong_Check(device))
    goto fail;
  seen->device = PyLong_AsLong(device);
  if (seen->device == -1 && PyErr_Occurred())
    goto fail;
  Py_DECREF(shape);
  Py_DECREF(strides);
  Py_DECREF(device);
  seen->state = 1;
  return 0;
fail:
  PyErr_Clear();
  Py_XDECREF(shape);
  Py_XDECREF(strides);
  Py_XDECREF(device);
  return -1;
}

/* 1 when `v` equals `want` (identity first), 0 when not, -1 on error. */
static int same(PyObject *v, PyObject *want) {
  if (v == want)
    return 1;
  int eq = PyObject_RichCompareBool(v, want, Py_EQ);
  if (eq < 0)
    PyErr_Clear();
  return eq > 0;
}

/* Whether the call's arguments have the plan's key. */
static int matches(PlanObject *p, PyObject *const *args, Seen *seen) {
  for (int i = 0; i < p->n_specs; ++i) {
    Spec *s = &p->specs[i];
    if (s->src < 0)
      continue; /* an output this call allocates */
    PyObject *a = args[s->src];
    switch (s->kind) {
    case K_TENSOR: {
      Seen *t = &seen[s->src];
      if (see(a, p->tensor_type, t) || t->rank != s->rank || t->device != s->device ||
          memcmp(t->shape, s->shape, sizeof(int64_t) * s->rank) ||
          memcmp(t->strides, s->strides, sizeof(int64_t) * s->rank) ||
          !same(t->dtype, s->dtype))
        return 0;
      break;
    }
    case K_FIXED:
      if ((PyObject *)Py_TYPE(a) != s->dtype || !same(a, s->value))
        return 0;
      break;
    default:
      if ((PyObject *)Py_TYPE(a) != s->dtype)
        return 0;
    }
  }
  return 1;
}

/* ---- Packing and launching -------------------------------------------------- */

/* A 64-bit value from an int (no other type); 0 and the value, or -1. */
static int read_u64(PyObject *v, uint64_t *out) {
  if (!PyLong_CheckExact(v))
    return -1;
  unsigned long long x = PyLong_AsUnsignedLongLong(v);
  if (x == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  *out = x;
  return 0;
}

/* A free scalar's slot as struct.pack packs it; -1 when struct would refuse
 * it (the full checks then say why), -2 on an error to raise. */
static int pack_scalar(const Spec *s, PyObject *v, unsigned char *slot) {
  memset(slot, 0, 8);
  if (s->code == C_CALL) {
    PyObject *b = PyObject_CallOneArg(s->value, v);
    if (!b) {
      if (!PyErr_ExceptionMatches(PyExc_Exception))
        return -2;
      PyErr_Clear();
      return -1;
    }
    int ok = PyBytes_Check(b) && PyBytes_GET_SIZE(b) == 8;
    if (ok)
      memcpy(slot, PyBytes_AS_STRING(b), 8);
    Py_DECREF(b);
    return ok ? 0 : -1;
  }
  if (s->code == C_BOOL) {
    slot[0] = v == Py_True;
    return 0;
  }
  if (s->code == C_F32 || s->code == C_F64) {
    double x = PyFloat_CheckExact(v) ? PyFloat_AS_DOUBLE(v) : PyLong_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return -1;
    }
    if (s->code == C_F64) {
      memcpy(slot, &x, 8);
      return 0;
    }
    float y = (float)x; /* struct's 'f': a finite value past float's range fails */
    if (isinf(y) && !isinf(x))
      return -1;
    memcpy(slot, &y, 4);
    return 0;
  }
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return -1;
  }
  if (overflow) /* beyond int64: no code here takes it */
    return -1;
  static const long long lo[] = {-128, -32768, -2147483648LL, 0, 0, 0, 0};
  static const long long hi[] = {127, 32767, 2147483647LL, 0, 255, 65535, 4294967295LL};
  if (s->code != C_I64 && (x < lo[s->code] || x > hi[s->code]))
    return -1;
  memcpy(slot, &x, 8); /* little-endian: the low bytes are the narrow value */
  if (s->code == C_I8 || s->code == C_U8)
    memset(slot + 1, 0, 7);
  else if (s->code == C_I16 || s->code == C_U16)
    memset(slot + 2, 0, 6);
  else if (s->code == C_I32 || s->code == C_U32)
    memset(slot + 4, 0, 4);
  return 0;
}

/* Reads a tensor's data pointer into its two slots at `at`; -1 when it is
 * null or misaligned while the tensor holds elements (or unreadable). */
static int tensor_pointer(const Spec *s, PyObject *t, unsigned char *at, uint64_t *ptr) {
  PyObject *v = call_method(t, s_data_ptr);
  if (!v) {
    PyErr_Clear();
    return -1;
  }
  int bad = read_u64(v, ptr);
  Py_DECREF(v);
  if (bad || (s->holds && (!*ptr || *ptr % TLC_ALIGNMENT)))
    return -1;
  memcpy(at, ptr, 8);
  memcpy(at + 8, ptr, 8);
  return 0;
}

/* The call of a plan that matched: returns the result (True, or the outputs),
 * NULL with no error set when the Python path must take the call, NULL with
 * an error set to raise. */
static PyObject *run(PlanObject *p, PyObject *const *args, PyObject *stream) {
  unsigned char call[8 + 8 * TLC_MAX_SLOTS];
  uint64_t handle, ptrs[TLC_MAX_ARGS];
  PyObject *outs[TLC_MAX_ARGS];
  PyObject *result = NULL;
  int n_outs = 0, n_tensors = 0;
  if (stream == Py_None) {
    PyObject *h = PyObject_CallOneArg(p->stream_getter, p->device);
    if (!h)
      return NULL;
    int bad = read_u64(h, &handle);
    Py_DECREF(h);
    if (bad)
      return NULL;
  } else if (read_u64(stream, &handle)) {
    return NULL;
  }
  memcpy(call, &handle, 8);
  /* The arguments first, then the outputs: a call the Python path must take
   * allocates nothing here (that path allocates them itself). */
  unsigned char *at = call + 8, *out_at[TLC_MAX_ARGS];
  int out_tensor[TLC_MAX_ARGS];
  for (int i = 0; i < p->n_specs; ++i) {
    Spec *s = &p->specs[i];
    if (s->kind == K_TENSOR) {
      Py_ssize_t n = PyBytes_GET_SIZE(s->tail);
      memcpy(at + 16, PyBytes_AS_STRING(s->tail), n);
      if (s->src < 0) {
        out_at[-s->src - 1] = at;
        out_tensor[-s->src - 1] = n_tensors++;
      } else if (tensor_pointer(s, args[s->src], at, &ptrs[n_tensors++])) {
        return NULL;
      }
      at += 16 + n;
    } else if (s->kind == K_FIXED) {
      memcpy(at, PyBytes_AS_STRING(s->tail), 8);
      at += 8;
    } else {
      int rc = pack_scalar(s, args[s->src], at);
      if (rc)
        return NULL; /* -2: with the error set */
      at += 8;
    }
  }
  for (; n_outs < p->n_outputs; ++n_outs) {
    PyObject *spec = PyTuple_GET_ITEM(p->outputs, n_outs);
    PyObject *argv[3] = {PyTuple_GET_ITEM(spec, 0), PyTuple_GET_ITEM(spec, 1),
                         PyTuple_GET_ITEM(spec, 2)};
    outs[n_outs] = PyObject_Vectorcall(p->empty, argv, 1, g_empty_kwnames);
    if (!outs[n_outs])
      goto done; /* torch's error, as the Python path raises it */
    Spec *s = NULL;
    for (int i = 0; i < p->n_specs && !s; ++i)
      if (p->specs[i].src == -n_outs - 1)
        s = &p->specs[i];
    ++n_outs;
    if ((PyObject *)Py_TYPE(outs[n_outs - 1]) != p->tensor_type || !s ||
        tensor_pointer(s, outs[n_outs - 1], out_at[n_outs - 1],
                       &ptrs[out_tensor[n_outs - 1]]))
      goto done; /* e.g. under a torch mode: the Python path */
  }
  if (p->launches && p->n_maps) { /* plans.tensor_maps(plan, pointers) */
    PyObject *all = PyTuple_New(n_tensors);
    if (!all)
      goto done;
    for (int t = 0; t < n_tensors; ++t) {
      PyObject *v = PyLong_FromUnsignedLongLong(ptrs[t]);
      if (!v) {
        Py_DECREF(all);
        goto done;
      }
      PyTuple_SET_ITEM(all, t, v);
    }
    PyObject *maps = PyObject_CallOneArg(p->encode, all);
    Py_DECREF(all);
    if (!maps)
      goto done; /* the encoding's error, as the Python path raises it */
    int ok = PyBytes_Check(maps) && PyBytes_GET_SIZE(maps) == 128 * p->n_maps;
    if (ok)
      memcpy(at, PyBytes_AS_STRING(maps), 128 * p->n_maps);
    Py_DECREF(maps);
    if (!ok) {
      PyErr_SetString(PyExc_ValueError, "tlc.runtime._launch: tensor maps of another size");
      goto done;
    }
  }
  if (p->launches && p->launch(PyBytes_AS_STRING(p->header), call)) {
    char err[4096];
    p->last_error(err, sizeof err);
    PyObject *msg = PyUnicode_DecodeUTF8(err, (Py_ssize_t)strlen(err), "replace");
    if (msg && PyUnicode_GET_LENGTH(msg) == 0) {
      Py_DECREF(msg);
      msg = PyUnicode_FromString("tlc_rt_launch_packed failed");
    }
    if (msg) {
      PyErr_SetObject(g_launch_error ? g_launch_error : PyExc_RuntimeError, msg);
      Py_DECREF(msg);
    }
    goto done;
  }
  if (!p->n_outputs) {
    result = Py_NewRef(Py_True);
  } else if (p->n_outputs == 1) {
    result = outs[0];
    n_outs = 0;
  } else {
    result = PyList_New(n_outs);
    if (!result)
      goto done;
    for (int k = 0; k < n_outs; ++k)
      PyList_SET_ITEM(result, k, outs[k]);
    n_outs = 0;
  }
  return result;
done:
  for (int k = 0; k < n_outs; ++k)
    Py_DECREF(outs[k]);
  return NULL;
}

/* ---- Launcher ------------------------------------------------------------------ */

static void launcher_dealloc(LauncherObject *self) {
  Py_XDECREF(self->plans);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *launcher_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
  if ((kw && PyDict_GET_SIZE(kw)) || PyTuple_GET_SIZE(args)) {
    PyErr_SetString(PyExc_TypeError, "Launcher() takes no arguments");
    return NULL;
  }
  LauncherObject *self = (LauncherObject *)type->tp_alloc(type, 0);
  if (self && !(self->plans = PyList_New(0)))
    Py_CLEAR(self);
  return (PyObject *)self;
}

/* launch(args, stream): see the file comment. */
static PyObject *launcher_launch(LauncherObject *self, PyObject *const *argv,
                                 Py_ssize_t n) {
  if (n != 2 || !PyTuple_Check(argv[0])) {
    PyErr_SetString(PyExc_TypeError, "launch(args: tuple, stream)");
    return NULL;
  }
  PyObject *const *args = &PyTuple_GET_ITEM(argv[0], 0);
  Py_ssize_t n_args = PyTuple_GET_SIZE(argv[0]);
  PyObject *stream = argv[1];
  if (n_args > TLC_MAX_ARGS || (stream != Py_None && !PyLong_CheckExact(stream)))
    goto miss;
  Seen seen[TLC_MAX_ARGS];
  memset(seen, 0, sizeof(Seen) * (size_t)n_args);
  PyObject *result = NULL;
  Py_ssize_t n_plans = PyList_GET_SIZE(self->plans), hit = -1;
  for (Py_ssize_t i = 0; i < n_plans; ++i) {
    PlanObject *p = (PlanObject *)PyList_GET_ITEM(self->plans, i);
    if (p->n_args == n_args && matches(p, args, seen)) {
      hit = i;
      Py_INCREF(p);
      result = run(p, args, stream);
      Py_DECREF(p);
      break;
    }
  }
  for (Py_ssize_t i = 0; i < n_args; ++i)
    Py_XDECREF(seen[i].dtype);
  if (result) {
    ++self->launched;
    if (hit > 0 && hit < PyList_GET_SIZE(self->plans)) { /* most recent first */
      PyObject *p = PyList_GET_ITEM(self->plans, hit);
      Py_INCREF(p);
      if (PySequence_DelItem(self->plans, hit) || PyList_Insert(self->plans, 0, p)) {
        Py_DECREF(p);
        Py_DECREF(result);
        return NULL;
      }
      Py_DECREF(p);
    }
    return result;
  }
  if (PyErr_Occurred())
    return NULL;
miss:
  ++self->missed;
  Py_RETURN_NONE;
}

static PyObject *launcher_add(LauncherObject *self, PyObject *plan) {
  if (!PyObject_TypeCheck(plan, &PlanType)) {
    PyErr_SetString(PyExc_TypeError, "Launcher.add takes a Plan");
    return NULL;
  }
  if (PyList_Insert(self->plans, 0, plan))
    return NULL;
  if (PyList_GET_SIZE(self->plans) > TLC_MAX_PLANS &&
      PySequence_DelItem(self->plans, PyList_GET_SIZE(self->plans) - 1))
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *launcher_clear(LauncherObject *self, PyObject *unused) {
  (void)unused;
  if (PyList_SetSlice(self->plans, 0, PyList_GET_SIZE(self->plans), NULL))
    return NULL;
  Py_RETURN_NONE;
}

static PyObject *launcher_len(LauncherObject *self, void *unused) {
  (void)unused;
  return PyLong_FromSsize_t(PyList_GET_SIZE(self->plans));
}

static PyMethodDef launcher_methods[] = {
    {"launch", (PyCFunction)(void (*)(void))launcher_launch, METH_FASTCALL,
     "launch(args, stream): True (or the outputs) when launched from a plan, None "
     "when the Python path must take the call"},
    {"add", (PyCFunction)launcher_add, METH_O, "add(plan): the most recent plan first"},
    {"clear", (PyCFunction)launcher_clear, METH_NOARGS, "forgets every plan"},
    {NULL, NULL, 0, NULL}};

static PyMemberDef launcher_members[] = {
    {"launched", T_PYSSIZET, offsetof(LauncherObject, launched), READONLY,
     "calls launched (or returned) natively"},
    {"missed", T_PYSSIZET, offsetof(LauncherObject, missed), READONLY,
     "calls left to the Python path"},
    {NULL, 0, 0, 0, NULL}};

static PyGetSetDef launcher_getset[] = {
    {"n_plans", (getter)launcher_len, NULL, "plans held", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tlc.runtime._launch.Launcher",
    .tp_basicsize = sizeof(LauncherObject),
    .tp_dealloc = (destructor)launcher_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A kernel's recent Plans; launch(args, stream) launches a call that "
              "matches one",
    .tp_methods = launcher_methods,
    .tp_members = launcher_members,
    .tp_getset = launcher_getset,
    .tp_new = launcher_new,
};

/* ---- Module ---------------------------------------------------------------------- */

static PyObject *set_launch_error(PyObject *mod, PyObject *cls) {
  (void)mod;
  Py_XSETREF(g_launch_error, Py_NewRef(cls));
  Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"set_launch_error", set_launch_error, METH_O,
     "the exception class a failed launch raises (tlc.runtime.LaunchError)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef launch_module = {
    PyModuleDef_HEAD_INIT, "tlc.runtime._launch",
    "The native launch path of tlc.runtime (see runtime/tlc_launch.c).", -1,
    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__launch(void) {
  if (PyType_Ready(&PlanType) || PyType_Ready(&LauncherType))
    return NULL;
  if (!(s_dtype = PyUnicode_InternFromString("dtype")) ||
      !(s_shape = PyUnicode_InternFromString("shape")) ||
      !(s_stride = PyUnicode_InternFromString("stride")) ||
      !(s_get_device = PyUnicode_InternFromString("get_device")) ||
      !(s_data_ptr = PyUnicode_InternFromString("data_ptr")) ||
      !(g_empty_kwnames = Py_BuildValue("(ss)", "dtype", "device")))
    return NULL;
  PyObject *m = PyModule_Create(&launch_module);
  if (!m)
    return NULL;
  if (PyModule_AddObjectRef(m, "Plan", (PyObject *)&PlanType) ||
      PyModule_AddObjectRef(m, "Launcher", (PyObject *)&LauncherType) ||
      PyModule_AddIntConstant(m, "VERSION", 1) ||
      PyModule_AddIntConstant(m, "MAX_PLANS", TLC_MAX_PLANS)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

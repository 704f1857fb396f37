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
#include "tlc_launch.h"

static PyObject *g_launch_error; /* tlc.runtime.LaunchError */
static PyObject *s_dtype, *s_shape, *s_stride, *s_get_device, *s_data_ptr;
static PyObject *g_empty_kwnames; /* ("dtype", "device") */

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
  seen->rank = tlc_read_ints(shape, seen->shape);
  if (seen->rank < 0 || tlc_read_ints(strides, seen->strides) != seen->rank ||
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
  if (!PyObject_TypeCheck(plan, &TlcPlanType)) {
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
  if (PyType_Ready(&TlcPlanType) || PyType_Ready(&LauncherType))
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
  if (PyModule_AddObjectRef(m, "Plan", (PyObject *)&TlcPlanType) ||
      PyModule_AddObjectRef(m, "Launcher", (PyObject *)&LauncherType) ||
      PyModule_AddIntConstant(m, "VERSION", 1) ||
      PyModule_AddIntConstant(m, "MAX_PLANS", TLC_MAX_PLANS)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}

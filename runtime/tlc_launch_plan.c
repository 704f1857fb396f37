/*
 * tlc.runtime._launch, its Plan type: what a call must match to launch
 * natively, parsed from the description tlc/runtime/plans.py builds (see
 * tlc_launch.c for the whole).
 */
#include "tlc_launch.h"

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
int tlc_read_ints(PyObject *seq, int64_t *out) {
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
    int rank = tlc_read_ints(PyTuple_GET_ITEM(t, 3), s->shape);
    if (rank < 0 || tlc_read_ints(PyTuple_GET_ITEM(t, 4), s->strides) != rank)
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

PyTypeObject TlcPlanType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tlc.runtime._launch.Plan",
    .tp_basicsize = sizeof(PlanObject),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Plan(n_args, specs, device, tensor_type, stream_getter, launch, last_error, "
              "header, call_len, launches, n_maps, encode, outputs, empty): see plans.py",
    .tp_new = plan_new,
};

/* tokenparse._speedups: the two checks-and-lookups of a body step, each in one C pass.
 *
 * Optional: tokenparse.token_ids falls back to the pure-Python versions (same results,
 * tests/test_speedups.py checks them against each other) when this module is not built or
 * TOKENPARSE_PURE_PYTHON is set.
 *
 * join_pieces(ids, table) -> bytes | None
 *     The concatenated table entries of a step whose every item is a plain int (exactly
 *     int: no bool, no int subclass, no NumPy integer) in range(len(table)) with a bytes
 *     entry; None as soon as one is not (the caller takes its checked path, which reports
 *     the item where it stands). Two passes over the step: check and size, then copy.
 *     Nothing the loops call runs Python code, and the module holds the GIL (it does not
 *     declare Py_mod_gil), so the lists cannot change between the passes.
 *
 * is_plain_step(ids) -> bool
 *     Whether every item is a plain int (as above) and none is negative.
 *
 * ``ids`` is any sequence (a list or tuple is read in place, anything else copied into a
 * list first); ``table`` is a list.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

static PyObject *
join_pieces(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "join_pieces(ids, table) takes 2 arguments");
        return NULL;
    }
    PyObject *table = args[1];
    if (!PyList_CheckExact(table)) {
        PyErr_SetString(PyExc_TypeError, "join_pieces(ids, table): the table is a list");
        return NULL;
    }
    /* a list or tuple as it is (no copy); another iterable copied into a list first */
    PyObject *ids = PySequence_Fast(args[0], "join_pieces(ids, table): ids is a sequence");
    if (ids == NULL) {
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(ids);
    Py_ssize_t count = PySequence_Fast_GET_SIZE(ids);
    Py_ssize_t size = PyList_GET_SIZE(table);
    Py_ssize_t total = 0;
    PyObject *last = NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyLong_CheckExact(items[i])) {
            goto decline;
        }
        Py_ssize_t token_id = PyLong_AsSsize_t(items[i]);
        if (token_id < 0 || token_id >= size) {
            if (token_id == -1 && PyErr_Occurred()) {
                PyErr_Clear(); /* too large for an index: no entry */
            }
            goto decline;
        }
        last = PyList_GET_ITEM(table, token_id);
        if (!PyBytes_CheckExact(last)) {
            goto decline;
        }
        total += PyBytes_GET_SIZE(last);
    }
    PyObject *out;
    if (count == 1) {
        out = Py_NewRef(last); /* bytes are immutable: the entry itself */
    }
    else {
        out = PyBytes_FromStringAndSize(NULL, total);
        if (out != NULL) {
            char *dest = PyBytes_AS_STRING(out);
            for (Py_ssize_t i = 0; i < count; i++) {
                PyObject *piece = PyList_GET_ITEM(table, PyLong_AsSsize_t(items[i]));
                Py_ssize_t length = PyBytes_GET_SIZE(piece);
                memcpy(dest, PyBytes_AS_STRING(piece), (size_t)length);
                dest += length;
            }
        }
    }
    Py_DECREF(ids);
    return out;
decline:
    Py_DECREF(ids);
    Py_RETURN_NONE;
}

static PyObject *
is_plain_step(PyObject *module, PyObject *arg)
{
    PyObject *ids = PySequence_Fast(arg, "is_plain_step(ids): ids is a sequence");
    if (ids == NULL) {
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(ids);
    Py_ssize_t count = PySequence_Fast_GET_SIZE(ids);
    int plain = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyLong_CheckExact(items[i])) {
            plain = 0;
            break;
        }
        int overflow;
        long long value = PyLong_AsLongLongAndOverflow(items[i], &overflow);
        /* overflow: the sign of an int beyond long long (no error is set for it) */
        if (overflow < 0 || (overflow == 0 && value < 0)) {
            plain = 0;
            break;
        }
    }
    Py_DECREF(ids);
    return PyBool_FromLong(plain);
}

static PyMethodDef speedups_methods[] = {
    {"join_pieces", (PyCFunction)(void (*)(void))join_pieces, METH_FASTCALL,
     "join_pieces(ids, table) -> bytes | None: the table entries of a step of plain in-range\n"
     "ints with bytes entries, concatenated; None when an item is not one."},
    {"is_plain_step", is_plain_step, METH_O,
     "is_plain_step(ids) -> bool: every item a plain int (no bool, no int subclass) >= 0."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef_Slot speedups_slots[] = {
#if PY_VERSION_HEX >= 0x030C0000
    {Py_mod_multiple_interpreters, Py_MOD_PER_INTERPRETER_GIL_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef speedups_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "tokenparse._speedups",
    .m_doc = "The checks-and-lookups of a body step in one C pass (optional; see token_ids.py).",
    .m_size = 0,
    .m_methods = speedups_methods,
    .m_slots = speedups_slots,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    return PyModuleDef_Init(&speedups_module);
}

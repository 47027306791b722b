/* tokenparse._speedups: the two checks-and-lookups of a body step, each in one C pass, the
 * JSON string escape and join every wire path runs on a delta's text, and the fill of its
 * frames.
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
 * join_text(ids, table) -> str | bytes | None
 *     join_pieces decoded: the step's text when its bytes are whole UTF-8 characters (the
 *     step almost every body step is: no bytes object, no decode call in Python); the bytes
 *     when they are not (a character cut by the step's end, or invalid bytes: the caller's
 *     stream decodes them); None when join_pieces declines, and for an empty step.
 *
 * find_cuts(ids, members) -> list[int]
 *     The positions of the items of ``ids`` that are in the set ``members``, and of the
 *     items that cannot be looked up at all (unhashable): where a Harmony step is cut by
 *     its structural tokens. One C pass; the stdlib composition (itertools.compress over
 *     map(members.__contains__, ids)) costs ~300 instructions an item in iterator and
 *     method-wrapper calls.
 *
 * is_plain_step(ids) -> bool
 *     Whether every item is a plain int (as above) and none is negative.
 *
 * ``ids`` is any sequence (a list or tuple is read in place, anything else copied into a
 * list first); ``table`` is a list.
 *
 * join_json_strings(pieces) -> str
 *     The JSON text of the concatenation of the strings whose JSON texts (as
 *     json.encoder.encode_basestring writes them) are ``pieces``, a list: each piece's
 *     inner text, between one pair of quotes. The escape maps character by character, so
 *     that is exactly the escape of the concatenation. One pass to size, one to copy; the
 *     pure-Python version removes the boundary quotes with str.replace, which costs ~100 ns
 *     a boundary (an item's done events join a piece per step). A piece that is no str or
 *     not quoted is a ValueError (no JSON text); no piece gives '""'.
 *
 * fill_frame(pieces, order, values) -> str
 *     Exactly pieces[0] + f"{values[order[0]]}" + pieces[1] + ... + pieces[n]: a wire frame
 *     (adapters/_frames.py) filled, ``pieces`` a tuple of n + 1 str, ``order`` the n slot
 *     numbers as bytes (a frame has fewer than 256 values), ``values`` a tuple or list. A str value is copied as it is, any other is
 *     formatted as an f-string formats it (format(value, "")); a slot past ``values`` is an
 *     IndexError. One pass to size, one to copy: the f-string it replaces evaluates each
 *     slot as bytecode (a Responses item switch, 21 slots and 43 pieces, ~11,000
 *     instructions).
 *
 * json_string(text) -> str
 *     Exactly json.encoder.encode_basestring(text) (the JSON text of a str, non-ASCII kept):
 *     '"' '\\' and \b \f \n \r \t as two characters, other controls below 0x20 as \u00xx
 *     (lowercase hex), everything else as it is (lone surrogates too). The stdlib's escape
 *     reads and writes each character through a kind switch, twice (~3,000 instructions for
 *     a 70-character step); here one table pass sizes it and a step with nothing to escape
 *     (most steps) is one copy.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* join_pieces' answer (a new reference: bytes, or None for a decline; NULL on an error),
 * and the number of IDs in the step */
static PyObject *
join_step(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t *step_size)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "join_pieces(ids, table) and join_text(ids, table) take 2 arguments");
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
    *step_size = count;
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
join_pieces(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t count;
    return join_step(args, nargs, &count);
}

static PyObject *
join_text(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t count = 0;
    PyObject *data = join_step(args, nargs, &count);
    if (data == NULL || data == Py_None) {
        return data;
    }
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (count == 0) {
        Py_DECREF(data);
        Py_RETURN_NONE; /* an empty step is declined */
    }
    Py_ssize_t used = 0;
    PyObject *text = PyUnicode_DecodeUTF8Stateful(PyBytes_AS_STRING(data), size, NULL, &used);
    if (text == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) {
            Py_DECREF(data);
            return NULL;
        }
        PyErr_Clear(); /* invalid bytes: the caller's stream decodes (and reports) them */
        return data;
    }
    if (used < size) { /* a character cut by the step's end: the caller's stream holds it */
        Py_DECREF(text);
        return data;
    }
    Py_DECREF(data);
    return text;
}

static PyObject *
find_cuts(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "find_cuts(ids, members) takes 2 arguments");
        return NULL;
    }
    PyObject *members = args[1];
    if (!PyAnySet_Check(members)) {
        PyErr_SetString(PyExc_TypeError, "find_cuts(ids, members): members is a set or frozenset");
        return NULL;
    }
    PyObject *ids = PySequence_Fast(args[0], "find_cuts(ids, members): ids is a sequence");
    if (ids == NULL) {
        return NULL;
    }
    PyObject *cuts = PyList_New(0);
    if (cuts == NULL) {
        Py_DECREF(ids);
        return NULL;
    }
    Py_ssize_t count = PySequence_Fast_GET_SIZE(ids);
    for (Py_ssize_t i = 0; i < count; i++) {
        /* (an item's __hash__ or __eq__ may run Python code: read the item afresh each time) */
        PyObject *item = PySequence_Fast_GET_ITEM(ids, i);
        Py_INCREF(item);
        int found = PySet_Contains(members, item);
        Py_DECREF(item);
        if (found < 0) {
            if (!PyErr_ExceptionMatches(PyExc_TypeError)) {
                goto error;
            }
            PyErr_Clear(); /* unhashable: cut out, and reported like a special token */
            found = 1;
        }
        if (found) {
            PyObject *index = PyLong_FromSsize_t(i);
            if (index == NULL || PyList_Append(cuts, index) < 0) {
                Py_XDECREF(index);
                goto error;
            }
            Py_DECREF(index);
        }
        if (PySequence_Fast_GET_SIZE(ids) != count) { /* the list changed under us */
            PyErr_SetString(PyExc_RuntimeError, "find_cuts: ids changed size during the scan");
            goto error;
        }
    }
    Py_DECREF(ids);
    return cuts;
error:
    Py_DECREF(ids);
    Py_DECREF(cuts);
    return NULL;
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

/* copy ``length`` characters of ``part`` from ``start`` into ``out`` (of ``kind``, its
 * characters at ``data``) at ``at``; ``out`` is as wide as its widest part, so a part of its kind is one memcpy (-1: an error is set) */
static inline int
copy_part(PyObject *out, int kind, char *data, Py_ssize_t at, PyObject *part, Py_ssize_t start, Py_ssize_t length)
{
    if (PyUnicode_KIND(part) == kind) {
        memcpy(data + at * kind, (const char *)PyUnicode_DATA(part) + start * kind, (size_t)(length * kind));
        return 0;
    }
    return PyUnicode_CopyCharacters(out, at, part, start, length) < 0 ? -1 : 0;
}

static PyObject *
join_json_strings(PyObject *module, PyObject *pieces)
{
    if (!PyList_CheckExact(pieces)) {
        PyErr_SetString(PyExc_TypeError, "join_json_strings(pieces): pieces is a list");
        return NULL;
    }
    Py_ssize_t count = PyList_GET_SIZE(pieces);
    if (count == 1 && PyUnicode_CheckExact(PyList_GET_ITEM(pieces, 0))) {
        PyObject *only = PyList_GET_ITEM(pieces, 0);
        Py_ssize_t length = PyUnicode_GET_LENGTH(only);
        if (length >= 2 && PyUnicode_READ_CHAR(only, 0) == '"' && PyUnicode_READ_CHAR(only, length - 1) == '"') {
            return Py_NewRef(only);
        }
    }
    Py_ssize_t total = 2;
    Py_UCS4 widest = 127;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *piece = PyList_GET_ITEM(pieces, i);
        if (!PyUnicode_CheckExact(piece)) {
            PyErr_Format(PyExc_ValueError, "join_json_strings: piece %zd is no str", i);
            return NULL;
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(piece);
        if (length < 2 || PyUnicode_READ_CHAR(piece, 0) != '"' || PyUnicode_READ_CHAR(piece, length - 1) != '"') {
            PyErr_Format(PyExc_ValueError, "join_json_strings: piece %zd is no quoted JSON string", i);
            return NULL;
        }
        total += length - 2;
        Py_UCS4 width = PyUnicode_MAX_CHAR_VALUE(piece);
        if (width > widest) {
            widest = width;
        }
    }
    PyObject *out = PyUnicode_New(total, widest);
    if (out == NULL) {
        return NULL;
    }
    int kind = PyUnicode_KIND(out);
    char *data = PyUnicode_DATA(out);
    PyUnicode_WRITE(kind, data, 0, '"');
    Py_ssize_t at = 1;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *piece = PyList_GET_ITEM(pieces, i);
        Py_ssize_t inner = PyUnicode_GET_LENGTH(piece) - 2;
        if (copy_part(out, kind, data, at, piece, 1, inner) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        at += inner;
    }
    PyUnicode_WRITE(kind, data, at, '"');
    return out;
}

/* a frame's parts on the C stack up to this many slots (every frame the adapters make has
 * fewer); more take the heap */
#define FRAME_STACK_SLOTS 48

/* the decimal digits of 0 <= value, written backwards from ``end``; returns where they start */
static char *
write_decimal(char *end, unsigned long long value)
{
    do {
        *--end = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    return end;
}

/* a slot filled: a str (a new reference), or, for a plain int (most slots are sequence
 * numbers and indices), its decimal text written straight into the output (``text`` NULL;
 * str(int) is exactly that text, and this skips a str object per number) */
typedef struct {
    PyObject *text;
    char digits[24];
    int length;
} FrameSlot;

static PyObject *
fill_frame(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3 || !PyTuple_CheckExact(args[0]) || !PyBytes_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "fill_frame(pieces, order, values): pieces is a tuple, order bytes");
        return NULL;
    }
    PyObject *pieces = args[0];
    const unsigned char *order = (const unsigned char *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t slots = PyBytes_GET_SIZE(args[1]);
    if (PyTuple_GET_SIZE(pieces) != slots + 1) {
        PyErr_SetString(PyExc_ValueError, "fill_frame: one piece more than slots");
        return NULL;
    }
    PyObject *values = args[2];
    int is_tuple = PyTuple_CheckExact(values);
    if (!is_tuple && !PyList_CheckExact(values)) {
        PyErr_Format(PyExc_TypeError, "fill_frame: values is a tuple or list, not %.100s", Py_TYPE(values)->tp_name);
        return NULL;
    }
    FrameSlot stack[FRAME_STACK_SLOTS];
    FrameSlot *filled = stack;
    if (slots > FRAME_STACK_SLOTS) {
        filled = PyMem_New(FrameSlot, slots);
        if (filled == NULL) {
            return PyErr_NoMemory();
        }
    }
    PyObject *out = NULL;
    Py_ssize_t done = 0, total = 0;
    Py_UCS4 widest = 127;
    for (; done < slots; done++) {
        Py_ssize_t k = order[done];
        /* (read each time: formatting a value may run Python code that changes a list) */
        Py_ssize_t count = is_tuple ? PyTuple_GET_SIZE(values) : PyList_GET_SIZE(values);
        if (k >= count) {
            PyErr_Format(PyExc_IndexError, "fill_frame: slot %zd past the %zd values", k, count);
            goto done;
        }
        PyObject *value = is_tuple ? PyTuple_GET_ITEM(values, k) : PyList_GET_ITEM(values, k);
        FrameSlot *entry = &filled[done];
        if (PyUnicode_CheckExact(value)) {
            entry->text = Py_NewRef(value);
        }
        else {
            int overflow = 0;
            long long number = PyLong_CheckExact(value) ? PyLong_AsLongLongAndOverflow(value, &overflow) : -1;
            if (PyLong_CheckExact(value) && !overflow && number > -1000000000000000000LL) {
                char *end = entry->digits + sizeof(entry->digits);
                char *first = write_decimal(end, (unsigned long long)(number < 0 ? -number : number));
                if (number < 0) {
                    *--first = '-';
                }
                entry->text = NULL;
                entry->length = (int)(end - first);
                memmove(entry->digits, first, (size_t)entry->length);
                total += entry->length;
                continue;
            }
            if (PyErr_Occurred()) {
                goto done;
            }
            /* anything else as the f-string formats it (PyObject_Format returns a str); held
             * meanwhile: its __format__ may take it out of a values list */
            Py_INCREF(value);
            entry->text = PyObject_Format(value, NULL);
            Py_DECREF(value);
            if (entry->text == NULL) {
                goto done;
            }
        }
        total += PyUnicode_GET_LENGTH(entry->text);
        Py_UCS4 width = PyUnicode_MAX_CHAR_VALUE(entry->text);
        if (width > widest) {
            widest = width;
        }
    }
    for (Py_ssize_t i = 0; i <= slots; i++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, i);
        if (!PyUnicode_CheckExact(piece)) {
            PyErr_SetString(PyExc_TypeError, "fill_frame: the pieces are str");
            goto done;
        }
        total += PyUnicode_GET_LENGTH(piece);
        Py_UCS4 width = PyUnicode_MAX_CHAR_VALUE(piece);
        if (width > widest) {
            widest = width;
        }
    }
    out = PyUnicode_New(total, widest);
    if (out == NULL) {
        goto done;
    }
    int kind = PyUnicode_KIND(out);
    char *data = PyUnicode_DATA(out);
    Py_ssize_t at = 0;
    for (Py_ssize_t i = 0; i < 2 * slots + 1; i++) {
        PyObject *part;
        if (i & 1) {
            FrameSlot *entry = &filled[i >> 1];
            part = entry->text;
            if (part == NULL) {
                for (int j = 0; j < entry->length; j++) {
                    PyUnicode_WRITE(kind, data, at + j, (Py_UCS4)(unsigned char)entry->digits[j]);
                }
                at += entry->length;
                continue;
            }
        }
        else {
            part = PyTuple_GET_ITEM(pieces, i >> 1);
        }
        Py_ssize_t length = PyUnicode_GET_LENGTH(part);
        if (copy_part(out, kind, data, at, part, 0, length) < 0) {
            Py_CLEAR(out);
            goto done;
        }
        at += length;
    }
done:
    for (Py_ssize_t i = 0; i < done; i++) {
        Py_XDECREF(filled[i].text);
    }
    if (filled != stack) {
        PyMem_Free(filled);
    }
    return out;
}

/* extra output characters of each ASCII character (0: as it is; 1: a two-character escape;
 * 5: \u00xx); every character from 0x80 up is written as it is */
static unsigned char escape_extra[128];
static const char escape_letter[32] = {
    ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't',
};
static const char hex_digits[] = "0123456789abcdef";

static void
init_escape_table(void)
{
    for (int c = 0; c < 0x20; c++) {
        escape_extra[c] = escape_letter[c] ? 1 : 5;
    }
    escape_extra['"'] = 1;
    escape_extra['\\'] = 1;
}

#define EXTRA_OF(c) ((c) < 128 ? escape_extra[(c)] : 0)

static PyObject *
json_string(PyObject *module, PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "json_string(text): text is a str, not %.100s", Py_TYPE(text)->tp_name);
        return NULL;
    }
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (length > PY_SSIZE_T_MAX / 6 - 2) { /* (the escaped size cannot overflow) */
        PyErr_SetString(PyExc_OverflowError, "json_string(text): text too long to escape");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t extra = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            extra += EXTRA_OF(chars[i]);
        }
    }
    else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            extra += EXTRA_OF(chars[i]);
        }
    }
    else {
        const Py_UCS4 *chars = data;
        for (Py_ssize_t i = 0; i < length; i++) {
            extra += EXTRA_OF(chars[i]);
        }
    }
    PyObject *out = PyUnicode_New(length + extra + 2, PyUnicode_MAX_CHAR_VALUE(text));
    if (out == NULL) {
        return NULL;
    }
    void *dest = PyUnicode_DATA(out);
    /* the output's kind is the input's (escapes are ASCII, the widest character is kept) */
    PyUnicode_WRITE(kind, dest, 0, '"');
    if (extra == 0) {
        memcpy((char *)dest + kind, data, (size_t)(length * kind));
    }
    else {
        Py_ssize_t at = 1;
        for (Py_ssize_t i = 0; i < length; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            switch (EXTRA_OF(c)) {
            case 0:
                PyUnicode_WRITE(kind, dest, at++, c);
                break;
            case 1:
                PyUnicode_WRITE(kind, dest, at++, '\\');
                PyUnicode_WRITE(kind, dest, at++, c < 0x20 ? (Py_UCS4)escape_letter[c] : c);
                break;
            default:
                PyUnicode_WRITE(kind, dest, at++, '\\');
                PyUnicode_WRITE(kind, dest, at++, 'u');
                PyUnicode_WRITE(kind, dest, at++, '0');
                PyUnicode_WRITE(kind, dest, at++, '0');
                PyUnicode_WRITE(kind, dest, at++, hex_digits[c >> 4]);
                PyUnicode_WRITE(kind, dest, at++, hex_digits[c & 0xf]);
            }
        }
    }
    PyUnicode_WRITE(kind, dest, length + extra + 1, '"');
    return out;
}

static PyMethodDef speedups_methods[] = {
    {"join_pieces", (PyCFunction)(void (*)(void))join_pieces, METH_FASTCALL,
     "join_pieces(ids, table) -> bytes | None: the table entries of a step of plain in-range\n"
     "ints with bytes entries, concatenated; None when an item is not one."},
    {"join_text", (PyCFunction)(void (*)(void))join_text, METH_FASTCALL,
     "join_text(ids, table) -> str | bytes | None: join_pieces decoded when its bytes are\n"
     "whole UTF-8 characters, else the bytes; None when join_pieces declines or the step is empty."},
    {"find_cuts", (PyCFunction)(void (*)(void))find_cuts, METH_FASTCALL,
     "find_cuts(ids, members) -> list[int]: the positions of the items in members, and of\n"
     "the unhashable ones."},
    {"is_plain_step", is_plain_step, METH_O,
     "is_plain_step(ids) -> bool: every item a plain int (no bool, no int subclass) >= 0."},
    {"join_json_strings", join_json_strings, METH_O,
     "join_json_strings(pieces) -> str: the JSON text of the concatenation of the strings\n"
     "whose JSON texts are pieces (each piece's inner text between one pair of quotes)."},
    {"fill_frame", (PyCFunction)(void (*)(void))fill_frame, METH_FASTCALL,
     "fill_frame(pieces, order, values) -> str: pieces[0] + f\"{values[order[0]]}\" + pieces[1]\n"
     "+ ... + pieces[n] (a wire frame filled)."},
    {"json_string", json_string, METH_O,
     "json_string(text) -> str: exactly json.encoder.encode_basestring(text)."},
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
    .m_doc = "A body step's checks-and-lookups and the Responses text join in C (optional; see token_ids.py).",
    .m_size = 0,
    .m_methods = speedups_methods,
    .m_slots = speedups_slots,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
    init_escape_table();
    return PyModuleDef_Init(&speedups_module);
}

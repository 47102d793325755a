/* Fast paths of evaluator/trec.py: parse TREC qrels into dicts, and parse + join + rank a TREC run; and of
 * irboard/inputs.py: join + rank a run given as a dict of dicts (rank_dict).
 *
 * rank_run does in one pass over the file what ranking.rank_run does with dicts: keep the lines whose
 * query is in the qrels, look each document up among its query's judgments, sort every query by
 * (float32 score desc, doc id bytes desc) and return the labels as a (queries, depth) int32 matrix (only as
 * deep as the caller's measures look, when they all have cutoffs).
 * Each query is finished as soon as its lines end, so memory stays small; a file whose queries are
 * interleaved is read a second time, keeping all lines. The top of each ranking is returned as columns (a
 * sorted doc-id table, indices, scores): what a result file stores, without a Python object per entry.
 *
 * The buffer must end with '\n' (the Python wrapper makes sure), so line scanning needs no bounds checks.
 * Input errors are raised as ValueError(line_number, message), line 0 meaning the whole file; the
 * wrapper adds the file name and raises InputFormatError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define UNJUDGED (-1000000) /* as in evaluator/metrics/ranking.py */
#define PAD (-2000000)

enum { TREC, MSMARCO }; /* run layouts: `qid Q0 docid rank score tag [more]`, or MS MARCO's `qid docid rank` */

enum { WORD, BLANK, SPACE, NEWLINE };
static unsigned char char_class[256]; /* set at import: the ASCII whitespace that bytes.split() uses */
static unsigned char tab_class[256];  /* a tab-separated file's: only tabs (and a line's '\r') separate fields, so
                                         an id may hold spaces; the other ASCII whitespace (BLANK) around a field
                                         is not part of it, as trec_eval reads `301<TAB>  2.129133` */

typedef struct { const char *p; uint32_t n, hash; } Bytes; /* a field of the file, or a str's UTF-8 */
typedef struct { uint32_t hash, index; } Slot;             /* open addressing; index 0: empty, else i + 1 */
typedef struct {                                           /* one kept run line, or one entry of a dict run */
    const char *doc;
    uint32_t doc_n;
    union {
        int32_t row;   /* a line's qrels query (a file's records mix queries) */
        int32_t label; /* an entry's label (rank_dict sorts one query at a time) */
    };
    double score;
} Record;
typedef struct { double score; uint32_t doc; } Entry; /* one kept top entry; doc indexes Ranking.top_table */
typedef struct { double score; int64_t rank, judged; } Below; /* a judged entry below the tops: 1-based rank,
                                                               index into Ranking.judged */

static uint32_t hash_bytes(const char *p, uint32_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n, w = 0;
    if (n >= 8) {
        for (uint32_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&w, p + i, 8);
            h = (h ^ w) * 0xFF51AFD7ED558CCDull;
            h ^= h >> 32;
        }
        memcpy(&w, p + n - 8, 8); /* the last 8 bytes again, overlapping: no byte-wise tail */
    } else
        for (uint32_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)p[i] << (8 * i);
    h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
    /* A product's low bits depend only on its input's low bits, and tables index by the low bits: mix the
     * high bits down (murmur3's finalizer). Without it, ids like doc0012345 shared a few hundred slots. */
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    return (uint32_t)(h ^ (h >> 33));
}

static int same_bytes(const char *a, const char *b, uint32_t n) { /* ids are short: faster than memcmp */
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

static uint32_t table_size(Py_ssize_t n) { /* a power of two >= 2n */
    uint32_t size = 2;
    while (size < 2 * (uint64_t)n) size *= 2;
    return size;
}

static Py_ssize_t table_find(const Slot *slots, uint32_t mask, const Bytes *keys, const Bytes *key) {
    for (uint32_t i = key->hash & mask; slots[i].index; i = (i + 1) & mask) {
        const Bytes *other = &keys[slots[i].index - 1];
        if (slots[i].hash == key->hash && other->n == key->n && same_bytes(other->p, key->p, key->n))
            return slots[i].index - 1;
    }
    return -1;
}

static void table_insert(Slot *slots, uint32_t mask, uint32_t hash, Py_ssize_t index) {
    uint32_t i = hash & mask;
    while (slots[i].index) i = (i + 1) & mask;
    slots[i] = (Slot){hash, (uint32_t)(index + 1)};
}

/* Split the line at *pos into fields (the first `max` stored, all counted) at the bytes `classes` calls SPACE,
 * each without the BLANK bytes around it; *pos moves past its '\n'. *high tells whether the line has a non-ASCII
 * byte. */
static int split_line(const unsigned char *classes, const char **pos, Bytes *fields, int max, int *high) {
    const unsigned char *p = (const unsigned char *)*pos, *start, *stop;
    unsigned char any = 0;
    int count = 0;
    for (;;) {
        while (classes[*p] == SPACE || classes[*p] == BLANK) p++;
        if (*p == '\n') break;
        for (start = p; classes[*p] <= BLANK; p++) any |= *p;
        for (stop = p; classes[stop[-1]] == BLANK; stop--) {} /* start is a WORD byte: the loop stops there */
        if (count < max) fields[count] = (Bytes){(const char *)start, (uint32_t)(stop - start), 0};
        count++;
    }
    *pos = (const char *)p + 1;
    *high = any >> 7;
    return count;
}

/* How a line with the wrong number of columns was split, and the fix, written into `note`. A tab-separated
 * file's line that has from `min` to `max` columns when split at spaces too (as trec_eval splits) is told so: a
 * column holds spaces, or spaces separate its columns. */
static const char *count_fix(const unsigned char *classes, const char *line, int min, int max, char *note,
                             size_t size) {
    int high, loose;
    if (classes != tab_class) return "; fix or remove the line";
    loose = split_line(char_class, &line, NULL, 0, &high);
    if (loose >= min && loose <= max)
        snprintf(note, size, " (the file is tab-separated, as its first line is); split at spaces too, as trec_eval "
                 "splits, it has %d: separate this line's columns by tabs, as the first line does", loose);
    else
        snprintf(note, size, " (the file is tab-separated, as its first line is); fix or remove the line");
    return note;
}

/* Whether one of the first n fields holds a BLANK byte (inside it: split_line trimmed those around it). */
static int has_blank(const Bytes *fields, int n) {
    for (int i = 0; i < n; i++)
        for (uint32_t k = 0; k < fields[i].n; k++)
            if (tab_class[(unsigned char)fields[i].p[k]] == BLANK) return 1;
    return 0;
}

static int is_utf8(const char *p, Py_ssize_t n) {
    PyObject *text = PyUnicode_DecodeUTF8(p, n, "strict");
    Py_XDECREF(text);
    PyErr_Clear();
    return text != NULL;
}

/* A message quoting one or two fields with %R (shortened, decoded leniently). */
static PyObject *format_fields(const char *format, const Bytes *a, const Bytes *b) {
    b = b ? b : a;
    PyObject *first = PyUnicode_DecodeUTF8(a->p, a->n < 60 ? a->n : 60, "replace");
    PyObject *second = PyUnicode_DecodeUTF8(b->p, b->n < 60 ? b->n : 60, "replace");
    PyObject *message = first && second ? PyUnicode_FromFormat(format, first, second) : NULL;
    Py_XDECREF(first);
    Py_XDECREF(second);
    return message;
}

static PyObject *line_error(Py_ssize_t line, PyObject *message) {
    PyObject *args = message ? Py_BuildValue("(nN)", line, message) : NULL;
    if (args) PyErr_SetObject(PyExc_ValueError, args);
    Py_XDECREF(args);
    return NULL;
}

static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Parse a field that must be a finite decimal ([+-] digits [. digits] [e [+-] digits]); 0, -1, or -2 for a value
 * float32 cannot hold (trec_eval orders by float32 scores: every such score would be an infinity, all tied).
 * Correctly rounded like strtod: Clinger's fast path when the digits fit in 53 bits and the power of
 * ten is exact (|e| <= 22), otherwise Python's own correctly rounded conversion. */
static int parse_score(const char *p, uint32_t n, double *out) {
    const char *s = p, *end = p + n;
    uint64_t mantissa = 0;
    int negative = 0, digits = 0, significant = 0, fraction = 0;
    long exponent = 0, written = 0;
    if (s < end && (*s == '+' || *s == '-')) negative = *s++ == '-';
    for (; s < end && ((*s >= '0' && *s <= '9') || (*s == '.' && !fraction)); s++) {
        if (*s == '.') {
            fraction = 1;
            continue;
        }
        digits++;
        exponent -= fraction;
        significant += mantissa || *s != '0';
        if (significant <= 19) mantissa = mantissa * 10 + (uint64_t)(*s - '0');
    }
    if (!digits) return -1;
    if (s < end && (*s == 'e' || *s == 'E')) {
        int exp_negative = 0, exp_digits = 0;
        if (++s < end && (*s == '+' || *s == '-')) exp_negative = *s++ == '-';
        for (; s < end && *s >= '0' && *s <= '9'; s++, exp_digits++)
            if (written < 100000) written = written * 10 + (*s - '0');
        if (!exp_digits) return -1;
        exponent += exp_negative ? -written : written;
    }
    if (s != end) return -1;
    if (significant <= 19 && mantissa <= (1ull << 53) && exponent >= -22 && exponent <= 22) {
        double value = exponent < 0 ? (double)mantissa / POW10[-exponent] : (double)mantissa * POW10[exponent];
        *out = negative ? -value : value;
    } else {
        char *copy = PyMem_Malloc((size_t)n + 1);
        if (!copy) return -1;
        memcpy(copy, p, n);
        copy[n] = '\0';
        *out = PyOS_string_to_double(copy, NULL, NULL); /* overflow gives inf, refused below */
        PyMem_Free(copy);
        if (PyErr_Occurred()) return -1;
    }
    if (!isfinite(*out)) return -1;
    return isinf((float)*out) ? -2 : 0; /* IEEE conversion: out of float32's range gives an infinity */
}

static int parse_label(const Bytes *field, long *out) { /* an integer of at most 9 digits; 0 or -1 */
    const char *s = field->p, *end = field->p + field->n;
    int negative = 0;
    if (s < end && (*s == '+' || *s == '-')) negative = *s++ == '-';
    if (s == end || end - s > 9) return -1;
    for (*out = 0; s < end; s++) {
        if (*s < '0' || *s > '9') return -1;
        *out = *out * 10 + (*s - '0');
    }
    *out = negative ? -*out : *out;
    return 0;
}

/* parse_qrels(buffer, columns, skip_header, min_label, max_label, tabs) -> {query_id: {doc_id: label}}.
 * columns: 4 for TREC (qid iter docid rel), 3 for BEIR's TSV (qid docid score); tabs: split on tabs only. */
static PyObject *parse_qrels(PyObject *self, PyObject *args) {
    Py_buffer view;
    int columns, skip_header, high, count, tabs;
    long min_label, max_label, label;
    if (!PyArg_ParseTuple(args, "y*iillp", &view, &columns, &skip_header, &min_label, &max_label, &tabs))
        return NULL;
    const unsigned char *classes = tabs ? tab_class : char_class;
    const char *pos = view.buf, *end = pos + view.len;
    Py_ssize_t line = skip_header ? 1 : 0;
    PyObject *qrels = PyDict_New(), *judged = NULL, *message = NULL;
    Bytes fields[4], last_query = {NULL, 0, 0};
    if (skip_header) split_line(classes, &pos, fields, 4, &high);
    char note[256];
    while (qrels && !message && pos < end) {
        const char *line_start = pos;
        line++;
        if (!(count = split_line(classes, &pos, fields, 4, &high))) continue;
        const Bytes *query = &fields[0], *doc = &fields[columns - 2], *relevance = &fields[columns - 1];
        if (count != columns) {
            message = PyUnicode_FromFormat("expected %s, found %d%s",
                                           columns == 4 ? "4 columns 'query_id 0 doc_id relevance'"
                                                        : "3 columns 'query-id corpus-id score'", count,
                                           count_fix(classes, line_start, columns, columns, note, sizeof note));
        } else if (parse_label(relevance, &label) < 0) {
            message = format_fields("relevance %R is not an integer; labels are whole numbers such as 0, 1, 2",
                                    relevance, NULL);
        } else if (label < min_label || label > max_label) {
            message = PyUnicode_FromFormat("relevance %ld is outside [%ld, %ld]; fix the label", label,
                                           min_label, max_label);
        } else if (high && !is_utf8(query->p, (doc->p - query->p) + doc->n)) {
            message = PyUnicode_FromString("is not valid UTF-8; save the file as UTF-8");
        } else {
            if (!judged || query->n != last_query.n || !same_bytes(query->p, last_query.p, query->n)) {
                PyObject *key = PyUnicode_DecodeUTF8(query->p, query->n, "strict"), *fresh = PyDict_New();
                judged = key && fresh ? PyDict_SetDefault(qrels, key, fresh) : NULL; /* borrowed */
                Py_XDECREF(key);
                Py_XDECREF(fresh);
                last_query = *query;
            }
            PyObject *doc_id = PyUnicode_DecodeUTF8(doc->p, doc->n, "strict"), *value = PyLong_FromLong(label);
            Py_ssize_t before = judged ? PyDict_GET_SIZE(judged) : 0;
            if (!judged || !doc_id || !value || !PyDict_SetDefault(judged, doc_id, value)) Py_CLEAR(qrels);
            else if (PyDict_GET_SIZE(judged) == before)
                message = format_fields("document %R is judged a second time for query %R; keep one line per "
                                        "(query, document)", doc, query);
            Py_XDECREF(doc_id);
            Py_XDECREF(value);
        }
    }
    PyBuffer_Release(&view);
    if (!message && qrels && !PyErr_Occurred()) return qrels;
    Py_XDECREF(qrels);
    return message ? line_error(line, message) : NULL;
}

typedef struct {
    Py_ssize_t n_queries, keep_top, label_depth; /* negative: all */
    int ignore_identical, interleaved; /* interleaved: some query's lines are not together in the file */
    int judged_below;                  /* also keep the judged entries below the tops */
    int layout;                        /* TREC or MSMARCO: which columns hold the query, document and score */
    const unsigned char *classes;      /* char_class, or tab_class for a tab-separated file */
    Py_ssize_t extra_lines, first_extra; /* TREC lines with more than 6 columns (ignored, as trec_eval does) */
    Py_ssize_t spaced_lines, first_spaced; /* tab-separated TREC lines with a space inside one of the first five
                                              columns: trec_eval, which splits at spaces too, reads them otherwise */
    Bytes *unjudged;                     /* the distinct run query ids without judgments (skipped) */
    Slot *unjudged_slots;
    uint32_t unjudged_mask, n_unjudged;
    Bytes *queries, *judged, first_query;
    Slot *query_slots, *judged_slots, *dup_slots;
    uint32_t query_mask, dup_size;
    int32_t *judged_label;
    Py_ssize_t *judged_start; /* query q's judged table: judged_slots[judged_start[q] : judged_start[q + 1]] */
    Record *records;          /* the current query's lines, or all lines of an interleaved file */
    Py_ssize_t n_records, records_size;
    int32_t *labels; /* ranked labels of the finished queries: query q's at labels[label_start[q]:], the first
                        min(count[q], label_depth) of them */
    Py_ssize_t n_labels, labels_size, *label_start, *count;
    char *seen;           /* the run has query q */
    Entry *tops;          /* the kept tops: query q's at tops[top_start[q]:][:top_count[q]] */
    Py_ssize_t n_tops, tops_size, *top_start, *top_count;
    Bytes *top_table;     /* the distinct doc ids of the tops, in order of first appearance */
    Below *below;         /* the judged entries below the tops: query q's at below[below_start[q]:][:below_count[q]] */
    Py_ssize_t n_below, below_size, *below_start, *below_count;
    Slot *top_slots;
    uint32_t top_mask, n_top_table;
    char **blocks;        /* copies of those ids, packed close together (looking them up in the file is slow) */
    Py_ssize_t n_blocks, blocks_size, block_used;
    const char *repeated; /* the earliest doc id found a second time in its query */
    const char *repeated_rank; /* MS MARCO: the doc id of the earliest line repeating a rank of its query */
} Ranking;

static void free_blocks(Ranking *r) {
    for (Py_ssize_t i = 0; i < r->n_blocks; i++) PyMem_Free(r->blocks[i]);
    r->n_blocks = 0;
}

static void ranking_reset(Ranking *r) {
    free_blocks(r);
    memset(r->seen, 0, (size_t)r->n_queries);
    memset(r->count, 0, (size_t)r->n_queries * sizeof(Py_ssize_t));
    memset(r->top_count, 0, (size_t)r->n_queries * sizeof(Py_ssize_t));
    memset(r->below_count, 0, (size_t)r->n_queries * sizeof(Py_ssize_t));
    if (r->top_slots) memset(r->top_slots, 0, ((size_t)r->top_mask + 1) * sizeof(Slot));
    r->n_records = r->n_labels = r->n_tops = r->n_top_table = r->n_below = r->extra_lines = r->first_extra = 0;
    r->spaced_lines = r->first_spaced = 0;
    if (r->unjudged_slots) memset(r->unjudged_slots, 0, ((size_t)r->unjudged_mask + 1) * sizeof(Slot));
    r->n_unjudged = 0;
    r->first_query.p = r->repeated = r->repeated_rank = NULL;
}

static void ranking_free(Ranking *r) {
    free_blocks(r);
    void *arrays[] = {r->queries,   r->judged,   r->query_slots, r->judged_slots, r->dup_slots,
                      r->judged_label, r->judged_start, r->records, r->labels,  r->label_start,
                      r->count,     r->seen,     r->tops,        r->top_start, r->top_count,
                      r->top_table, r->top_slots,   r->blocks,      r->below,     r->below_start,
                      r->below_count, r->unjudged,  r->unjudged_slots};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) PyMem_Free(arrays[i]);
}

static int reserve(void **array, Py_ssize_t *size, Py_ssize_t needed, size_t item_size) { /* grow by half */
    if (needed <= *size) return 0;
    Py_ssize_t grown = needed + *size / 2 + 1024;
    void *bigger = PyMem_Realloc(*array, (size_t)grown * item_size);
    if (!bigger) return PyErr_NoMemory(), -1;
    *array = bigger;
    *size = grown;
    return 0;
}

/* The qrels side: a table of query ids, and for each query a table of its judged doc ids. */
static int load_qrels(Ranking *r, PyObject *query_ids, PyObject *judgments) {
    Py_ssize_t n = r->n_queries, n_judged = 0, size;
    r->query_mask = table_size(n) - 1;
    r->queries = PyMem_Calloc((size_t)n + 1, sizeof(Bytes));
    r->query_slots = PyMem_Calloc((size_t)r->query_mask + 1, sizeof(Slot));
    r->judged_start = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    if (!r->queries || !r->query_slots || !r->judged_start) return PyErr_NoMemory(), -1;
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *judged = PyList_GET_ITEM(judgments, q);
        Bytes *id = &r->queries[q];
        if (!PyDict_Check(judged)) return PyErr_SetString(PyExc_TypeError, "judgments must be dicts"), -1;
        if (!(id->p = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(query_ids, q), &size))) return -1;
        *id = (Bytes){id->p, (uint32_t)size, hash_bytes(id->p, (uint32_t)size)};
        if (table_find(r->query_slots, r->query_mask, r->queries, id) < 0)
            table_insert(r->query_slots, r->query_mask, id->hash, q);
        r->judged_start[q + 1] = r->judged_start[q] + table_size(PyDict_GET_SIZE(judged));
        n_judged += PyDict_GET_SIZE(judged);
    }
    r->judged = PyMem_Calloc((size_t)n_judged + 1, sizeof(Bytes));
    r->judged_label = PyMem_Calloc((size_t)n_judged + 1, sizeof(int32_t));
    r->judged_slots = PyMem_Calloc((size_t)r->judged_start[n] + 1, sizeof(Slot));
    if (!r->judged || !r->judged_label || !r->judged_slots) return PyErr_NoMemory(), -1;
    for (Py_ssize_t q = 0, j = 0; q < n; q++) {
        PyObject *key, *value;
        Py_ssize_t i = 0;
        uint32_t mask = (uint32_t)(r->judged_start[q + 1] - r->judged_start[q] - 1);
        for (; PyDict_Next(PyList_GET_ITEM(judgments, q), &i, &key, &value); j++) {
            long label = PyLong_AsLong(value);
            const char *p = PyUnicode_AsUTF8AndSize(key, &size);
            if ((label == -1 && PyErr_Occurred()) || !p) return -1;
            r->judged[j] = (Bytes){p, (uint32_t)size, hash_bytes(p, (uint32_t)size)};
            r->judged_label[j] = (int32_t)label;
            table_insert(r->judged_slots + r->judged_start[q], mask, r->judged[j].hash, j);
        }
    }
    return 0;
}

/* trec_eval order: float32 score descending, then doc id descending in byte order (C strcmp). */
static int record_before(const Record *a, const Record *b) {
    float sa = (float)a->score, sb = (float)b->score;
    if (sa != sb) return sa > sb;
    for (uint32_t i = 0; i < a->doc_n && i < b->doc_n; i++)
        if (a->doc[i] != b->doc[i]) return (unsigned char)a->doc[i] > (unsigned char)b->doc[i];
    return a->doc_n > b->doc_n;
}

static int compare_records(const void *a, const void *b) {
    return record_before(a, b) ? -1 : record_before(b, a);
}

/* Sort a few records in place (tie groups are mostly 2 to 5 long: a qsort call per group cost more). */
static void insertion_sort(Record *records, Py_ssize_t n) {
    for (Py_ssize_t i = 1; i < n; i++) {
        Record moving = records[i];
        Py_ssize_t j = i;
        for (; j > 0 && record_before(&moving, &records[j - 1]); j--) records[j] = records[j - 1];
        records[j] = moving;
    }
}

/* Reorder records by float32 score descending, keeping their order among equal scores: an LSD radix sort of
 * (score key << 32 | position), a byte of the key a pass, skipping a pass where all keys share that byte. On a
 * query of a thousand shuffled records it takes a fraction of qsort's time (most of it was comparisons). */
static int order_by_score(Record *records, Py_ssize_t n) {
    uint64_t *items = PyMem_Malloc((size_t)n * 2 * sizeof(uint64_t)), *from = items, *to = items + n;
    Record *copy = PyMem_Malloc((size_t)n * sizeof(Record));
    if (!items || !copy) return PyMem_Free(items), PyMem_Free(copy), PyErr_NoMemory(), -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        float score = (float)records[i].score + 0.0f; /* + 0: -0.0 and 0.0 tie, as in trec_eval */
        uint32_t bits;
        memcpy(&bits, &score, sizeof bits);
        uint32_t ascending = bits >> 31 ? ~bits : bits | 0x80000000u; /* unsigned order = float order */
        from[i] = (uint64_t)~ascending << 32 | (uint64_t)i;
    }
    for (int shift = 32; shift < 64; shift += 8) {
        Py_ssize_t start[256] = {0};
        for (Py_ssize_t i = 0; i < n; i++) start[(from[i] >> shift) & 255]++;
        if (start[(from[0] >> shift) & 255] == n) continue;
        for (Py_ssize_t digit = 0, total = 0; digit < 256; digit++) {
            Py_ssize_t count = start[digit];
            start[digit] = total;
            total += count;
        }
        for (Py_ssize_t i = 0; i < n; i++) to[start[(from[i] >> shift) & 255]++] = from[i];
        uint64_t *swap = from;
        from = to, to = swap;
    }
    memcpy(copy, records, (size_t)n * sizeof(Record));
    for (Py_ssize_t i = 0; i < n; i++) records[i] = copy[(uint32_t)from[i]];
    PyMem_Free(items);
    PyMem_Free(copy);
    return 0;
}

/* Sort one query into trec_eval order (record_before): by score unless it is sorted already (runs usually come
 * sorted), then each tie group that is out of order by doc id. */
static int sort_query(Record *records, Py_ssize_t n) {
    Py_ssize_t i, first;
    for (i = 1; i < n; i++)
        if ((float)records[i].score > (float)records[i - 1].score) {
            if (order_by_score(records, n) < 0) return -1;
            break;
        }
    for (first = 0; first < n; first = i) {
        int ordered = 1;
        for (i = first + 1; i < n && (float)records[i].score == (float)records[first].score; i++)
            ordered &= record_before(&records[i - 1], &records[i]);
        if (ordered) continue;
        if (i - first <= 16) insertion_sort(records + first, i - first);
        else qsort(records + first, (size_t)(i - first), sizeof(Record), compare_records);
    }
    return 0;
}

#define BLOCK_BYTES (1 << 20)

/* A copy of n bytes in the current block (a new one when it is full); NULL when out of memory. */
static const char *keep_bytes(Ranking *r, const char *p, uint32_t n) {
    if (!r->n_blocks || r->block_used + n > BLOCK_BYTES) {
        if (reserve((void **)&r->blocks, &r->blocks_size, r->n_blocks + 1, sizeof(char *)) < 0) return NULL;
        if (!(r->blocks[r->n_blocks] = PyMem_Malloc(n > BLOCK_BYTES ? n : BLOCK_BYTES))) return PyErr_NoMemory(), NULL;
        r->n_blocks++;
        r->block_used = 0;
    }
    char *copy = r->blocks[r->n_blocks - 1] + r->block_used;
    memcpy(copy, p, n);
    r->block_used += n;
    return copy;
}

/* The index of `doc` in the table of distinct top doc ids, adding it (and growing the table) when new. */
static Py_ssize_t top_doc_index(Ranking *r, Bytes *doc) {
    Py_ssize_t found = r->top_slots ? table_find(r->top_slots, r->top_mask, r->top_table, doc) : -1;
    if (found >= 0) return found;
    if (!r->top_slots || 2 * ((uint64_t)r->n_top_table + 1) > (uint64_t)r->top_mask + 1) { /* keep it half empty */
        uint32_t size = r->top_slots ? 2 * (r->top_mask + 1) : 4096;
        Bytes *table = PyMem_Realloc(r->top_table, (size_t)size / 2 * sizeof(Bytes));
        if (table) r->top_table = table;
        PyMem_Free(r->top_slots);
        if (!table || !(r->top_slots = PyMem_Calloc((size_t)size, sizeof(Slot)))) return PyErr_NoMemory(), -1;
        r->top_mask = size - 1;
        for (uint32_t i = 0; i < r->n_top_table; i++) table_insert(r->top_slots, r->top_mask, r->top_table[i].hash, i);
    }
    const char *copy = keep_bytes(r, doc->p, doc->n);
    if (!copy) return -1;
    r->top_table[r->n_top_table] = (Bytes){copy, doc->n, doc->hash};
    table_insert(r->top_slots, r->top_mask, doc->hash, r->n_top_table);
    return r->n_top_table++;
}

static const Bytes *sort_keys; /* for compare_keys: qsort has no context argument (the GIL is held) */

static int compare_keys(const void *a, const void *b) { /* byte order, which is code point order for UTF-8 */
    const Bytes *x = &sort_keys[*(const uint32_t *)a], *y = &sort_keys[*(const uint32_t *)b];
    int c = memcmp(x->p, y->p, x->n < y->n ? x->n : y->n);
    return c ? c : (x->n > y->n) - (x->n < y->n);
}

/* MS MARCO scores are -rank: a tie is a rank given twice in the query, which trec_eval's order would break by
 * doc id, silently. Among the lines of each tie group (adjacent once sorted), the second in file order repeats
 * a rank; keep the earliest such line of the file. */
static void note_repeated_rank(Ranking *r, const Record *rec, Py_ssize_t n) {
    for (Py_ssize_t first = 0, i; first < n; first = i) {
        const char *earliest = rec[first].doc, *second = NULL;
        for (i = first + 1; i < n && rec[i].score == rec[first].score; i++) {
            const char *p = rec[i].doc;
            if (p < earliest) second = earliest, earliest = p;
            else if (!second || p < second) second = p;
        }
        if (second && (!r->repeated_rank || second < r->repeated_rank)) r->repeated_rank = second;
    }
}

/* All lines of query q are read: check for a repeated doc id, sort them, then look up the labels of the
 * ranks kept (only those: a depth-1,000 run scored at cutoffs up to 100 needs a tenth) and make the top list. */
static int finish_query(Ranking *r, Py_ssize_t q, Record *rec, Py_ssize_t n) {
    uint32_t dup_mask = table_size(n) - 1, mask = (uint32_t)(r->judged_start[q + 1] - r->judged_start[q] - 1);
    Py_ssize_t keep = r->keep_top < 0 || r->keep_top > n ? n : r->keep_top;
    Py_ssize_t labelled = r->label_depth < 0 || r->label_depth > n ? n : r->label_depth;
    if (dup_mask >= r->dup_size) {
        PyMem_Free(r->dup_slots);
        if (!(r->dup_slots = PyMem_Malloc(((size_t)dup_mask + 1) * sizeof(Slot)))) return PyErr_NoMemory(), -1;
        r->dup_size = dup_mask + 1;
    }
    memset(r->dup_slots, 0, ((size_t)dup_mask + 1) * sizeof(Slot));
    for (Py_ssize_t i = 0; i < n; i++) {
        Bytes doc = {rec[i].doc, rec[i].doc_n, hash_bytes(rec[i].doc, rec[i].doc_n)};
        uint32_t s = doc.hash & dup_mask;
        for (; r->dup_slots[s].index; s = (s + 1) & dup_mask) {
            const Record *other = &rec[r->dup_slots[s].index - 1];
            if (r->dup_slots[s].hash == doc.hash && other->doc_n == doc.n && same_bytes(other->doc, doc.p, doc.n))
                r->repeated = r->repeated && r->repeated < doc.p ? r->repeated : doc.p;
        }
        r->dup_slots[s] = (Slot){doc.hash, (uint32_t)(i + 1)};
    }
    if (sort_query(rec, n) < 0) return -1;
    if (r->layout == MSMARCO) note_repeated_rank(r, rec, n);
    if (reserve((void **)&r->labels, &r->labels_size, r->n_labels + labelled, sizeof(int32_t)) < 0 ||
        reserve((void **)&r->tops, &r->tops_size, r->n_tops + keep, sizeof(Entry)) < 0)
        return -1;
    r->label_start[q] = r->n_labels;
    r->count[q] = n;
    r->top_start[q] = r->n_tops;
    r->top_count[q] = keep;
    for (Py_ssize_t i = 0; i < labelled || i < keep; i++) {
        Bytes doc = {rec[i].doc, rec[i].doc_n, hash_bytes(rec[i].doc, rec[i].doc_n)};
        if (i < labelled) {
            Py_ssize_t j = table_find(r->judged_slots + r->judged_start[q], mask, r->judged, &doc);
            r->labels[r->n_labels++] = j < 0 ? UNJUDGED : r->judged_label[j];
        }
        if (i < keep) {
            Py_ssize_t d = top_doc_index(r, &doc);
            if (d < 0) return -1;
            r->tops[r->n_tops++] = (Entry){rec[i].score, (uint32_t)d};
        }
    }
    r->below_start[q] = r->n_below;
    for (Py_ssize_t i = keep; r->judged_below && i < n; i++) { /* few are judged: only those are kept */
        Bytes doc = {rec[i].doc, rec[i].doc_n, hash_bytes(rec[i].doc, rec[i].doc_n)};
        Py_ssize_t j = table_find(r->judged_slots + r->judged_start[q], mask, r->judged, &doc);
        if (j < 0) continue;
        if (reserve((void **)&r->below, &r->below_size, r->n_below + 1, sizeof(Below)) < 0) return -1;
        r->below[r->n_below++] = (Below){rec[i].score, (int64_t)i + 1, (int64_t)j};
        r->below_count[q]++;
    }
    return 0;
}

/* Count a run query id that has no judgments, once (the table grows like the top doc table). */
static int note_unjudged(Ranking *r, const Bytes *query) {
    if (r->unjudged_slots && table_find(r->unjudged_slots, r->unjudged_mask, r->unjudged, query) >= 0) return 0;
    if (!r->unjudged_slots || 2 * ((uint64_t)r->n_unjudged + 1) > (uint64_t)r->unjudged_mask + 1) {
        uint32_t size = r->unjudged_slots ? 2 * (r->unjudged_mask + 1) : 1024;
        Bytes *table = PyMem_Realloc(r->unjudged, (size_t)size / 2 * sizeof(Bytes));
        if (table) r->unjudged = table;
        PyMem_Free(r->unjudged_slots);
        if (!table || !(r->unjudged_slots = PyMem_Calloc((size_t)size, sizeof(Slot)))) return PyErr_NoMemory(), -1;
        r->unjudged_mask = size - 1;
        for (uint32_t i = 0; i < r->n_unjudged; i++)
            table_insert(r->unjudged_slots, r->unjudged_mask, r->unjudged[i].hash, i);
    }
    r->unjudged[r->n_unjudged] = *query; /* points into the buffer, which outlives the parse */
    table_insert(r->unjudged_slots, r->unjudged_mask, query->hash, r->n_unjudged);
    r->n_unjudged++;
    return 0;
}

/* Read every line and finish each qrels query as soon as its lines end. If a query's lines turn out to be
 * interleaved with others', returns 1 at once: the caller starts again with r->interleaved set, which keeps
 * all lines and finishes the queries at the end. Returns 0, or -1 with *message (an input error at *line),
 * r->repeated or a Python exception. */
static int parse_run(Ranking *r, const char *pos, const char *end, Py_ssize_t *line, PyObject **message) {
    Bytes f[6], last_query = {NULL, 0, 0};
    Py_ssize_t row = -1, current = -1;
    int high, n_fields, msmarco = r->layout == MSMARCO, wanted = msmarco ? 3 : 6;
    long rank = 0;
    double score = 0;
    for (*line = 1; pos < end; (*line)++) {
        const char *line_start = pos;
        if (!(n_fields = split_line(r->classes, &pos, f, 6, &high))) continue;
        int bad_count = msmarco ? n_fields != 3 : n_fields < 6;
        int bad_text = !bad_count && high && !is_utf8(line_start, pos - line_start);
        /* ranks up to 2^24: their scores -rank stay distinct as float32, the precision trec_eval orders by */
        int bad_score = bad_count || bad_text ? 0
                        : msmarco ? (parse_label(&f[2], &rank) < 0 || rank < 1 || rank > (1L << 24) ? -1 : 0)
                                  : parse_score(f[4].p, f[4].n, &score);
        if (bad_count || bad_text || bad_score) {
            char note[256];
            if (bad_count)
                *message = PyUnicode_FromFormat(msmarco ? "expected 3 columns 'query_id doc_id rank' (MS MARCO run), "
                                                          "found %d%s"
                                                        : "expected 6 columns 'query_id Q0 doc_id rank score tag', "
                                                          "found %d%s",
                                                n_fields, count_fix(r->classes, line_start, wanted,
                                                                    msmarco ? 3 : INT_MAX, note, sizeof note));
            else if (bad_text)
                *message = PyUnicode_FromString("is not valid UTF-8; save the file as UTF-8");
            else if (msmarco)
                *message = format_fields("rank %R is not a whole number from 1 to 16777216; an MS MARCO run line is "
                                         "'query_id doc_id rank'", &f[2], NULL);
            else if (bad_score == -2)
                *message = format_fields("score %R is beyond float32's range (about 3.4e38), where trec_eval "
                                         "compares scores: it would tie as infinity; rescale the run's scores",
                                         &f[4], NULL);
            else
                *message = format_fields("score %R is not a finite decimal number; write scores such as "
                                         "12.5 or -3.2e-4", &f[4], NULL);
            return -1;
        }
        if (n_fields > wanted && !r->extra_lines++) r->first_extra = *line;
        if (!msmarco && r->classes == tab_class && has_blank(f, 5) && !r->spaced_lines++) r->first_spaced = *line;
        if (msmarco) { /* the same fields as a TREC line: document second, score from the rank */
            f[2] = f[1];
            score = -(double)rank; /* exact, and float32-exact up to 2^24: the ranks give the order */
        }
        if (!r->first_query.p) r->first_query = f[0];
        if (f[0].n != last_query.n || !same_bytes(f[0].p, last_query.p, f[0].n)) {
            f[0].hash = hash_bytes(f[0].p, f[0].n);
            row = table_find(r->query_slots, r->query_mask, r->queries, &f[0]);
            last_query = f[0];
            if (row < 0 && note_unjudged(r, &f[0]) < 0) return -1;
        }
        if (row < 0) continue;
        if (row != current) {
            if (r->seen[row] && !r->interleaved) return 1;
            if (current >= 0 && !r->interleaved) {
                if (finish_query(r, current, r->records, r->n_records) < 0 || r->repeated || r->repeated_rank)
                    return -1;
                r->n_records = 0;
            }
            r->seen[row] = 1;
            current = row;
        }
        if (r->ignore_identical && f[2].n == f[0].n && same_bytes(f[2].p, f[0].p, f[0].n)) continue;
        if (reserve((void **)&r->records, &r->records_size, r->n_records + 1, sizeof(Record)) < 0) return -1;
        r->records[r->n_records++] = (Record){f[2].p, f[2].n, {.row = (int32_t)row}, score};
    }
    if (!r->interleaved) return current >= 0 ? finish_query(r, current, r->records, r->n_records) : 0;
    /* Interleaved: group each query's lines (a counting sort, stable), then finish the queries. */
    Py_ssize_t *offset = PyMem_Calloc((size_t)r->n_queries + 1, sizeof(Py_ssize_t));
    Record *grouped = PyMem_Malloc((size_t)r->n_records * sizeof(Record) + 1);
    int status = offset && grouped ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; !status && i < r->n_records; i++) offset[r->records[i].row + 1]++;
    for (Py_ssize_t q = 0; !status && q < r->n_queries; q++) offset[q + 1] += offset[q];
    for (Py_ssize_t i = 0; !status && i < r->n_records; i++) grouped[offset[r->records[i].row]++] = r->records[i];
    for (Py_ssize_t q = 0, first = 0; !status && q < r->n_queries; first = offset[q++])
        if (r->seen[q]) status = finish_query(r, q, grouped + first, offset[q] - first);
    PyMem_Free(offset);
    PyMem_Free(grouped);
    return status;
}

/* The kept tops as columns, queries in qrels order: the distinct doc ids sorted in byte order (a list of str),
 * and per entry its index into them (int64) and its score (float64). */
static int top_columns(Ranking *r, PyObject **doc_ids, PyObject **docs, PyObject **scores) {
    uint32_t *order = PyMem_Malloc((size_t)r->n_top_table * sizeof(uint32_t) + 1);
    uint32_t *position = PyMem_Malloc((size_t)r->n_top_table * sizeof(uint32_t) + 1); /* inverse of order */
    if (!order || !position) return PyMem_Free(order), PyMem_Free(position), PyErr_NoMemory(), -1;
    for (uint32_t i = 0; i < r->n_top_table; i++) order[i] = i;
    sort_keys = r->top_table;
    qsort(order, r->n_top_table, sizeof(uint32_t), compare_keys);
    *doc_ids = PyList_New(r->n_top_table);
    *docs = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n_tops * sizeof(int64_t)));
    *scores = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n_tops * sizeof(double)));
    int status = *doc_ids && *docs && *scores ? 0 : -1;
    for (uint32_t k = 0; !status && k < r->n_top_table; k++) {
        const Bytes *doc = &r->top_table[order[k]];
        PyObject *text = PyUnicode_DecodeUTF8(doc->p, doc->n, "strict");
        if (!text) status = -1;
        else PyList_SET_ITEM(*doc_ids, k, text);
        position[order[k]] = k;
    }
    int64_t *doc_out = status ? NULL : (int64_t *)PyByteArray_AS_STRING(*docs);
    double *score_out = status ? NULL : (double *)PyByteArray_AS_STRING(*scores);
    for (Py_ssize_t q = 0, j = 0; !status && q < r->n_queries; q++)
        for (Py_ssize_t i = r->top_start[q]; i < r->top_start[q] + r->top_count[q]; i++, j++) {
            doc_out[j] = position[r->tops[i].doc];
            score_out[j] = r->tops[i].score;
        }
    PyMem_Free(order);
    PyMem_Free(position);
    return status;
}

/* The judged entries below the tops as columns, queries in qrels order (see rank_run). */
static int below_columns(Ranking *r, PyObject **counts, PyObject **ranks, PyObject **judged, PyObject **scores) {
    *counts = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n_queries * sizeof(int64_t)));
    *ranks = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n_below * sizeof(int64_t)));
    *judged = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n_below * sizeof(int64_t)));
    *scores = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)r->n_below * sizeof(double)));
    if (!*counts || !*ranks || !*judged || !*scores) return -1;
    int64_t *count_out = (int64_t *)PyByteArray_AS_STRING(*counts), *rank_out = (int64_t *)PyByteArray_AS_STRING(*ranks);
    int64_t *judged_out = (int64_t *)PyByteArray_AS_STRING(*judged);
    double *score_out = (double *)PyByteArray_AS_STRING(*scores);
    for (Py_ssize_t q = 0, k = 0; q < r->n_queries; q++) { /* an interleaved file finishes queries out of order */
        count_out[q] = r->below_count[q];
        for (Py_ssize_t i = r->below_start[q]; i < r->below_start[q] + r->below_count[q]; i++, k++) {
            rank_out[k] = r->below[i].rank;
            judged_out[k] = r->below[i].judged;
            score_out[k] = r->below[i].score;
        }
    }
    return 0;
}

/* rank_run(buffer, query_ids, judgments, ignore_identical_ids, keep_top, label_depth, judged_below, layout, tabs)
 *   -> (labels: bytearray of int32 (queries, depth), lengths: bytearray of int64, depth,
 *       doc_ids, top_lengths, top_docs, top_scores, below_counts, below_ranks, below_judged, below_scores,
 *       extra_lines, first_extra_line, unjudged_queries, spaced_lines, first_spaced_line)
 * depth is the longest ranking, at most label_depth (no limit when negative); lengths are the full lengths.
 * The next four are the top keep_top (all when negative) of each qrels query in trec_eval order, as columns:
 * doc_ids the distinct doc ids in byte order, top_lengths per query (int64; 0 where the run lacks the query),
 * top_docs (int64 indices into doc_ids) and top_scores (float64), all queries' entries concatenated.
 * With judged_below, the four after them list every judged entry ranked below the top keep_top, in the same way:
 * below_counts per query (int64), and per entry its 1-based rank (int64), its index among all judgments in the
 * order of `judgments` (int64) and its score (float64); without it they are empty.
 * layout: 0 for TREC lines (6 columns or more), 1 for MS MARCO's `qid docid rank` (score = -rank; a rank given
 * twice in a query is an error); tabs: fields are split on tabs only (a tab-separated file). The last five
 * results: how many TREC lines have more than 6 columns, the first of them, the number of distinct run query
 * ids without judgments, and how many lines of a tab-separated TREC run have a space inside one of their first five
 * columns, and the first of them. */
static PyObject *rank_run(PyObject *self, PyObject *args) {
    Py_buffer view;
    PyObject *query_ids, *judgments, *message = NULL, *labels = NULL, *lengths = NULL, *top_lengths = NULL;
    PyObject *doc_ids = NULL, *docs = NULL, *scores = NULL, *result = NULL;
    PyObject *below_counts = NULL, *below_ranks = NULL, *below_judged = NULL, *below_scores = NULL;
    Py_ssize_t line = 0, depth = 1, n;
    Ranking r = {0};
    int tabs;
    if (!PyArg_ParseTuple(args, "y*O!O!pnnpip", &view, &PyList_Type, &query_ids, &PyList_Type, &judgments,
                          &r.ignore_identical, &r.keep_top, &r.label_depth, &r.judged_below, &r.layout, &tabs))
        return NULL;
    r.classes = tabs ? tab_class : char_class;
    const char *buffer = view.buf, *end = buffer + view.len;
    n = r.n_queries = PyList_GET_SIZE(query_ids);
    r.label_depth = r.label_depth == 0 ? 1 : r.label_depth; /* the matrix has at least one column */
    r.label_start = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    r.count = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    r.seen = PyMem_Calloc((size_t)n + 1, 1);
    r.top_start = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    r.top_count = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    r.below_start = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    r.below_count = PyMem_Calloc((size_t)n + 1, sizeof(Py_ssize_t));
    if (!r.label_start || !r.count || !r.seen || !r.top_start || !r.top_count || !r.below_start || !r.below_count)
        PyErr_NoMemory();
    else if (PyList_GET_SIZE(judgments) != n || view.len == 0 || end[-1] != '\n')
        PyErr_SetString(PyExc_ValueError, "expected one dict per query and a buffer ending with a newline");
    if (PyErr_Occurred() || load_qrels(&r, query_ids, judgments) < 0) goto done;
    int status = parse_run(&r, buffer, end, &line, &message);
    if (status == 1) {
        ranking_reset(&r);
        r.interleaved = 1;
        status = parse_run(&r, buffer, end, &line, &message);
    }
    if (r.repeated && (!r.repeated_rank || r.repeated < r.repeated_rank)) {
        Bytes doc = {r.repeated, 0, 0};
        while (r.classes[(unsigned char)r.repeated[doc.n]] <= BLANK) doc.n++; /* the field as split_line cut it */
        while (r.classes[(unsigned char)r.repeated[doc.n - 1]] == BLANK) doc.n--;
        for (line = 1; (buffer = memchr(buffer, '\n', (size_t)(r.repeated - buffer))) != NULL; buffer++) line++;
        message = format_fields("document %R appears a second time for its query; a run ranks each document "
                                "once per query", &doc, NULL);
    } else if (r.repeated_rank) {
        const char *start = r.repeated_rank;
        Bytes f[3];
        int high;
        while (start > buffer && start[-1] != '\n') start--;
        for (line = 1; (buffer = memchr(buffer, '\n', (size_t)(start - buffer))) != NULL; buffer++) line++;
        split_line(r.classes, &start, f, 3, &high);
        message = format_fields("rank %R appears a second time for query %R; an MS MARCO run gives each of a "
                                "query's documents its own rank (1, 2, 3, ...): fix the ranks, or write a TREC run "
                                "with scores", &f[2], &f[0]);
    }
    if (status < 0 || message) goto done;
    line = 0;
    if (!r.first_query.p)
        message = PyUnicode_FromString(r.layout == MSMARCO ? "has no run lines; expected 'query_id doc_id rank' lines"
                                                           : "has no run lines; expected 'query_id Q0 doc_id rank "
                                                             "score tag' lines");
    else if (!memchr(r.seen, 1, (size_t)n))
        message = format_fields("has no query id in common with the qrels (its first query id is %R); check "
                                "that the run and the qrels are for the same dataset and split", &r.first_query, NULL);
    if (message) goto done;

    for (Py_ssize_t q = 0; q < n; q++) depth = r.count[q] > depth ? r.count[q] : depth;
    if (r.label_depth >= 0 && depth > r.label_depth) depth = r.label_depth;
    labels = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * depth * sizeof(int32_t)));
    lengths = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * sizeof(int64_t)));
    top_lengths = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * sizeof(int64_t)));
    if (!labels || !lengths || !top_lengths || top_columns(&r, &doc_ids, &docs, &scores) < 0 ||
        below_columns(&r, &below_counts, &below_ranks, &below_judged, &below_scores) < 0)
        goto done;
    for (Py_ssize_t q = 0; q < n; q++) {
        int32_t *row = (int32_t *)PyByteArray_AS_STRING(labels) + q * depth;
        Py_ssize_t labelled = r.count[q] < depth ? r.count[q] : depth;
        if (labelled) memcpy(row, r.labels + r.label_start[q], (size_t)labelled * sizeof(int32_t));
        for (Py_ssize_t i = labelled; i < depth; i++) row[i] = PAD;
        ((int64_t *)PyByteArray_AS_STRING(lengths))[q] = r.count[q];
        ((int64_t *)PyByteArray_AS_STRING(top_lengths))[q] = r.top_count[q];
    }
    result = Py_BuildValue("(OOnOOOOOOOOnnnnn)", labels, lengths, depth, doc_ids, top_lengths, docs, scores,
                           below_counts, below_ranks, below_judged, below_scores, r.extra_lines, r.first_extra,
                           (Py_ssize_t)r.n_unjudged, r.spaced_lines, r.first_spaced);
done:
    PyBuffer_Release(&view);
    ranking_free(&r);
    Py_XDECREF(labels);
    Py_XDECREF(lengths);
    Py_XDECREF(top_lengths);
    Py_XDECREF(doc_ids);
    Py_XDECREF(docs);
    Py_XDECREF(scores);
    Py_XDECREF(below_counts);
    Py_XDECREF(below_ranks);
    Py_XDECREF(below_judged);
    Py_XDECREF(below_scores);
    return message ? line_error(line, message) : result;
}

/* A dict run's score, when it is a plain number (a float, or an int that is not a bool), finite and within
 * float32's range: 1; 0 when it is not (the caller's general path says what is wrong); -1 for an exception. */
static int plain_score(PyObject *value, double *out) {
    if (PyFloat_Check(value)) *out = PyFloat_AS_DOUBLE(value); /* numpy's float64 is a float too */
    else if (PyLong_CheckExact(value)) {
        *out = PyLong_AsDouble(value);
        if (*out == -1.0 && PyErr_Occurred()) {
            if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return -1;
            PyErr_Clear();
            return 0;
        }
    } else
        return 0;
    return isfinite(*out) && !isinf((float)*out); /* as parse_score: out of float32's range gives an infinity */
}

/* rank_dict(run, query_ids, judgments, ignore_identical_ids) -> (labels: bytearray of int32 (queries, depth),
 *   lengths: bytearray of int64, depth), or None
 * rank_run for a run already in memory, {query_id: {doc_id: score}}: each qrels query's entries in trec_eval order
 * (record_before), with their labels from `judgments` (query q's {doc_id: label}); depth is the longest ranking
 * (at least 1), lengths are per query (0 where the run lacks it). Only for the plain case, the common one: a dict
 * of dicts with str ids, the judged queries' scores plain numbers (plain_score) and at least one query in common
 * with the judgments. Otherwise None: the caller's general path converts the input or says what is wrong. */
static PyObject *rank_dict(PyObject *self, PyObject *args) {
    PyObject *run, *query_ids, *judgments, *rows, *query, *ranking, *doc, *value, *row;
    PyObject *labels = NULL, *lengths = NULL, *result = NULL;
    Record *records = NULL;
    int ignore_identical, plain = 1;
    Py_ssize_t i = 0, j, depth = 1, shared = 0;
    if (!PyArg_ParseTuple(args, "O!O!O!p", &PyDict_Type, &run, &PyList_Type, &query_ids, &PyList_Type, &judgments,
                          &ignore_identical))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(query_ids);
    if (PyList_GET_SIZE(judgments) != n) {
        PyErr_SetString(PyExc_ValueError, "expected one dict per query");
        return NULL;
    }
    if (!(rows = PyDict_New())) return NULL;
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *index = PyLong_FromSsize_t(q);
        int failed = !index || PyDict_SetItem(rows, PyList_GET_ITEM(query_ids, q), index) < 0;
        Py_XDECREF(index);
        if (failed) goto done;
    }
    lengths = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * sizeof(int64_t)));
    if (!lengths) goto done;
    int64_t *length = (int64_t *)PyByteArray_AS_STRING(lengths);
    memset(length, 0, (size_t)n * sizeof(int64_t));
    /* First pass: the ids are all str, the rankings dicts; each judged query's length */
    while (plain && PyDict_Next(run, &i, &query, &ranking)) {
        plain = PyUnicode_CheckExact(query) && PyDict_CheckExact(ranking);
        for (j = 0; plain && PyDict_Next(ranking, &j, &doc, &value);) plain = PyUnicode_CheckExact(doc);
        if (!plain || !(row = PyDict_GetItemWithError(rows, query))) {
            if (PyErr_Occurred()) goto done;
            continue;
        }
        int self_ranked = ignore_identical ? PyDict_Contains(ranking, query) : 0;
        if (self_ranked < 0) goto done;
        Py_ssize_t q = PyLong_AsSsize_t(row);
        length[q] = PyDict_GET_SIZE(ranking) - self_ranked;
        depth = length[q] > depth ? length[q] : depth;
        shared++;
    }
    if (PyErr_Occurred() || !plain || !shared) goto done;
    labels = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)((size_t)n * depth * sizeof(int32_t)));
    records = PyMem_Malloc((size_t)depth * sizeof(Record));
    if (!labels || !records) {
        if (labels) PyErr_NoMemory();
        goto done;
    }
    int32_t *matrix = (int32_t *)PyByteArray_AS_STRING(labels);
    for (Py_ssize_t k = 0; k < n * depth; k++) matrix[k] = PAD;
    /* Second pass: each judged query's entries, sorted, and their labels */
    for (i = 0; plain && PyDict_Next(run, &i, &query, &ranking);) {
        if (!(row = PyDict_GetItemWithError(rows, query))) {
            if (PyErr_Occurred()) goto done;
            continue;
        }
        Py_ssize_t q = PyLong_AsSsize_t(row), m = 0, size;
        PyObject *judged = PyList_GET_ITEM(judgments, q);
        for (j = 0; plain && PyDict_Next(ranking, &j, &doc, &value);) {
            double score;
            if (ignore_identical && PyUnicode_Compare(doc, query) == 0) continue;
            if ((plain = plain_score(value, &score)) < 0) goto done;
            const char *text = plain ? PyUnicode_AsUTF8AndSize(doc, &size) : NULL;
            if (plain && !text) { /* a lone surrogate has no UTF-8: the general path orders it */
                if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto done;
                PyErr_Clear();
                plain = 0;
            }
            PyObject *label = plain ? PyDict_GetItemWithError(judged, doc) : NULL;
            if (PyErr_Occurred()) goto done;
            plain = plain && (!label || PyLong_CheckExact(label));
            if (plain) records[m++] = (Record){text, (uint32_t)size, {.label = label ? (int32_t)PyLong_AsLong(label)
                                                                                      : UNJUDGED}, score};
        }
        if (sort_query(records, m) < 0) goto done;
        for (Py_ssize_t k = 0; plain && k < m; k++) matrix[q * depth + k] = records[k].label;
    }
    if (plain && !PyErr_Occurred()) result = Py_BuildValue("(OOn)", labels, lengths, depth);
done:
    PyMem_Free(records);
    Py_DECREF(rows);
    Py_XDECREF(labels);
    Py_XDECREF(lengths);
    if (!result && !PyErr_Occurred()) Py_RETURN_NONE;
    return result;
}

/* `value` in decimal, written backwards from `end`; returns the start. */
static const char *format_long(long value, char *end, Py_ssize_t *n) {
    unsigned long magnitude = value < 0 ? 0ul - (unsigned long)value : (unsigned long)value;
    char *p = end;
    do *--p = (char)('0' + magnitude % 10);
    while (magnitude /= 10);
    if (value < 0) *--p = '-';
    *n = end - p;
    return p;
}

/* judgment_lines(query_ids, judgments) -> bytes: "query_id\tdoc_id\tlabel\n" for every judgment (labels as
 * str() writes them), queries in the given order, each one's doc ids in byte order, which is code point order:
 * the text Qrels.sha256 hashes. */
static PyObject *judgment_lines(PyObject *self, PyObject *args) {
    PyObject *query_ids, *judgments, *result = NULL, *key, *value;
    if (!PyArg_ParseTuple(args, "O!O!", &PyList_Type, &query_ids, &PyList_Type, &judgments)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(query_ids), used = 0, size = 0, room = 0, size_q;
    char *out = NULL, number[32];
    Bytes *docs = NULL;
    PyObject **labels = NULL;
    uint32_t *order = NULL;
    if (PyList_GET_SIZE(judgments) != n) {
        PyErr_SetString(PyExc_ValueError, "expected one dict per query");
        return NULL;
    }
    for (Py_ssize_t q = 0; q < n; q++) {
        PyObject *judged = PyList_GET_ITEM(judgments, q);
        const char *query = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(query_ids, q), &size_q);
        if (!query) goto done;
        if (!PyDict_Check(judged)) {
            PyErr_SetString(PyExc_TypeError, "judgments must be dicts");
            goto done;
        }
        Py_ssize_t m = PyDict_GET_SIZE(judged), i = 0, k = 0;
        if (m > room) {
            room = m;
            PyMem_Free(docs), PyMem_Free(labels), PyMem_Free(order);
            docs = PyMem_Malloc((size_t)m * sizeof(Bytes));
            labels = PyMem_Malloc((size_t)m * sizeof(PyObject *));
            order = PyMem_Malloc((size_t)m * sizeof(uint32_t));
            if (!docs || !labels || !order) {
                PyErr_NoMemory();
                goto done;
            }
        }
        for (; PyDict_Next(judged, &i, &key, &value); k++) {
            Py_ssize_t doc_n;
            const char *doc = PyUnicode_AsUTF8AndSize(key, &doc_n); /* TypeError for a key that is not a str */
            if (!doc) goto done;
            docs[k] = (Bytes){doc, (uint32_t)doc_n, 0};
            labels[k] = value;
            order[k] = (uint32_t)k;
        }
        sort_keys = docs;
        if (m > 64) qsort(order, (size_t)m, sizeof(uint32_t), compare_keys);
        else /* most queries have a few dozen judgments: an insertion sort beats a qsort call */
            for (Py_ssize_t a = 1; a < m; a++) {
                uint32_t moving = order[a];
                Py_ssize_t b = a;
                for (; b > 0 && compare_keys(&moving, &order[b - 1]) < 0; b--) order[b] = order[b - 1];
                order[b] = moving;
            }
        for (k = 0; k < m; k++) {
            const Bytes *doc = &docs[order[k]];
            PyObject *label = labels[order[k]], *text = NULL;
            const char *shown = number;
            Py_ssize_t shown_n;
            int overflow = 0;
            long whole = PyLong_CheckExact(label) ? PyLong_AsLongAndOverflow(label, &overflow) : 0;
            if (PyLong_CheckExact(label) && !overflow && !(whole == -1 && PyErr_Occurred()))
                shown = format_long(whole, number + sizeof number, &shown_n); /* snprintf took most of the time */
            else if (PyErr_Occurred() || !(text = PyObject_Str(label)) ||
                     !(shown = PyUnicode_AsUTF8AndSize(text, &shown_n))) {
                Py_XDECREF(text);
                goto done;
            }
            if (reserve((void **)&out, &size, used + size_q + doc->n + shown_n + 3, 1) < 0) {
                Py_XDECREF(text);
                goto done;
            }
            memcpy(out + used, query, (size_t)size_q);
            used += size_q;
            out[used++] = '\t';
            memcpy(out + used, doc->p, doc->n);
            used += doc->n;
            out[used++] = '\t';
            memcpy(out + used, shown, (size_t)shown_n);
            used += shown_n;
            out[used++] = '\n';
            Py_XDECREF(text);
        }
    }
    result = PyBytes_FromStringAndSize(out, used);
done:
    PyMem_Free(out);
    PyMem_Free(docs);
    PyMem_Free(labels);
    PyMem_Free(order);
    return result;
}

static PyMethodDef methods[] = {
    {"parse_qrels", parse_qrels, METH_VARARGS, "Parse qrels text into {query_id: {doc_id: label}}."},
    {"rank_run", rank_run, METH_VARARGS, "Parse a TREC run, join it with the qrels and rank it."},
    {"rank_dict", rank_dict, METH_VARARGS, "Rank a {query_id: {doc_id: score}} run against the qrels."},
    {"judgment_lines", judgment_lines, METH_VARARGS, "The qrels as sorted 'query_id\\tdoc_id\\tlabel' lines."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trec", "Fast TREC run and qrels parsing.", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__trec(void) {
    for (int c = 0; c < 256; c++) char_class[c] = WORD;
    char_class[' '] = char_class['\t'] = char_class['\r'] = char_class['\v'] = char_class['\f'] = SPACE;
    char_class['\n'] = NEWLINE;
    for (int c = 0; c < 256; c++) tab_class[c] = WORD;
    tab_class[' '] = tab_class['\v'] = tab_class['\f'] = BLANK;
    tab_class['\t'] = tab_class['\r'] = SPACE;
    tab_class['\n'] = NEWLINE;
    return PyModule_Create(&module);
}

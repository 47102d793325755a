/* Exact top-k search over an inverted index: the loop behind evaluator/index/sparse.py.
 *
 * Per query, term at a time with MaxScore bounds (Turtle & Flood 1995): terms are taken by decreasing
 * upper bound (query weight x the term's largest weight); their postings are added into a dense float32
 * accumulator. Once the bounds of the terms still to come sum below theta, the k-th best partial score
 * (partial scores only grow, so theta bounds the final k-th score from below), no document unseen so far
 * can reach the top k. If the lists left are long enough, the query then keeps only its candidates
 * (documents whose partial score plus the remaining bounds reaches theta): a list much longer than the
 * candidates is galloped through for them, a shorter one is added whole, and candidates that can no
 * longer reach theta are dropped after each term. The top k are then selected (one pass with a k-entry
 * heap) and sorted by score desc, document asc.
 *
 * The accumulation loop has no branch: BM25 queries at 1M documents touch about a million postings and
 * SPLADE queries several million, and this loop is where the time goes. Every theta or candidate pass
 * over the touched documents is only made once the postings read since the last one outnumber them.
 *
 * Only documents with a positive score are returned; weights must be non-negative (checked by the
 * Python side). Pruning keeps a relative margin (`slack`) over the float32 rounding of a query's m
 * products and additions, so the result equals sorting the full score vector that this same
 * accumulation order produces.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    float score;
    int32_t doc;
} Hit;

typedef struct { /* the index, read only */
    const int64_t *indptr;
    const int32_t *docs;
    const float *weights;
    const float *max_weights;
    int64_t n_docs;
    double gallop_step;
} Index;

typedef struct { /* per-call scratch, sized by the number of documents */
    float *acc;       /* partial scores, zero outside the touched documents */
    int32_t *touched; /* documents with a positive partial score, in first-touch order (until dense) */
    int32_t *cand;    /* candidates (ascending) once pruning has started */
    Hit *heap;        /* k entries */
} Scratch;

typedef struct { /* per-query progress */
    int64_t n_touched, n_cand;
    int dense; /* touched documents are too many to list: scans go over all documents */
} Query;

static int cmp_hit(const void *a, const void *b) {
    const Hit *x = a, *y = b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return (x->doc > y->doc) - (x->doc < y->doc);
}

static int cmp_int32(const void *a, const void *b) {
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Result order is score desc, doc asc; the heap keeps its worst entry on top. */
static inline int worse(Hit a, Hit b) { return a.score < b.score || (a.score == b.score && a.doc > b.doc); }

static void sift_down(Hit *h, int64_t n, int64_t i) {
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && worse(h[c + 1], h[c])) c++;
        if (!worse(h[c], h[i])) return;
        Hit t = h[c];
        h[c] = h[i];
        h[i] = t;
        i = c;
    }
}

static inline void offer(Hit *heap, int64_t *size, int64_t k, Hit h) {
    if (*size < k) {
        int64_t j = (*size)++; /* sift up */
        while (j > 0 && worse(h, heap[(j - 1) / 2])) {
            heap[j] = heap[(j - 1) / 2];
            j = (j - 1) / 2;
        }
        heap[j] = h;
    } else if (worse(heap[0], h)) {
        heap[0] = h;
        sift_down(heap, *size, 0);
    }
}

/* Is one of p[0..16) >= bar? Lets a scan skip most of the scores with a few vector instructions. */
#if defined(__GNUC__)
typedef float f32x4 __attribute__((vector_size(16))); /* one SSE / NEON register */
typedef int32_t i32x4 __attribute__((vector_size(16)));
static inline int any_at_least16(const float *p, float bar) {
    f32x4 v[4], t = {bar, bar, bar, bar};
    memcpy(v, p, sizeof v);
    i32x4 hit = (v[0] >= t) | (v[1] >= t) | (v[2] >= t) | (v[3] >= t);
    int64_t lanes[2];
    memcpy(lanes, &hit, sizeof lanes);
    return (lanes[0] | lanes[1]) != 0;
}
#else
static inline int any_at_least16(const float *p, float bar) {
    int any = 0;
    for (int j = 0; j < 16; j++) any |= p[j] >= bar;
    return any;
}
#endif

/* The (up to) k best documents scoring at least `least` (and above 0) into heap, in one pass: those of
 * docs[0..n), or every document when docs is NULL (n is then the number of documents). Returns how many.
 * With `least` a lower bound of the k-th best score, the result is the plain top k, found faster. */
static int64_t best_k(const float *acc, const int32_t *docs, int64_t n, int64_t k, float least, Hit *heap) {
    int64_t size = 0;
    float worst = least; /* a score must reach this (the heap's top once full) to be offered */
    for (int64_t start = 0; start < n; start += 16) {
        int64_t stop = start + 16 < n ? start + 16 : n;
        if (!docs && stop - start == 16 && !any_at_least16(acc + start, worst > 0 ? worst : FLT_TRUE_MIN)) continue;
        for (int64_t i = start; i < stop; i++) {
            int32_t d = docs ? docs[i] : (int32_t)i;
            if (acc[d] < worst || acc[d] <= 0) continue;
            offer(heap, &size, k, (Hit){acc[d], d});
            if (size == k && heap[0].score > worst) worst = heap[0].score;
        }
    }
    return size;
}

/* The k-th best partial score (theta when fewer than k reach theta): partial scores only grow, so it
 * bounds the k-th final score from below. */
static double kth_score(const Scratch *s, const int32_t *docs, int64_t n, int64_t k, double theta) {
    return best_k(s->acc, docs, n, k, (float)theta, s->heap) == k ? s->heap[0].score : theta;
}

/* acc += w * postings[lo..hi); lists newly touched documents until they are too many to be worth it. */
static void accumulate(const Index *ix, Scratch *s, Query *q, int64_t lo, int64_t hi, float w) {
    float *acc = s->acc;
    const int32_t *docs = ix->docs;
    const float *weights = ix->weights;
    if (q->dense) {
        for (int64_t p = lo; p < hi; p++) acc[docs[p]] += w * weights[p];
        return;
    }
    int32_t *touched = s->touched;
    int64_t n = q->n_touched;
    for (int64_t p = lo; p < hi; p++) {
        int32_t d = docs[p];
        float old = acc[d], add = w * weights[p];
        touched[n] = d; /* kept only for a first positive contribution: no branch */
        n += (old == 0) & (add > 0);
        acc[d] = old + add;
    }
    q->n_touched = n;
    q->dense = n * 8 > ix->n_docs;
}

/* First index in [pos, end) whose document is >= key; docs ascending. Gallops from pos. */
static int64_t gallop(const int32_t *docs, int64_t pos, int64_t end, int32_t key) {
    if (pos >= end || docs[pos] >= key) return pos;
    int64_t lo = pos, step = 1; /* docs[lo] < key */
    while (lo + step < end && docs[lo + step] < key) {
        lo += step;
        step <<= 1;
    }
    int64_t hi = lo + step < end ? lo + step : end;
    lo += 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (docs[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Is galloping n candidates through df postings cheaper than adding every posting? `step` is what one
 * galloping step costs in streamed postings (about 8: unpredictable branches, scattered reads). */
static inline int gallop_pays(int64_t n, int64_t df, double step) {
    return step * n * (log2((double)df / (n + 1) + 1) + 2) < df;
}

/* Documents whose partial score is at least floor (> 0) into s->cand: ascending when dense, else in
 * first-touch order. Branchless: about half of the tests pass, which no branch predictor guesses. */
static int64_t collect(const Index *ix, Scratch *s, const Query *q, float floor) {
    int64_t n = 0;
    int32_t *cand = s->cand;
    const float *acc = s->acc;
    if (floor <= 0) floor = FLT_TRUE_MIN; /* never untouched documents */
    if (q->dense) {
        for (int64_t d = 0; d < ix->n_docs; d++) {
            cand[n] = (int32_t)d;
            n += acc[d] >= floor;
        }
    } else {
        for (int64_t j = 0; j < q->n_touched; j++) {
            cand[n] = s->touched[j];
            n += acc[s->touched[j]] >= floor;
        }
    }
    return n;
}

/* One query: writes k (score, doc) pairs, padded with (-inf, -1). */
static void search_one(const Index *ix, Scratch *s, const int32_t *terms, const float *qw, int64_t m, int64_t k,
                       int64_t *order, double *bounds, float *out_scores, int64_t *out_docs) {
    double remaining = 0, processed = 0, theta = 0;
    /* A pruned document's final score exceeds (partial + remaining bounds) by at most (1 + 2^-24)^(m + 2). */
    const double slack = (m + 4) * (double)FLT_EPSILON;
    for (int64_t i = 0; i < m; i++) {
        bounds[i] = (double)qw[i] * ix->max_weights[terms[i]];
        remaining += bounds[i];
        order[i] = i;
    }
    for (int64_t i = 1; i < m; i++) { /* insertion sort by bound, largest first */
        int64_t t = order[i], j = i;
        while (j > 0 && bounds[order[j - 1]] < bounds[t]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = t;
    }
    Query q = {0, 0, 0};
    int64_t since_theta = 0;
    int pruning = 0;
    for (int64_t r = 0; r < m; r++) {
        int64_t i = order[r];
        int64_t lo = ix->indptr[terms[i]], hi = ix->indptr[terms[i] + 1];
        remaining -= bounds[i];
        processed += bounds[i];
        if (remaining < 0) remaining = 0;
        if (pruning && gallop_pays(q.n_cand, hi - lo, ix->gallop_step)) { /* update the candidates only */
            int64_t pos = lo;
            for (int64_t j = 0; j < q.n_cand && pos < hi; j++) {
                pos = gallop(ix->docs, pos, hi, s->cand[j]);
                if (pos < hi && ix->docs[pos] == s->cand[j]) s->acc[s->cand[j]] += qw[i] * ix->weights[pos];
            }
            since_theta += q.n_cand;
        } else { /* every posting: cheaper than a pass that checks each one for being a candidate */
            accumulate(ix, s, &q, lo, hi, qw[i]);
            since_theta += hi - lo;
        }
        if (pruning) {
            if (q.n_cand >= k && since_theta >= q.n_cand) { /* raise theta once it is paid for */
                double kth = kth_score(s, s->cand, q.n_cand, k, theta);
                if (kth > theta) theta = kth;
                since_theta = 0;
            }
            float floor = (float)(theta * (1 - slack) - remaining);
            int64_t kept = 0;
            for (int64_t j = 0; j < q.n_cand; j++) {
                int32_t d = s->cand[j];
                s->cand[kept] = d;
                kept += s->acc[d] >= floor;
            }
            q.n_cand = kept;
            continue;
        }
        int64_t n_pool = q.dense ? ix->n_docs : q.n_touched;
        if (q.n_touched < k || remaining >= processed) continue; /* theta <= best partial <= processed */
        if (since_theta < n_pool) continue; /* what follows scans the pool: only once paid for */
        since_theta = 0;
        if (remaining >= theta * (1 - slack)) {
            theta = kth_score(s, q.dense ? NULL : s->touched, n_pool, k, theta);
            if (remaining >= theta * (1 - slack)) continue;
        }
        /* Unseen documents can no longer reach theta. Restrict the rest to candidates if the longest
         * list left is worth galloping through: judged first on every 16th document of the pool. */
        float floor = (float)(theta * (1 - slack) - remaining);
        int64_t longest = 0;
        for (int64_t rest = r + 1; rest < m; rest++) {
            int64_t t = terms[order[rest]];
            if (ix->indptr[t + 1] - ix->indptr[t] > longest) longest = ix->indptr[t + 1] - ix->indptr[t];
        }
        int64_t sampled = 0;
        for (int64_t j = 0; j < n_pool; j += 16) sampled += s->acc[q.dense ? j : s->touched[j]] >= floor;
        if (!gallop_pays(sampled * 16, longest, ix->gallop_step)) continue;
        int64_t n_cand = collect(ix, s, &q, floor);
        if (!gallop_pays(n_cand, longest, ix->gallop_step)) continue;
        if (!q.dense) qsort(s->cand, n_cand, sizeof(int32_t), cmp_int32);
        q.n_cand = n_cand;
        pruning = 1;
    }

    /* theta is at most the k-th best final score, so the top k all reach it (float rounding aside). */
    float least = (float)(theta * (1 - slack));
    int64_t n_hits = pruning ? best_k(s->acc, s->cand, q.n_cand, k, least, s->heap)
                             : best_k(s->acc, q.dense ? NULL : s->touched, q.dense ? ix->n_docs : q.n_touched, k,
                                      least, s->heap);
    qsort(s->heap, n_hits, sizeof(Hit), cmp_hit);
    for (int64_t j = 0; j < k; j++) {
        out_scores[j] = j < n_hits ? s->heap[j].score : -INFINITY;
        out_docs[j] = j < n_hits ? s->heap[j].doc : -1;
    }
    if (q.dense) {
        memset(s->acc, 0, ix->n_docs * sizeof(float));
    } else {
        for (int64_t j = 0; j < q.n_touched; j++) s->acc[s->touched[j]] = 0;
    }
}

/* A C-contiguous buffer of `count` items of `itemsize` bytes with the given kind ('f' float, 'i' int). */
static int get_array(PyObject *obj, Py_buffer *view, char kind, Py_ssize_t itemsize, int writable,
                     const char *name) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, view, flags) < 0) return -1;
    char code = view->format ? view->format[strlen(view->format) - 1] : 'B';
    int is_float = code == 'f' || code == 'd';
    int is_int = strchr("bhilqBHILQ", code) != NULL;
    if (view->itemsize != itemsize || (kind == 'f' ? !is_float : !is_int)) {
        PyErr_Format(PyExc_TypeError, "%s: expected %s%zd items, got format '%s' of %zd bytes", name,
                     kind == 'f' ? "float" : "int", itemsize * 8, view->format ? view->format : "B",
                     view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *search(PyObject *self, PyObject *args) {
    PyObject *objs[10];
    Py_ssize_t n_docs, k, first, last;
    double gallop_step;
    if (!PyArg_ParseTuple(args, "OOOOOOOnnnnOOd", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5],
                          &objs[6], &n_docs, &k, &first, &last, &objs[7], &objs[8], &gallop_step))
        return NULL;
    static const char *names[] = {"postings_indptr", "postings_docs", "postings_weights", "max_weights",
                                  "query_indptr",    "query_terms",   "query_weights",    "out_scores",
                                  "out_docs"};
    static const char kinds[] = {'i', 'i', 'f', 'f', 'i', 'i', 'f', 'f', 'i'};
    static const Py_ssize_t sizes[] = {8, 4, 4, 4, 8, 4, 4, 4, 8};
    Py_buffer v[9];
    int got = 0;
    for (; got < 9; got++)
        if (get_array(objs[got], &v[got], kinds[got], sizes[got], got >= 7, names[got]) < 0) goto fail;

    Index ix = {v[0].buf, v[1].buf, v[2].buf, v[3].buf, n_docs, gallop_step};
    const int64_t *q_indptr = v[4].buf;
    int64_t n_queries = v[4].len / 8 - 1;
    int64_t n_terms = v[0].len / 8 - 1, nnz = v[1].len / 4;
    const int32_t *q_terms = v[5].buf;
    /* The postings themselves are trusted (SparseIndex builds them); their extents and the queries are checked. */
    int ok = k >= 1 && n_docs >= 0 && n_terms >= 0 && first >= 0 && first <= last && last <= n_queries &&
             v[2].len / 4 == nnz && v[3].len / 4 == n_terms && ix.indptr[0] == 0 && ix.indptr[n_terms] == nnz &&
             v[6].len == v[5].len && q_indptr[n_queries] == v[5].len / 4 && v[7].len / 4 >= n_queries * k &&
             v[8].len / 8 >= n_queries * k;
    int64_t max_terms = 0;
    for (int64_t q = first; ok && q < last; q++) {
        ok = q_indptr[q] >= 0 && q_indptr[q] <= q_indptr[q + 1];
        if (q_indptr[q + 1] - q_indptr[q] > max_terms) max_terms = q_indptr[q + 1] - q_indptr[q];
        for (int64_t j = q_indptr[q]; ok && j < q_indptr[q + 1]; j++) ok = q_terms[j] >= 0 && q_terms[j] < n_terms;
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "search: inconsistent index or query arrays");
        goto fail;
    }
    /* touched gets one slot more than documents: the branchless append writes one past the last entry. */
    Scratch s = {calloc(n_docs + 1, sizeof(float)), malloc((n_docs + 1) * sizeof(int32_t)),
                 malloc((n_docs + 1) * sizeof(int32_t)), malloc((k + 1) * sizeof(Hit))};
    int64_t *order = malloc((max_terms + 1) * sizeof(int64_t));
    double *bounds = malloc((max_terms + 1) * sizeof(double));
    if (!s.acc || !s.touched || !s.cand || !s.heap || !order || !bounds) {
        PyErr_NoMemory();
    } else {
        Py_BEGIN_ALLOW_THREADS
        for (int64_t q = first; q < last; q++) {
            int64_t lo = q_indptr[q];
            search_one(&ix, &s, (const int32_t *)v[5].buf + lo, (const float *)v[6].buf + lo, q_indptr[q + 1] - lo, k,
                       order, bounds, (float *)v[7].buf + q * k, (int64_t *)v[8].buf + q * k);
        }
        Py_END_ALLOW_THREADS
    }
    free(s.acc), free(s.touched), free(s.cand), free(s.heap), free(order), free(bounds);
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
fail:
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    return NULL;
}

/* out[i] += weight * (posting weight of targets[i]) for each target among postings [p0, p1) (targets ascending):
 * the shorter list is galloped through the longer, from where the last match left off. The product is rounded
 * to float32, then added in float32. */
static void add_term_at(const int32_t *p_docs, const float *p_weights, int64_t p0, int64_t p1, float weight,
                        const int32_t *targets, int64_t n, float *out) {
    if (p1 - p0 < n) {
        int64_t at = 0;
        for (int64_t p = p0; p < p1 && at < n; p++) {
            at = gallop(targets, at, n, p_docs[p]);
            if (at < n && targets[at] == p_docs[p]) {
                float product = weight * p_weights[p];
                out[at] += product;
            }
        }
    } else {
        int64_t at = p0;
        for (int64_t i = 0; i < n && at < p1; i++) {
            at = gallop(p_docs, at, p1, targets[i]);
            if (at < p1 && p_docs[at] == targets[i]) {
                float product = weight * p_weights[at];
                out[i] += product;
            }
        }
    }
}

/* Galloping cost of one term for one query's n targets among df postings, in postings read in sequence: `step`
 * per galloping step. */
static inline double gallop_cost(int64_t n, int64_t df, double step) {
    int64_t few = n < df ? n : df, many = n < df ? df : n;
    return step * few * (log2((double)many / (few + 1) + 1) + 2);
}

/* The wanted columns of all queries by document: slots[by_doc[d]..by_doc[d+1]) are the positions i with
 * wanted[i] == d (queries ascending), owner[k] the query of slots[k]. */
typedef struct {
    int64_t *by_doc, *slots;
    int32_t *owner;
    int64_t n_docs; /* largest wanted document + 1 */
} Wanted;

static int wanted_by_doc(Wanted *w, const int32_t *wanted, const int64_t *w_indptr, int64_t n_queries) {
    int64_t n = w_indptr[n_queries];
    w->n_docs = 0;
    for (int64_t i = 0; i < n; i++)
        if (wanted[i] + (int64_t)1 > w->n_docs) w->n_docs = wanted[i] + (int64_t)1;
    w->by_doc = calloc(w->n_docs + 1, sizeof(int64_t));
    w->slots = malloc((n + 1) * sizeof(int64_t));
    w->owner = malloc((n + 1) * sizeof(int32_t));
    if (!w->by_doc || !w->slots || !w->owner) return -1;
    for (int64_t i = 0; i < n; i++) w->by_doc[wanted[i] + 1]++;
    for (int64_t d = 0; d < w->n_docs; d++) w->by_doc[d + 1] += w->by_doc[d];
    for (int64_t q = 0; q < n_queries; q++) /* by_doc[d] advances as d's slots fill; shifted back below */
        for (int64_t i = w_indptr[q]; i < w_indptr[q + 1]; i++) {
            int64_t k = w->by_doc[wanted[i]]++;
            w->slots[k] = i;
            w->owner[k] = (int32_t)q;
        }
    for (int64_t d = w->n_docs; d > 0; d--) w->by_doc[d] = w->by_doc[d - 1];
    w->by_doc[0] = 0;
    return 0;
}

/* score_columns: for each query, its float32 scores at its wanted columns (ascending and distinct within the
 * query), adding its terms in their CSR order, each product weight * posting weight rounded to float32 and then
 * added in float32: what `SparseIndex.scores_of` computed with numpy, one query term at a time.
 *
 * When every query's terms ascend (as scipy orders them), terms are taken in ascending order for all queries at
 * once, which keeps each score's order of additions. A term's postings are then either read once for all the
 * queries that hold it, each posting's document looked up among the wanted columns of all queries (a frequent
 * term, wanted by many queries), or galloped through per query (add_term_at), whichever reads less. */
static PyObject *score_columns(PyObject *self, PyObject *args) {
    PyObject *objs[9];
    double step;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOd", &objs[0], &objs[1], &objs[2], &objs[3], &objs[4], &objs[5], &objs[6],
                          &objs[7], &objs[8], &step))
        return NULL;
    static const char *names[] = {"postings_indptr", "postings_docs", "postings_weights", "query_indptr",
                                  "query_terms",     "query_weights", "wanted",           "wanted_indptr",
                                  "out"};
    static const char kinds[] = {'i', 'i', 'f', 'i', 'i', 'f', 'i', 'i', 'f'};
    static const Py_ssize_t sizes[] = {8, 4, 4, 8, 4, 4, 4, 8, 4};
    Py_buffer v[9];
    int got = 0;
    for (; got < 9; got++)
        if (get_array(objs[got], &v[got], kinds[got], sizes[got], got == 8, names[got]) < 0) goto fail;
    const int64_t *p_indptr = v[0].buf, *q_indptr = v[3].buf, *w_indptr = v[7].buf;
    const int32_t *p_docs = v[1].buf, *q_terms = v[4].buf, *wanted = v[6].buf;
    const float *p_weights = v[2].buf, *q_weights = v[5].buf;
    float *out = v[8].buf;
    int64_t n_terms = v[0].len / 8 - 1, nnz = v[1].len / 4, n_queries = v[3].len / 8 - 1;
    int64_t n_wanted = v[6].len / 4;
    int ok = n_terms >= 0 && n_queries >= 0 && n_queries < INT32_MAX && v[7].len / 8 == n_queries + 1 &&
             v[2].len / 4 == nnz && p_indptr[0] == 0 && p_indptr[n_terms] == nnz && v[5].len == v[4].len &&
             q_indptr[0] == 0 && q_indptr[n_queries] == v[4].len / 4 && w_indptr[0] == 0 &&
             w_indptr[n_queries] == n_wanted && v[8].len / 4 == n_wanted;
    int ascending = 1;
    for (int64_t q = 0; ok && q < n_queries; q++) {
        ok = q_indptr[q] <= q_indptr[q + 1] && w_indptr[q] <= w_indptr[q + 1];
        for (int64_t j = q_indptr[q]; ok && j < q_indptr[q + 1]; j++) {
            ok = q_terms[j] >= 0 && q_terms[j] < n_terms;
            if (j > q_indptr[q] && q_terms[j - 1] >= q_terms[j]) ascending = 0;
        }
        for (int64_t i = w_indptr[q]; ok && i < w_indptr[q + 1]; i++)
            ok = wanted[i] >= 0 && (i == w_indptr[q] || wanted[i - 1] < wanted[i]);
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "score_columns: inconsistent index, query or column arrays");
        goto fail;
    }
    int64_t n_entries = q_indptr[n_queries];
    Wanted w = {NULL, NULL, NULL, 0};
    int64_t *term_at = ascending ? calloc(n_terms + 1, sizeof(int64_t)) : NULL;
    int64_t *entries = ascending ? malloc((n_entries + 1) * sizeof(int64_t)) : NULL; /* query-term entries by term */
    int32_t *entry_query = ascending ? malloc((n_entries + 1) * sizeof(int32_t)) : NULL;
    float *weight_of = ascending ? calloc(n_queries + 1, sizeof(float)) : NULL;
    int64_t *holds = ascending ? malloc((n_queries + 1) * sizeof(int64_t)) : NULL; /* the term query q holds now */
    if (ascending && (!term_at || !entries || !entry_query || !weight_of || !holds ||
                      wanted_by_doc(&w, wanted, w_indptr, n_queries) < 0)) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n_wanted; i++) out[i] = 0.0f;
    if (!ascending) { /* query after query, its terms in CSR order */
        for (int64_t q = 0; q < n_queries; q++)
            for (int64_t j = q_indptr[q]; j < q_indptr[q + 1]; j++)
                add_term_at(p_docs, p_weights, p_indptr[q_terms[j]], p_indptr[q_terms[j] + 1], q_weights[j],
                            wanted + w_indptr[q], w_indptr[q + 1] - w_indptr[q], out + w_indptr[q]);
    } else {
        for (int64_t j = 0; j < n_entries; j++) term_at[q_terms[j] + 1]++;
        for (int64_t t = 0; t < n_terms; t++) term_at[t + 1] += term_at[t];
        for (int64_t q = 0; q < n_queries; q++)
            for (int64_t j = q_indptr[q]; j < q_indptr[q + 1]; j++) {
                int64_t k = term_at[q_terms[j]]++;
                entries[k] = j;
                entry_query[k] = (int32_t)q;
            }
        for (int64_t t = n_terms; t > 0; t--) term_at[t] = term_at[t - 1];
        term_at[0] = 0;
        for (int64_t q = 0; q < n_queries; q++) holds[q] = -1;
        /* a posting read once for all queries costs one posting read in sequence, plus its wanted slots (1.5 each:
         * a slot is a query and a score to look up; measured against galloping at 100k documents) */
        double slots_per_doc = w.n_docs ? 1.5 * n_wanted / w.n_docs : 0;
        for (int64_t t = 0; t < n_terms; t++) {
            int64_t e0 = term_at[t], e1 = term_at[t + 1], p0 = p_indptr[t], p1 = p_indptr[t + 1];
            if (e0 == e1 || p0 == p1) continue;
            double galloping = 0;
            for (int64_t e = e0; e < e1; e++) {
                int64_t q = entry_query[e];
                galloping += gallop_cost(w_indptr[q + 1] - w_indptr[q], p1 - p0, step);
            }
            if ((p1 - p0) * (1 + slots_per_doc) < galloping) {
                for (int64_t e = e0; e < e1; e++) {
                    holds[entry_query[e]] = t;
                    weight_of[entry_query[e]] = q_weights[entries[e]];
                }
                for (int64_t p = p0; p < p1 && p_docs[p] < w.n_docs; p++) {
                    int64_t d = p_docs[p];
                    for (int64_t k = w.by_doc[d]; k < w.by_doc[d + 1]; k++) {
                        int32_t q = w.owner[k];
                        if (holds[q] == t) {
                            float product = weight_of[q] * p_weights[p];
                            out[w.slots[k]] += product;
                        }
                    }
                }
            } else {
                for (int64_t e = e0; e < e1; e++) {
                    int64_t q = entry_query[e];
                    add_term_at(p_docs, p_weights, p0, p1, q_weights[entries[e]], wanted + w_indptr[q],
                                w_indptr[q + 1] - w_indptr[q], out + w_indptr[q]);
                }
            }
        }
    }
    Py_END_ALLOW_THREADS
done:
    free(w.by_doc), free(w.slots), free(w.owner), free(term_at), free(entries), free(entry_query), free(weight_of),
        free(holds);
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
fail:
    for (int i = 0; i < got; i++) PyBuffer_Release(&v[i]);
    return NULL;
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS,
     "search(postings_indptr, postings_docs, postings_weights, max_weights, query_indptr, query_terms, "
     "query_weights, n_docs, k, first, last, out_scores, out_docs, gallop_step): top k of queries "
     "first..last-1 into the (queries x k) outputs"},
    {"score_columns", score_columns, METH_VARARGS,
     "score_columns(postings_indptr, postings_docs, postings_weights, query_indptr, query_terms, query_weights, "
     "wanted, wanted_indptr, out, gallop_step): each query's float32 scores at its wanted columns (ascending in each "
     "query)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_sparse", "Exact top-k search over an inverted index.",
                                    -1, methods};

PyMODINIT_FUNC PyInit__sparse(void) { return PyModule_Create(&module); }

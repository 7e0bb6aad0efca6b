/*
 * _flexmbs_kernel: the index-3 generalized-alpha step of a flexmbs System in compiled code.
 *
 * The same equations and the same algorithm as the numpy path (flexmbs/bodies/rigid.py,
 * flexmbs/bodies/flexible.py, flexmbs/bodies/axial_strain.py, flexmbs/constraints/batch.py,
 * flexmbs/constraints/mean_axis.py,
 * flexmbs/integrators/index3_alpha.py; their docstrings hold the derivations), written out as
 * loops over the few dozen numbers of a small multibody system, so that a step costs what
 * the arithmetic costs instead of a few hundred Python and numpy calls.  flexmbs/compiled.py
 * packs a System into the arrays read here and says which systems qualify (docs/design.md,
 * "The compiled step").
 *
 * Layout: every matrix is row-major; q, v have n entries; the constraint rows are m; the
 * iteration matrix is N x N with N = n + m.  Marker coordinates index the extended vector
 * qe = (q, 0, 0, 0, 1, 0, 0, 0, 0) (the ground's frame and a zero, as JointBatch.extend).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int64_t i64;

#define EPS 2.220446049250313e-16
#define STALL 1e-12
#define ROUND_OFF (64.0 * EPS)
#define TAIL 8

/* ------------------------------------------------------------------------------------------ */
/* the packed system                                                                          */

typedef struct {
    int off, ne, nel, k, damped, axial;
    int nkg;                           /* "omega" stiffening: number of unit geometric stiffnesses (0: none) */
    int nB, Brow;                      /* mean-axis conditions: rows of B and the first row of C (nB = 0: none) */
    double mass, s[3], J[9], EA;
    const double *mO, *d, *S, *Mdd, *Kdd, *Cdd, *L, *a, *G;
    const i64 *idx, *Sp, *Sj;          /* S[a, b] stacked (9 ne, ne) in CSR: row pointers Sp, columns Sj, values S */
    const i64 *kg_key;                 /* (nkg): 3 a + b for A_f[a, b], 9 + c for alpha[c] */
    const i64 *Kp, *Kj;                /* the K_g,i stacked (nkg ne, ne) in CSR */
    const double *Kv;
    const double *B;                   /* (nB, ne) */
} Flex;

typedef struct {                       /* planar rigid bodies and their joints (section "planar systems") */
    int nb, nrev, npri, ncd;           /* RigidBody2D bodies, PlanarRevolute, PlanarPrismatic, CoordinateDriver */
    const i64 *off;                    /* (nb): first coordinate of each body */
    const double *mI;                  /* (nb, 2): mass, I_G */
    const i64 *rev;                    /* (nrev, 3): first row, first coordinate of body i, of body j (-1: ground) */
    const double *rev_s;               /* (nrev, 4): s_i, s_j (body coordinates; global for the ground) */
    const i64 *pri;                    /* (npri, 3): as rev */
    const double *pri_v;               /* (npri, 10): s_i, s_j, a_i, a_j, n_i */
    const i64 *cd;                     /* (ncd, 2): row, coordinate */
} Planar;

typedef struct {
    int n, m, nr, nf, nnorm, nmark, W, E, npt, nd1, nd2, nds, nang;
    int nl, nvec, tw;                   /* loads of rigid bodies, their tabulated vectors, width of a time row */
    const i64 *ld_i;                    /* (nl, 4): kind (LOAD_TORQUE ... LOAD_SPRING_2D), first coordinate, local, vector */
    const double *ld_r;                 /* (nl, 9): point s, anchor, stiffness, rest length, damping */
    double g[3];
    int has_g;
    const i64 *r_off;
    const double *r_real;               /* (nr, 13): mass, J (9), c (3) */
    const i64 *norm;                    /* (nnorm, 2): row, first coordinate of the body */
    const i64 *mR, *mp, *me, *mcols, *mpoint;
    const double *my0, *mPhi;
    const i64 *pt, *d1, *d2, *ds, *ang;
    const double *dsL;
    Flex *flex;
    int nblk, *blk;                     /* the bodies' diagonal blocks of M: first coordinate, size */
    Py_buffer *bufs;
    int nbuf;
    /* scratch */
    double *qe, *mr, *mJ, *fw;
    int *lo, *hi;                       /* the nonzero column range of each row of C_q (constraints) */
    size_t fw_size;
    Planar pl;
    int nlaw;                           /* laws in the table: the angle drivers', then the coordinate drivers' */
    const double *held;                 /* during a controlled `steps` call: (nvec, 3) held load vectors, read */
    const i64 *held_mask;               /* instead of the time row's where held_mask[k] (else NULL) */
} Sys;

static const char *CAPSULE = "flexmbs.kernel.system";

static void sys_free(Sys *s)
{
    if (!s) return;
    for (int i = 0; i < s->nbuf; i++) PyBuffer_Release(&s->bufs[i]);
    free(s->bufs);
    free(s->flex);
    free(s->blk);
    free(s->lo);
    free(s->hi);
    free(s->qe);
    free(s->mr);
    free(s->mJ);
    free(s->fw);
    free(s);
}

static void capsule_destructor(PyObject *cap)
{
    sys_free((Sys *)PyCapsule_GetPointer(cap, CAPSULE));
}

/* the item type a buffer's format names: 'f' float64, 'i' int64, 'j' int32, 0 anything else (a
   byte-order prefix of native order is allowed) */
static char item_kind(const Py_buffer *b)
{
    const char *f = b->format ? b->format : "B";
    if (*f == '@' || *f == '=' || *f == '<') f++;     /* little-endian machines: '<' is native order */
    if (f[0] == 0 || f[1] != 0) return 0;
    switch (f[0]) {
    case 'd': return b->itemsize == 8 ? 'f' : 0;
    case 'q': case 'l': return b->itemsize == 8 ? 'i' : (b->itemsize == 4 ? 'j' : 0);
    case 'i': return b->itemsize == 4 ? 'j' : 0;
    default: return 0;
    }
}

static const char *kind_name(char kind)
{
    return kind == 'f' ? "float64" : kind == 'i' ? "int64" : "int32";
}

/* the buffer of obj, C-contiguous (writable if asked), of item type `kind` ('f', 'i', 'j') and at
   least `count` items; TypeError or ValueError naming the array `what` (prefix: the entry point) */
static int get_array(PyObject *obj, Py_buffer *b, int writable, char kind, Py_ssize_t count, const char *where,
                     const char *what)
{
    if (PyObject_GetBuffer(obj, b, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: %s must be a C-contiguous%s %s array, got %s", where, what,
                     writable ? ", writable" : "", kind_name(kind), Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (item_kind(b) != kind) {
        PyErr_Format(PyExc_TypeError, "%s: %s must be a %s array, got items of format '%s' (%zd bytes)", where,
                     what, kind_name(kind), b->format ? b->format : "B", b->itemsize);
        PyBuffer_Release(b);
        return -1;
    }
    if (b->len < count * b->itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: %s must hold at least %zd items, got %zd", where, what, count,
                     b->len / b->itemsize);
        PyBuffer_Release(b);
        return -1;
    }
    return 0;
}

/* item i of the list as a C-contiguous buffer of at least `count` items of type `kind` */
static const void *take(Sys *s, PyObject *list, Py_ssize_t i, Py_ssize_t count, char kind, const char *what)
{
    if (i >= PyList_GET_SIZE(list)) {
        PyErr_Format(PyExc_ValueError, "kernel system: missing array %s", what);
        return NULL;
    }
    if (count < 0) {
        PyErr_Format(PyExc_ValueError, "kernel system: array %s: a negative count (%zd) in the header or a row "
                     "pointer", what, count);
        return NULL;
    }
    Py_buffer *b = &s->bufs[s->nbuf];
    if (get_array(PyList_GET_ITEM(list, i), b, 0, kind, count, "kernel system", what) < 0) return NULL;
    s->nbuf++;
    return b->buf;
}

/* ValueError unless lo <= x[k * stride + c] < hi for k < count, c < width: "kernel system: <what> ..." */
static int in_range(const i64 *x, Py_ssize_t count, int width, int stride, i64 lo, i64 hi, const char *what)
{
    for (Py_ssize_t k = 0; k < count; k++)
        for (int c = 0; c < width; c++) {
            i64 v = x[k * stride + c];
            if (v < lo || v >= hi) {
                PyErr_Format(PyExc_ValueError, "kernel system: %s: entry (%zd, %d) is %lld, outside [%lld, %lld)",
                             what, k, c, (long long)v, (long long)lo, (long long)hi);
                return -1;
            }
        }
    return 0;
}

/* ValueError unless p (count + 1 row pointers of a CSR matrix with nnz entries) starts at 0, does not
   decrease and ends at nnz, and its column indices j lie in [0, ncol) */
static int csr_valid(const i64 *p, const i64 *j, Py_ssize_t count, i64 ncol, const char *what)
{
    if (p[0] != 0) { PyErr_Format(PyExc_ValueError, "kernel system: %s row pointers must start at 0", what); return -1; }
    for (Py_ssize_t k = 0; k < count; k++)
        if (p[k + 1] < p[k]) {
            PyErr_Format(PyExc_ValueError, "kernel system: %s row pointers decrease at row %zd", what, k);
            return -1;
        }
    return in_range(j, p[count], 1, 1, 0, ncol, what);
}

/* ------------------------------------------------------------------------------------------ */
/* Euler parameters (flexmbs/rotations.py)                                                     */

static void ep_E(const double *p, double *E)      /* E = [-e, skew(e) + e0 I] (3 x 4) */
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    E[0] = -e1; E[1] = e0;  E[2] = -e3; E[3] = e2;
    E[4] = -e2; E[5] = e3;  E[6] = e0;  E[7] = -e1;
    E[8] = -e3; E[9] = -e2; E[10] = e1; E[11] = e0;
}

static void ep_G(const double *p, double *G)      /* G = [-e, -skew(e) + e0 I] (3 x 4) */
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    G[0] = -e1; G[1] = e0;  G[2] = e3;  G[3] = -e2;
    G[4] = -e2; G[5] = -e3; G[6] = e0;  G[7] = e1;
    G[8] = -e3; G[9] = e2;  G[10] = -e1; G[11] = e0;
}

static void ep_A(const double *p, double *A)      /* A(p), the explicit quadratic form */
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    double d = e0 * e0 - e1 * e1 - e2 * e2 - e3 * e3;
    A[0] = d + 2.0 * e1 * e1; A[1] = 2.0 * (e1 * e2 - e0 * e3); A[2] = 2.0 * (e1 * e3 + e0 * e2);
    A[3] = 2.0 * (e1 * e2 + e0 * e3); A[4] = d + 2.0 * e2 * e2; A[5] = 2.0 * (e2 * e3 - e0 * e1);
    A[6] = 2.0 * (e1 * e3 - e0 * e2); A[7] = 2.0 * (e2 * e3 + e0 * e1); A[8] = d + 2.0 * e3 * e3;
}

static void ep_A_EG(const double *p, double *A)   /* A = E G^T (as for stacked p) */
{
    double E[12], G[12];
    ep_E(p, E);
    ep_G(p, G);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double acc = 0.0;
            for (int k = 0; k < 4; k++) acc += E[4 * a + k] * G[4 * b + k];
            A[3 * a + b] = acc;
        }
}

/* d(A(p) u)/dp (3 x 4), linear in p */
static void ep_VJ(const double *p, const double *u, double *J)
{
    double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3], u1 = u[0], u2 = u[1], u3 = u[2];
    double d = e1 * u1 + e2 * u2 + e3 * u3;
    J[0] = 2.0 * (e0 * u1 + e2 * u3 - e3 * u2); J[1] = 2.0 * d;
    J[2] = 2.0 * (e1 * u2 - u1 * e2 + e0 * u3); J[3] = 2.0 * (e1 * u3 - u1 * e3 - e0 * u2);
    J[4] = 2.0 * (e0 * u2 + e3 * u1 - e1 * u3); J[5] = 2.0 * (e2 * u1 - u2 * e1 - e0 * u3);
    J[6] = 2.0 * d; J[7] = 2.0 * (e2 * u3 - u2 * e3 + e0 * u1);
    J[8] = 2.0 * (e0 * u3 + e1 * u2 - e2 * u1); J[9] = 2.0 * (e3 * u1 - u3 * e1 + e0 * u2);
    J[10] = 2.0 * (e3 * u2 - u3 * e2 - e0 * u1); J[11] = 2.0 * d;
}

/* V_k = dA/dp_k (4 x 3 x 3): V_0 = 2 (e0 I + skew(e)), V_i = 2 (-e_i I + u_i e^T + e u_i^T + e0 skew(u_i)) */
static void ep_V(const double *p, double *V)
{
    double e0 = p[0], e[3] = {p[1], p[2], p[3]};
    memset(V, 0, 36 * sizeof(double));
    double *V0 = V;
    V0[0] = V0[4] = V0[8] = 2.0 * e0;
    V0[1] = -2.0 * e[2]; V0[2] = 2.0 * e[1];
    V0[3] = 2.0 * e[2];  V0[5] = -2.0 * e[0];
    V0[6] = -2.0 * e[1]; V0[7] = 2.0 * e[0];
    for (int i = 0; i < 3; i++) {
        double *Vi = V + 9 * (i + 1);
        for (int a = 0; a < 3; a++) {
            Vi[4 * a] += -2.0 * e[i];
            Vi[3 * i + a] += 2.0 * e[a];          /* u_i e^T: row i */
            Vi[3 * a + i] += 2.0 * e[a];          /* e u_i^T: column i */
        }
        /* e0 skew(u_i) */
        int j = (i + 1) % 3, k = (i + 2) % 3;
        Vi[3 * k + j] += 2.0 * e0;
        Vi[3 * j + k] -= 2.0 * e0;
    }
}

static void skew(const double *c, double *U)
{
    U[0] = 0.0;   U[1] = -c[2]; U[2] = c[1];
    U[3] = c[2];  U[4] = 0.0;   U[5] = -c[0];
    U[6] = -c[1]; U[7] = c[0];  U[8] = 0.0;
}

static void mat3(const double *A, const double *B, double *C)   /* C = A B (3 x 3) */
{
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            C[3 * a + b] = A[3 * a] * B[b] + A[3 * a + 1] * B[3 + b] + A[3 * a + 2] * B[6 + b];
}

static void mat3T(const double *A, const double *B, double *C)  /* C = A^T B (3 x 3) */
{
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            C[3 * a + b] = A[a] * B[b] + A[3 + a] * B[3 + b] + A[6 + a] * B[6 + b];
}

static void mv3(const double *A, const double *x, double *y)   /* y = A x */
{
    for (int a = 0; a < 3; a++) y[a] = A[3 * a] * x[0] + A[3 * a + 1] * x[1] + A[3 * a + 2] * x[2];
}

static void mtv3(const double *A, const double *x, double *y)  /* y = A^T x */
{
    for (int a = 0; a < 3; a++) y[a] = A[a] * x[0] + A[3 + a] * x[1] + A[6 + a] * x[2];
}

static void mv34(const double *B, const double *x, double *y)  /* y = B x, B 3 x 4 (E, G, d(A u)/dp) */
{
    for (int a = 0; a < 3; a++) y[a] = B[4 * a] * x[0] + B[4 * a + 1] * x[1] + B[4 * a + 2] * x[2] + B[4 * a + 3] * x[3];
}

static void mtv34(const double *B, const double *x, double *y) /* y = B^T x, B 3 x 4 */
{
    for (int k = 0; k < 4; k++) y[k] = B[k] * x[0] + B[4 + k] * x[1] + B[8 + k] * x[2];
}

/* ------------------------------------------------------------------------------------------ */
/* rigid bodies in Euler parameters (EPBatch)                                                  */

/* quadratic-velocity vector Q_v (7) of rigid body b at p and v (R', p') */
static void rigid_qv(const double *re, const double *p, const double *vb, double *out)
{
    double m = re[0];
    const double *J = re + 1, *c = re + 10;
    const double *Rd = vb, *pd = vb + 3;
    double G[12], Gd[12], w[3], Jw[3], y[4];
    ep_G(p, G);
    ep_G(pd, Gd);
    mv34(G, pd, w);
    for (int a = 0; a < 3; a++) w[a] *= 2.0;                /* body angular velocity 2 G p' */
    mv3(J, w, Jw);
    int offset = c[0] != 0.0 || c[1] != 0.0 || c[2] != 0.0;
    out[0] = out[1] = out[2] = 0.0;
    if (!offset) {
        mtv34(Gd, Jw, y);
        for (int k = 0; k < 4; k++) out[3 + k] = -4.0 * y[k];
        return;
    }
    double E[12], Ed[12], A[9], Ad[9], U[9], x[3], h[3], tmp[3], tmp2[3], VJ[12];
    ep_E(p, E);
    ep_E(pd, Ed);
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            double s1 = 0.0, s2 = 0.0;
            for (int k = 0; k < 4; k++) {
                s1 += E[4 * a + k] * G[4 * b + k];
                s2 += Ed[4 * a + k] * G[4 * b + k] + E[4 * a + k] * Gd[4 * b + k];
            }
            A[3 * a + b] = s1;
            Ad[3 * a + b] = s2;
        }
    skew(c, U);
    mv3(U, w, x);
    mtv3(A, Rd, tmp);
    mv3(U, tmp, h);
    for (int a = 0; a < 3; a++) h[a] = m * h[a] + Jw[a];
    mv3(Ad, x, tmp);
    for (int a = 0; a < 3; a++) out[a] = m * tmp[a];
    mtv3(Ad, Rd, tmp);
    mv3(U, tmp, tmp2);                           /* U Ad^T R' */
    ep_VJ(p, x, VJ);
    double t1[4], t2[4], t3[4];
    mtv34(Gd, h, t1);
    mtv34(G, tmp2, t2);
    mtv34(VJ, Rd, t3);
    for (int k = 0; k < 4; k++) out[3 + k] = -4.0 * t1[k] - 2.0 * m * t2[k] - m * t3[k];
}

static void rigid_eval(const Sys *s, int b, const double *q, const double *v, double *M, double *Q)
{
    const double *re = s->r_real + 13 * b;
    int o = (int)s->r_off[b], n = s->n;
    const double *p = q + o + 3;
    double m = re[0];
    const double *J = re + 1, *c = re + 10;
    if (M) {
        double G[12], JG[12];
        ep_G(p, G);
        for (int a = 0; a < 3; a++) M[(o + a) * n + o + a] = m;
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 4; k++)
                JG[4 * a + k] = J[3 * a] * G[k] + J[3 * a + 1] * G[4 + k] + J[3 * a + 2] * G[8 + k];
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 4; l++)
                M[(o + 3 + k) * n + o + 3 + l] = 4.0 * (G[k] * JG[l] + G[4 + k] * JG[4 + l] + G[8 + k] * JG[8 + l]);
        if (c[0] != 0.0 || c[1] != 0.0 || c[2] != 0.0) {
            double A[9], U[9], AU[9];
            ep_A_EG(p, A);
            skew(c, U);
            mat3(A, U, AU);
            for (int a = 0; a < 3; a++)
                for (int k = 0; k < 4; k++) {
                    double B = -2.0 * m * (AU[3 * a] * G[k] + AU[3 * a + 1] * G[4 + k] + AU[3 * a + 2] * G[8 + k]);
                    M[(o + a) * n + o + 3 + k] = B;
                    M[(o + 3 + k) * n + o + a] = B;
                }
        }
    }
    if (Q) {
        rigid_qv(re, p, v + o, Q + o);
        if (s->has_g) {
            double VJ[12], y[4], mg[3] = {m * s->g[0], m * s->g[1], m * s->g[2]};
            ep_VJ(p, c, VJ);
            mtv34(VJ, mg, y);
            for (int a = 0; a < 3; a++) Q[o + a] += mg[a];
            for (int k = 0; k < 4; k++) Q[o + 3 + k] += y[k];
        }
    }
}

/* dQ_v/dv (7 x 7) of rigid body b: column j = (Q_v(v + e_j) - Q_v(v - e_j)) / 2, exact (quadratic form) */
static void rigid_dqv(const Sys *s, int b, const double *q, const double *v, double *D)
{
    const double *re = s->r_real + 13 * b;
    int o = (int)s->r_off[b], n = s->n;
    double vp[7], vm[7], qp[7], qm[7];
    for (int j = 0; j < 7; j++) {
        memcpy(vp, v + o, 7 * sizeof(double));
        memcpy(vm, v + o, 7 * sizeof(double));
        vp[j] += 1.0;
        vm[j] -= 1.0;
        rigid_qv(re, q + o + 3, vp, qp);
        rigid_qv(re, q + o + 3, vm, qm);
        for (int i = 0; i < 7; i++) D[(o + i) * n + o + j] = 0.5 * (qp[i] - qm[i]);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* flexible bodies on a floating frame (FlexibleBody)                                          */

static void csr_mv(const Flex *f, const double *x, double *y)   /* y = S x, S stacked (9 ne, ne) */
{
    for (int r = 0; r < 9 * f->ne; r++) {
        double acc = 0.0;
        for (i64 z = f->Sp[r]; z < f->Sp[r + 1]; z++) acc += f->S[z] * x[f->Sj[z]];
        y[r] = acc;
    }
}

typedef struct {              /* terms at q shared by M, Q_v, dQ_v/dv */
    double A[9], V[36], sy[3], Y[9];
    double *dd;               /* (9, ne): d + S delta */
} FlexKin;

static void flex_kin(const Flex *f, const double *q, double *work, FlexKin *k)
{
    int ne = f->ne;
    const double *p = q + f->off + 3, *del = q + f->off + 7;
    double *SD = work;                               /* 9 ne */
    k->dd = work + 9 * ne;                           /* 9 ne */
    ep_A(p, k->A);
    ep_V(p, k->V);
    csr_mv(f, del, SD);
    for (int x = 0; x < 9; x++) {
        double Dd = 0.0, SDd = 0.0;
        for (int j = 0; j < ne; j++) {
            k->dd[x * ne + j] = f->d[x * ne + j] + SD[x * ne + j];
            Dd += f->d[x * ne + j] * del[j];
            SDd += SD[x * ne + j] * del[j];
        }
        k->Y[x] = f->J[x] + SDd;
        SD[x] = Dd;                                  /* reuse: row x of SD is no longer needed */
    }
    /* Y = J + Dd + Dd^T + SD delta (SD[0..8] now holds Dd) */
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) k->Y[3 * a + b] += SD[3 * a + b] + SD[3 * b + a];
    for (int a = 0; a < 3; a++) {
        double acc = f->s[a];
        for (int j = 0; j < ne; j++) acc += f->mO[a * ne + j] * del[j];
        k->sy[a] = acc;
    }
}

/* the velocity terms of Q_v and dQ_v/dv: A' = sum_k p'_k V_k, Y_u^T (row (a, b) of dd times delta'),
   m_O delta' */
static void flex_rates(const Flex *f, const FlexKin *k, const double *pd, const double *ddel, double *Ad,
                       double *Yu, double *mOd)
{
    int ne = f->ne;
    const double *V = k->V;
    for (int x = 0; x < 9; x++) Ad[x] = pd[0] * V[x] + pd[1] * V[9 + x] + pd[2] * V[18 + x] + pd[3] * V[27 + x];
    for (int x = 0; x < 9; x++) {
        double acc = 0.0;
        for (int j = 0; j < ne; j++) acc += k->dd[x * ne + j] * ddel[j];
        Yu[x] = acc;
    }
    for (int a = 0; a < 3; a++) {
        double acc = 0.0;
        for (int j = 0; j < ne; j++) acc += f->mO[a * ne + j] * ddel[j];
        mOd[a] = acc;
    }
}

/* axial-strain stiffening: force (n_e) added to out, and/or stiffness (ne x ne, leading dim ld) added */
static void axial_terms(const Flex *f, const double *del, double *force, double *K, int ld)
{
    int kk = f->k, ne = f->ne;
    double u[64], g[64];
    for (int e = 0; e < f->nel; e++) {
        const i64 *ix = f->idx + (size_t)e * kk;
        const double *a = f->a + (size_t)e * kk, *G = f->G + (size_t)e * kk * kk;
        for (int i = 0; i < kk; i++) u[i] = ix[i] < ne ? del[ix[i]] : 0.0;
        double up = 0.0, c = 0.0;
        for (int i = 0; i < kk; i++) {
            double acc = 0.0;
            for (int j = 0; j < kk; j++) acc += G[i * kk + j] * u[j];
            g[i] = acc;
            up += a[i] * u[i];
        }
        for (int i = 0; i < kk; i++) c += u[i] * g[i];
        double eps = up + c / (2.0 * f->L[e]), EA = f->EA;
        if (force)
            for (int i = 0; i < kk; i++)
                if (ix[i] < ne) force[ix[i]] += 0.5 * EA * c * a[i] + EA * eps * g[i];
        if (K)
            for (int i = 0; i < kk; i++) {
                if (ix[i] >= ne) continue;
                for (int j = 0; j < kk; j++) {
                    if (ix[j] >= ne) continue;
                    K[ix[i] * ld + ix[j]] += EA * (a[i] * g[j] + g[i] * a[j] + g[i] * g[j] / f->L[e]) + EA * eps * G[i * kk + j];
                }
            }
    }
}

/* coefficients c_i of the unit geometric stiffnesses of the "omega" stiffening
   (FlexibleBody._omega_coefficients): A_f = tilde(omega)^2 with omega = 2 G(p) p' (body components),
   alpha = -A(p)^T g (the System's gravity, zero without) */
static void omega_coefficients(const Sys *s, const Flex *f, const double *q, const double *v, double *c)
{
    const double *p = q + f->off + 3, *pd = v + f->off + 3;
    double G[12], w[3], W[9], Af[9], A[9], Atg[3];
    ep_G(p, G);
    mv34(G, pd, w);
    for (int a = 0; a < 3; a++) w[a] *= 2.0;                /* omega = 2 G p' */
    skew(w, W);
    mat3(W, W, Af);
    ep_A(p, A);
    mtv3(A, s->g, Atg);
    for (int i = 0; i < f->nkg; i++) {
        int key = (int)f->kg_key[i];
        c[i] = key < 9 ? Af[key] : -Atg[key - 9];
    }
}

/* "omega" stiffening: force sum_i c_i K_g,i delta added to out (n_e), and/or sum_i c_i K_g,i added to K
   (leading dimension ld); terms with c_i = 0 are skipped, as on the numpy path */
static void omega_terms(const Sys *s, const Flex *f, const double *q, const double *v, double *force, double *K, int ld)
{
    double c[12];
    int ne = f->ne;
    const double *del = q + f->off + 7;
    omega_coefficients(s, f, q, v, c);
    for (int i = 0; i < f->nkg; i++) {
        if (c[i] == 0.0) continue;
        const i64 *Kp = f->Kp + (size_t)i * ne;
        for (int r = 0; r < ne; r++) {
            if (force) {
                double acc = 0.0;
                for (i64 z = Kp[r]; z < Kp[r + 1]; z++) acc += f->Kv[z] * del[f->Kj[z]];
                force[r] += c[i] * acc;
            }
            if (K)
                for (i64 z = Kp[r]; z < Kp[r + 1]; z++) K[(size_t)r * ld + f->Kj[z]] += c[i] * f->Kv[z];
        }
    }
}

static void flex_eval(const Sys *s, const Flex *f, const double *q, const double *v, double *M, double *Q, double *work)
{
    int n = s->n, o = f->off, ne = f->ne;
    FlexKin k;
    flex_kin(f, q, work, &k);
    double *tmp = work + 18 * ne;                    /* 9 ne + ne scratch */
    const double *V = k.V, *A = k.A, *p = q + o + 3;
    double Vsy[12];                                  /* V_k s_y, (4, 3) */
    for (int kk = 0; kk < 4; kk++) mv3(V + 9 * kk, k.sy, Vsy + 3 * kk);
    if (M) {
        double AtV[36], VY[36];
        for (int kk = 0; kk < 4; kk++) {
            mat3T(A, V + 9 * kk, AtV + 9 * kk);
            mat3(V + 9 * kk, k.Y, VY + 9 * kk);
        }
        for (int a = 0; a < 3; a++) {
            M[(o + a) * n + o + a] = f->mass;
            for (int kk = 0; kk < 4; kk++) {
                M[(o + a) * n + o + 3 + kk] = Vsy[3 * kk + a];
                M[(o + 3 + kk) * n + o + a] = Vsy[3 * kk + a];
            }
            for (int j = 0; j < ne; j++) {
                double acc = A[3 * a] * f->mO[j] + A[3 * a + 1] * f->mO[ne + j] + A[3 * a + 2] * f->mO[2 * ne + j];
                M[(o + a) * n + o + 7 + j] = acc;
                M[(o + 7 + j) * n + o + a] = acc;
            }
        }
        for (int kk = 0; kk < 4; kk++) {
            for (int l = 0; l < 4; l++) {
                double acc = 0.0;
                for (int x = 0; x < 9; x++) acc += V[9 * kk + x] * VY[9 * l + x];
                M[(o + 3 + kk) * n + o + 3 + l] = acc;
            }
            for (int j = 0; j < ne; j++) {
                double acc = 0.0;
                for (int x = 0; x < 9; x++) acc += AtV[9 * kk + x] * k.dd[x * ne + j];
                M[(o + 3 + kk) * n + o + 7 + j] = acc;
                M[(o + 7 + j) * n + o + 3 + kk] = acc;
            }
        }
        double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3], p4 = pp * pp;
        for (int i = 0; i < ne; i++)
            for (int j = 0; j < ne; j++) M[(o + 7 + i) * n + o + 7 + j] = p4 * f->Mdd[i * ne + j];
    }
    if (Q) {
        const double *pd = v + o + 3, *ddel = v + o + 7, *del = q + o + 7;
        double Ap[9], Ad[9], Yu[9], mOd[3], inner[9], t1[9], t2[9], Cm[9], Dm[9], x3[3], y3[3];
        ep_A_EG(pd, Ap);
        flex_rates(f, &k, pd, ddel, Ad, Yu, mOd);
        mv3(Ap, k.sy, x3);
        mv3(Ad, mOd, y3);
        for (int a = 0; a < 3; a++) Q[o + a] = -2.0 * (x3[a] + y3[a]);
        mat3(Ap, k.Y, t1);
        mat3(Ad, Yu, t2);
        for (int x = 0; x < 9; x++) inner[x] = t1[x] + t2[x];
        for (int kk = 0; kk < 4; kk++) {
            double acc = 0.0;
            for (int x = 0; x < 9; x++) acc += V[9 * kk + x] * inner[x];
            Q[o + 3 + kk] = -2.0 * acc;
        }
        mat3T(A, Ap, Cm);
        mat3T(A, Ad, Dm);
        for (int x = 0; x < 9; x++) { Cm[x] *= 2.0; Dm[x] *= 2.0; }
        double *SV = tmp;                            /* S delta' (9 ne) */
        csr_mv(f, ddel, SV);
        double *fe = tmp + 9 * ne;                   /* elastic force (ne) */
        for (int j = 0; j < ne; j++) {
            double acc = 0.0;
            for (int x = 0; x < 9; x++) acc += Cm[x] * k.dd[x * ne + j] + Dm[x] * SV[x * ne + j];
            Q[o + 7 + j] = -acc;
        }
        for (int i = 0; i < ne; i++) {
            double acc = 0.0;
            const double *Ki = f->Kdd + (size_t)i * ne;
            for (int j = 0; j < ne; j++) acc += Ki[j] * del[j];
            if (f->damped) {
                const double *Ci = f->Cdd + (size_t)i * ne;
                for (int j = 0; j < ne; j++) acc += Ci[j] * ddel[j];
            }
            fe[i] = acc;
        }
        if (f->axial) axial_terms(f, del, fe, NULL, 0);
        if (f->nkg) omega_terms(s, f, q, v, fe, NULL, 0);
        for (int i = 0; i < ne; i++) Q[o + 7 + i] -= fe[i];
        if (s->has_g) {
            const double *g = s->g;
            double Atg[3];
            mtv3(A, g, Atg);
            for (int a = 0; a < 3; a++) Q[o + a] += f->mass * g[a];
            for (int kk = 0; kk < 4; kk++) Q[o + 3 + kk] += Vsy[3 * kk] * g[0] + Vsy[3 * kk + 1] * g[1] + Vsy[3 * kk + 2] * g[2];
            for (int j = 0; j < ne; j++) Q[o + 7 + j] += f->mO[j] * Atg[0] + f->mO[ne + j] * Atg[1] + f->mO[2 * ne + j] * Atg[2];
        }
    }
}

/* dQ_v/dv of a flexible body (FlexibleBody.quadratic_velocity_jacobian) */
static void flex_dqv(const Sys *s, const Flex *f, const double *q, const double *v, double *D, double *work)
{
    int n = s->n, o = f->off, ne = f->ne;
    FlexKin k;
    flex_kin(f, q, work, &k);
    double *SV = work + 18 * ne;
    const double *pd = v + o + 3, *ddel = v + o + 7, *V = k.V, *A = k.A;
    double Vd[36], Ad[9], Yu[9], mOd[3], AtVd[36], AtV[36], AdtV[36], Dm[9];
    ep_V(pd, Vd);
    flex_rates(f, &k, pd, ddel, Ad, Yu, mOd);
    csr_mv(f, ddel, SV);
    for (int kk = 0; kk < 4; kk++) {
        mat3T(A, Vd + 9 * kk, AtVd + 9 * kk);
        mat3T(A, V + 9 * kk, AtV + 9 * kk);
        mat3T(Ad, V + 9 * kk, AdtV + 9 * kk);
        double x3[3], y3[3];
        mv3(Vd + 9 * kk, k.sy, x3);
        mv3(V + 9 * kk, mOd, y3);
        for (int a = 0; a < 3; a++) D[(o + a) * n + o + 3 + kk] = -2.0 * (x3[a] + y3[a]);
    }
    for (int a = 0; a < 3; a++)
        for (int j = 0; j < ne; j++)
            D[(o + a) * n + o + 7 + j] = -2.0 * (Ad[3 * a] * f->mO[j] + Ad[3 * a + 1] * f->mO[ne + j] + Ad[3 * a + 2] * f->mO[2 * ne + j]);
    for (int l = 0; l < 4; l++) {
        double t1[9], t2[9], W[9];
        mat3(Vd + 9 * l, k.Y, t1);
        mat3(V + 9 * l, Yu, t2);
        for (int x = 0; x < 9; x++) W[x] = t1[x] + t2[x];
        for (int kk = 0; kk < 4; kk++) {
            double acc = 0.0;
            for (int x = 0; x < 9; x++) acc += V[9 * kk + x] * W[x];
            D[(o + 3 + kk) * n + o + 3 + l] = -2.0 * acc;
        }
    }
    for (int kk = 0; kk < 4; kk++)
        for (int j = 0; j < ne; j++) {
            double a1 = 0.0, a2 = 0.0, a3 = 0.0;
            for (int x = 0; x < 9; x++) {
                a1 += AdtV[9 * kk + x] * k.dd[x * ne + j];
                a2 += AtVd[9 * kk + x] * k.dd[x * ne + j];
                a3 += AtV[9 * kk + x] * SV[x * ne + j];
            }
            D[(o + 3 + kk) * n + o + 7 + j] = -2.0 * a1;
            D[(o + 7 + j) * n + o + 3 + kk] = -2.0 * (a2 + a3);
        }
    mat3T(A, Ad, Dm);
    for (int x = 0; x < 9; x++) Dm[x] *= 2.0;
    for (int x = 0; x < 9; x++)                     /* -sum_ab D_ab S[a, b] (the block is zero here) */
        for (int i = 0; i < ne; i++) {
            double *Di = D + (size_t)(o + 7 + i) * n + o + 7;
            for (i64 z = f->Sp[x * ne + i]; z < f->Sp[x * ne + i + 1]; z++) Di[f->Sj[z]] -= Dm[x] * f->S[z];
        }
}

/* ------------------------------------------------------------------------------------------ */
/* planar systems: RigidBody2D bodies, PlanarRevolute, PlanarPrismatic, CoordinateDriver       */
/*                                                                                            */
/* flexmbs/bodies/planar.py (RigidBody2D, PlanarBatch), flexmbs/constraints/planar.py          */
/* (PlanarRevolute and its PlanarRevoluteBatch, PlanarPrismatic) and                           */
/* flexmbs/constraints/driving.py (CoordinateDriver).  A body's q = (x, y, theta) of its       */
/* centroid: M = diag(m, m, I_G) constant, Q = (m g_x, m g_y, 0), no quadratic-velocity terms  */
/* (dQ_v/dv = 0).  A side of a joint is a body (its first coordinate o >= 0) or the ground     */
/* (o = -1: its point is s itself, its vectors u themselves, no columns).                      */

/* M (diagonal blocks) and Q of the planar bodies; either may be NULL */
static void planar_bodies(const Sys *s, double *M, double *Q)
{
    const Planar *pl = &s->pl;
    int n = s->n;
    for (int b = 0; b < pl->nb; b++) {
        int o = (int)pl->off[b];
        double m = pl->mI[2 * b];
        if (M) {
            M[(size_t)o * n + o] = m;
            M[(size_t)(o + 1) * n + o + 1] = m;
            M[(size_t)(o + 2) * n + o + 2] = pl->mI[2 * b + 1];
        }
        if (Q) {
            Q[o] = s->has_g ? m * s->g[0] : 0.0;
            Q[o + 1] = s->has_g ? m * s->g[1] : 0.0;
            Q[o + 2] = 0.0;
        }
    }
}

typedef struct {          /* one side of a planar joint at q */
    int o;                /* first coordinate, -1: the ground */
    double c, sn, x, y;   /* cos, sin of theta and the position (the ground: 1, 0, 0, 0) */
} Side2;

static Side2 side2(const double *q, i64 o)
{
    Side2 a = {(int)o, 1.0, 0.0, 0.0, 0.0};
    if (o >= 0) {
        double th = q[o + 2];
        a.c = cos(th);
        a.sn = sin(th);
        a.x = q[o];
        a.y = q[o + 1];
    }
    return a;
}

/* A u (RigidBody2D.vector; u itself on the ground) */
static void side2_vector(const Side2 *a, const double *u, double *out)
{
    if (a->o < 0) { out[0] = u[0]; out[1] = u[1]; return; }
    out[0] = a->c * u[0] - a->sn * u[1];
    out[1] = a->sn * u[0] + a->c * u[1];
}

/* r + A s (RigidBody2D.point) */
static void side2_point(const Side2 *a, const double *p, double *out)
{
    side2_vector(a, p, out);
    if (a->o >= 0) { out[0] += a->x; out[1] += a->y; }
}

/* A E u = d(A u)/dtheta (the theta column of point_jacobian and vector_jacobian), E = [[0, -1], [1, 0]] */
static void side2_turned(const Side2 *a, const double *u, double *out)
{
    out[0] = a->c * -u[1] - a->sn * u[0];
    out[1] = a->sn * -u[1] + a->c * u[0];
}

/* C_q[row, col] += val, with the row's nonzero column range (for the products C_q^T mu) */
static void cq_put(const Sys *s, double *Cq, int row, int col, double val)
{
    Cq[(size_t)row * s->n + col] += val;
    if (col < s->lo[row]) s->lo[row] = col;
    if (col + 1 > s->hi[row]) s->hi[row] = col + 1;
}

/* C and C_q (zeroed by the caller; may be NULL) of the planar joints and the coordinate drivers;
   law: the table of (f, f', f''), the coordinate drivers' after the nang angle drivers' */
static void planar_constraints(Sys *s, const double *q, const double *law, double *C, double *Cq)
{
    const Planar *pl = &s->pl;
    for (int i = 0; i < pl->nrev; i++) {              /* C = P_i - P_j, C_q = [I, A_i E s_i | -I, -A_j E s_j] */
        const i64 *x = pl->rev + 3 * i;
        const double *sv = pl->rev_s + 4 * i;
        int row = (int)x[0];
        Side2 a = side2(q, x[1]), b = side2(q, x[2]);
        double Pi[2], Pj[2];
        side2_point(&a, sv, Pi);
        side2_point(&b, sv + 2, Pj);
        C[row] = Pi[0] - Pj[0];
        C[row + 1] = Pi[1] - Pj[1];
        if (!Cq) continue;
        const Side2 *sd[2] = {&a, &b};
        for (int k = 0; k < 2; k++) {
            const Side2 *e = sd[k];
            if (e->o < 0) continue;
            double sign = k ? -1.0 : 1.0, w[2];
            side2_turned(e, sv + 2 * k, w);
            cq_put(s, Cq, row, e->o, sign);
            cq_put(s, Cq, row + 1, e->o + 1, sign);
            cq_put(s, Cq, row, e->o + 2, sign * w[0]);
            cq_put(s, Cq, row + 1, e->o + 2, sign * w[1]);
        }
    }
    for (int i = 0; i < pl->npri; i++) {
        /* C_1 = n . d, n = A_i n_i, d = P_j - P_i;  C_2 = (A_i a_i) x (A_j a_j) */
        const i64 *x = pl->pri + 3 * i;
        const double *pv = pl->pri_v + 10 * i, *si = pv, *sj = pv + 2, *ai = pv + 4, *aj = pv + 6, *ni = pv + 8;
        int row = (int)x[0];
        Side2 a = side2(q, x[1]), b = side2(q, x[2]);
        double Pi[2], Pj[2], d[2], nv[2], u[2], w[2];
        side2_point(&a, si, Pi);
        side2_point(&b, sj, Pj);
        d[0] = Pj[0] - Pi[0];
        d[1] = Pj[1] - Pi[1];
        side2_vector(&a, ni, nv);
        side2_vector(&a, ai, u);
        side2_vector(&b, aj, w);
        C[row] = nv[0] * d[0] + nv[1] * d[1];
        C[row + 1] = u[0] * w[1] - u[1] * w[0];
        if (!Cq) continue;
        if (a.o >= 0) {       /* row 1: d . dn/dq - n . dP_i/dq;  row 2: du/dq x w */
            double Jn[2], Ji[2], Ju[2];
            side2_turned(&a, ni, Jn);
            side2_turned(&a, si, Ji);
            side2_turned(&a, ai, Ju);
            cq_put(s, Cq, row, a.o, -nv[0]);
            cq_put(s, Cq, row, a.o + 1, -nv[1]);
            cq_put(s, Cq, row, a.o + 2, (d[0] * Jn[0] + d[1] * Jn[1]) - (nv[0] * Ji[0] + nv[1] * Ji[1]));
            cq_put(s, Cq, row + 1, a.o + 2, Ju[0] * w[1] - Ju[1] * w[0]);
        }
        if (b.o >= 0) {       /* row 1: n . dP_j/dq;  row 2: u x dw/dq = -(dw/dq x u) */
            double Jj[2], Jw[2];
            side2_turned(&b, sj, Jj);
            side2_turned(&b, aj, Jw);
            cq_put(s, Cq, row, b.o, nv[0]);
            cq_put(s, Cq, row, b.o + 1, nv[1]);
            cq_put(s, Cq, row, b.o + 2, nv[0] * Jj[0] + nv[1] * Jj[1]);
            cq_put(s, Cq, row + 1, b.o + 2, -(Jw[0] * u[1] - Jw[1] * u[0]));
        }
    }
    for (int i = 0; i < pl->ncd; i++) {               /* C = q_k - f(t), C_q = e_k */
        int row = (int)pl->cd[2 * i], col = (int)pl->cd[2 * i + 1];
        C[row] = q[col] - law[3 * (s->nang + i)];
        if (Cq) cq_put(s, Cq, row, col, 1.0);
    }
}

/* the planar arrays, after the flexible bodies' (header entries 13-16: nb, nrev, npri, ncd); the mass
   blocks of the planar bodies are appended to s->blk */
static int planar_parse(Sys *s, PyObject *list, Py_ssize_t i)
{
    Planar *pl = &s->pl;
    if (!(pl->off = take(s, list, i++, pl->nb, 'i', "planar offsets"))) return -1;
    if (!(pl->mI = take(s, list, i++, 2 * (Py_ssize_t)pl->nb, 'f', "planar inertia"))) return -1;
    if (!(pl->rev = take(s, list, i++, 3 * (Py_ssize_t)pl->nrev, 'i', "planar revolute rows"))) return -1;
    if (!(pl->rev_s = take(s, list, i++, 4 * (Py_ssize_t)pl->nrev, 'f', "planar revolute points"))) return -1;
    if (!(pl->pri = take(s, list, i++, 3 * (Py_ssize_t)pl->npri, 'i', "planar prismatic rows"))) return -1;
    if (!(pl->pri_v = take(s, list, i++, 10 * (Py_ssize_t)pl->npri, 'f', "planar prismatic vectors"))) return -1;
    if (!(pl->cd = take(s, list, i++, 2 * (Py_ssize_t)pl->ncd, 'i', "coordinate drivers"))) return -1;
    for (int b = 0; b < pl->nb; b++)
        if (pl->off[b] < 0 || pl->off[b] + 3 > s->n) { PyErr_SetString(PyExc_ValueError, "kernel system: planar body out of range"); return -1; }
    for (int k = 0; k < pl->nrev + pl->npri; k++) {
        const i64 *x = k < pl->nrev ? pl->rev + 3 * k : pl->pri + 3 * (k - pl->nrev);
        if (x[0] < 0 || x[0] + 2 > s->m || x[1] + 3 > s->n || x[2] + 3 > s->n || x[1] < -1 || x[2] < -1) {
            PyErr_SetString(PyExc_ValueError, "kernel system: planar joint out of range");
            return -1;
        }
    }
    for (int k = 0; k < pl->ncd; k++)
        if (pl->cd[2 * k] < 0 || pl->cd[2 * k] >= s->m || pl->cd[2 * k + 1] < 0 || pl->cd[2 * k + 1] >= s->n) {
            PyErr_SetString(PyExc_ValueError, "kernel system: coordinate driver out of range");
            return -1;
        }
    int *blk = realloc(s->blk, (2 * (size_t)(s->nblk + pl->nb) + 2) * sizeof(int));
    if (!blk) { PyErr_NoMemory(); return -1; }
    s->blk = blk;
    for (int b = 0; b < pl->nb; b++) { blk[2 * (s->nblk + b)] = (int)pl->off[b]; blk[2 * (s->nblk + b) + 1] = 3; }
    s->nblk += pl->nb;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* constraints: Euler-parameter norms and the joint batch                                      */

static void markers(Sys *s, const double *qe, int jac)
{
    int W = s->W, E = s->E;
    for (int k = 0; k < s->nmark; k++) {
        const i64 *R = s->mR + 3 * k, *P = s->mp + 4 * k, *e = s->me + (size_t)E * k;
        const double *Phi = s->mPhi + (size_t)3 * E * k;
        double p[4] = {qe[P[0]], qe[P[1]], qe[P[2]], qe[P[3]]}, A[9], y[3];
        ep_A_EG(p, A);
        for (int a = 0; a < 3; a++) {
            double acc = s->my0[3 * k + a];
            for (int j = 0; j < E; j++) acc += Phi[a * E + j] * qe[e[j]];
            y[a] = acc;
        }
        double *r = s->mr + 3 * k;
        mv3(A, y, r);
        for (int a = 0; a < 3; a++) r[a] += qe[R[a]];
        if (!jac) continue;
        double *J = s->mJ + (size_t)3 * W * k, VJ[12];
        memset(J, 0, 3 * W * sizeof(double));
        if (s->mpoint[k])
            for (int a = 0; a < 3; a++) J[a * W + a] = 1.0;
        ep_VJ(p, y, VJ);
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 4; c++) J[a * W + 3 + c] = VJ[4 * a + c];
        for (int a = 0; a < 3; a++)
            for (int j = 0; j < E; j++)
                J[a * W + 7 + j] = A[3 * a] * Phi[j] + A[3 * a + 1] * Phi[E + j] + A[3 * a + 2] * Phi[2 * E + j];
    }
}

/* C_q[row] += coef . J_k (3 x W), at the marker's columns */
static void add_row(const Sys *s, double *Cq, int row, int k, const double *coef)
{
    int W = s->W, n = s->n;
    const double *J = s->mJ + (size_t)3 * W * k;
    const i64 *cols = s->mcols + (size_t)W * k;
    for (int w = 0; w < W; w++)
        if (cols[w] < n) cq_put(s, Cq, row, (int)cols[w], coef[0] * J[w] + coef[1] * J[W + w] + coef[2] * J[2 * W + w]);
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* C (m) and C_q (m x n, zeroed here) at q; law: the time row, starting with (nlaw, 3) values f, f', f''
   of the angle drivers, then of the coordinate drivers (the load vectors follow) */
static void constraints(Sys *s, const double *q, const double *law, double *C, double *Cq)
{
    int n = s->n;
    double *qe = s->qe;
    memcpy(qe, q, n * sizeof(double));
    if (Cq) {
        memset(Cq, 0, (size_t)s->m * n * sizeof(double));
        for (int r = 0; r < s->m; r++) { s->lo[r] = n; s->hi[r] = 0; }
    }
    for (int i = 0; i < s->nnorm; i++) {
        int row = (int)s->norm[2 * i], o = (int)s->norm[2 * i + 1];
        const double *p = q + o + 3;
        C[row] = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3] - 1.0;
        if (Cq) {
            for (int c = 0; c < 4; c++) Cq[(size_t)row * n + o + 3 + c] = 2.0 * p[c];
            s->lo[row] = o + 3;
            s->hi[row] = o + 7;
        }
    }
    for (int b = 0; b < s->nf; b++) {                /* mean-axis conditions C = B delta (constant B) */
        const Flex *f = &s->flex[b];
        int o = f->off + 7, ne = f->ne;
        for (int i = 0; i < f->nB; i++) {
            int row = f->Brow + i;
            const double *Bi = f->B + (size_t)i * ne;
            double acc = 0.0;
            for (int j = 0; j < ne; j++) acc += Bi[j] * q[o + j];
            C[row] = acc;
            if (Cq) {
                memcpy(Cq + (size_t)row * n + o, Bi, ne * sizeof(double));
                s->lo[row] = o;
                s->hi[row] = o + ne;
            }
        }
    }
    planar_constraints(s, q, law, C, Cq);
    if (!s->nmark) return;
    markers(s, qe, Cq != NULL);
    const double *r = s->mr;
    for (int i = 0; i < s->npt; i++) {
        const i64 *x = s->pt + 3 * i;
        int row = (int)x[0], pi = (int)x[1], pj = (int)x[2];
        for (int c = 0; c < 3; c++) {
            C[row + c] = r[3 * pi + c] - r[3 * pj + c];
            if (Cq) {
                double e[3] = {0.0, 0.0, 0.0}, me[3] = {0.0, 0.0, 0.0};
                e[c] = 1.0;
                me[c] = -1.0;
                add_row(s, Cq, row + c, pi, e);
                add_row(s, Cq, row + c, pj, me);
            }
        }
    }
    for (int i = 0; i < s->nd1; i++) {
        const i64 *x = s->d1 + 3 * i;
        int row = (int)x[0], va = (int)x[1], vb = (int)x[2];
        C[row] = dot3(r + 3 * va, r + 3 * vb);
        if (Cq) {
            add_row(s, Cq, row, va, r + 3 * vb);
            add_row(s, Cq, row, vb, r + 3 * va);
        }
    }
    for (int i = 0; i < s->nd2; i++) {
        const i64 *x = s->d2 + 4 * i;
        int row = (int)x[0], va = (int)x[1], pi = (int)x[2], pj = (int)x[3];
        double d[3], ma[3];
        for (int c = 0; c < 3; c++) { d[c] = r[3 * pj + c] - r[3 * pi + c]; ma[c] = -r[3 * va + c]; }
        C[row] = dot3(r + 3 * va, d);
        if (Cq) {
            add_row(s, Cq, row, va, d);
            add_row(s, Cq, row, pi, ma);
            add_row(s, Cq, row, pj, r + 3 * va);
        }
    }
    for (int i = 0; i < s->nds; i++) {
        const i64 *x = s->ds + 3 * i;
        int row = (int)x[0], pi = (int)x[1], pj = (int)x[2];
        double L = s->dsL[i], d[3], gj[3], gi[3];
        for (int c = 0; c < 3; c++) d[c] = r[3 * pj + c] - r[3 * pi + c];
        C[row] = (dot3(d, d) - L * L) / (2.0 * L);
        if (Cq) {
            for (int c = 0; c < 3; c++) { gj[c] = d[c] / L; gi[c] = -gj[c]; }
            add_row(s, Cq, row, pi, gi);
            add_row(s, Cq, row, pj, gj);
        }
    }
    for (int i = 0; i < s->nang; i++) {
        const i64 *x = s->ang + 4 * i;
        int row = (int)x[0], vx = (int)x[1], vy = (int)x[2], vb = (int)x[3];
        double co = cos(law[3 * i]), si = sin(law[3 * i]), u[3], cb[3], sb[3];
        const double *b = r + 3 * vb;
        for (int c = 0; c < 3; c++) {
            u[c] = co * r[3 * vy + c] - si * r[3 * vx + c];
            cb[c] = co * b[c];
            sb[c] = -si * b[c];
        }
        C[row] = dot3(u, b);
        if (Cq) {
            add_row(s, Cq, row, vy, cb);
            add_row(s, Cq, row, vx, sb);
            add_row(s, Cq, row, vb, u);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the system                                                                                  */

/* the kinds of loads (flexmbs/bodies/loads.py) on a RigidBodyEP (7 coordinates) or a RigidBody2D (3) */
enum { LOAD_TORQUE = 0, LOAD_POINT = 1, LOAD_SPRING = 2, LOAD_TORQUE_2D = 3, LOAD_POINT_2D = 4, LOAD_SPRING_2D = 5,
       N_LOAD_KINDS = 6 };

/* a load on the RigidBody2D at coordinate o, added to Q (f: its vector of time, torque in f[0], force in f[0:2];
   lr: point s (2, 0), anchor (2, 0), stiffness, rest length, damping), with u = A s, dA/dtheta s = (-u_y, u_x):
     torque_load       Q_theta = T
     point_load        Q = J_P^T F,  J_P = [I, (-u_y, u_x)],  F global or A F (local)
     spring_to_ground  d = R + u - anchor, l = |d|, e = d / l, l' = e . (R' + theta' (-u_y, u_x)),
                       F = -(k (l - l0) + c l') e                                                        */
static void planar_load(int kind, int local, int o, const double *f, const double *lr, const double *q,
                        const double *v, double *Q)
{
    if (kind == LOAD_TORQUE_2D) { Q[o + 2] += f[0]; return; }
    double c = cos(q[o + 2]), sn = sin(q[o + 2]);
    double u[2] = {c * lr[0] - sn * lr[1], sn * lr[0] + c * lr[1]}, F[2];
    if (kind == LOAD_POINT_2D) {
        F[0] = local ? c * f[0] - sn * f[1] : f[0];
        F[1] = local ? sn * f[0] + c * f[1] : f[1];
    } else {
        double d[2] = {q[o] + u[0] - lr[3], q[o + 1] + u[1] - lr[4]};
        double len = sqrt(d[0] * d[0] + d[1] * d[1]), rate = 0.0, damp = lr[8];
        d[0] /= len;
        d[1] /= len;
        if (damp != 0.0) rate = d[0] * (v[o] - v[o + 2] * u[1]) + d[1] * (v[o + 1] + v[o + 2] * u[0]);
        double mag = -(lr[6] * (len - lr[7]) + damp * rate);
        F[0] = mag * d[0];
        F[1] = mag * d[1];
    }
    Q[o] += F[0];
    Q[o + 1] += F[1];
    Q[o + 2] += -u[1] * F[0] + u[0] * F[1];
}

/* the loads of the rigid bodies (flexmbs/bodies/loads.py), added to Q: torque_load Q_p = 2 E^T T,
   point_load and spring_to_ground Q = J_P^T F (J_P = [I, d(A s)/dp]), and those of planar bodies
   (planar_load); the vectors T, F of time come from the time row, after the drivers' values (3 nlaw),
   or from the held controller outputs */
static void rigid_loads(const Sys *s, const double *q, const double *v, const double *row, double *Q)
{
    for (int i = 0; i < s->nl; i++) {
        const i64 *li = s->ld_i + 4 * i;
        const double *lr = s->ld_r + 9 * i;
        int kind = (int)li[0], o = (int)li[1];
        if (kind >= LOAD_TORQUE_2D) {
            const double *f = kind == LOAD_SPRING_2D ? NULL
                              : s->held && s->held_mask[li[3]] ? s->held + 3 * li[3] : row + 3 * s->nlaw + 3 * li[3];
            planar_load(kind, (int)li[2], o, f, lr, q, v, Q);
            continue;
        }
        const double *p = q + o + 3;
        double A[9], F[3], VJ[12];
        if (kind != LOAD_SPRING) {
            /* the vector of time: a held controller output (read as given) or the time row's */
            const double *f = s->held && s->held_mask[li[3]] ? s->held + 3 * li[3] : row + 3 * s->nlaw + 3 * li[3];
            if (li[2]) {
                ep_A(p, A);
                mv3(A, f, F);
            } else {
                F[0] = f[0]; F[1] = f[1]; F[2] = f[2];
            }
        }
        double y[4];
        if (kind == LOAD_TORQUE) {
            double E[12];
            ep_E(p, E);
            mtv34(E, F, y);
            for (int k = 0; k < 4; k++) Q[o + 3 + k] += 2.0 * y[k];
            continue;
        }
        ep_VJ(p, lr, VJ);
        if (kind == LOAD_SPRING) {
            double d[3], rate = 0.0, stiff = lr[6], rest = lr[7], damp = lr[8];
            ep_A(p, A);
            mv3(A, lr, d);
            for (int a = 0; a < 3; a++) d[a] += q[o + a] - lr[3 + a];
            double len = sqrt(dot3(d, d));
            for (int a = 0; a < 3; a++) d[a] /= len;
            if (damp != 0.0) {                   /* l' = e . (R' + d(A s)/dp p') */
                double rp[3];
                mv34(VJ, v + o + 3, rp);
                for (int a = 0; a < 3; a++) rate += d[a] * (v[o + a] + rp[a]);
            }
            double mag = -(stiff * (len - rest) + damp * rate);
            for (int a = 0; a < 3; a++) F[a] = mag * d[a];
        }
        mtv34(VJ, F, y);
        for (int a = 0; a < 3; a++) Q[o + a] += F[a];
        for (int k = 0; k < 4; k++) Q[o + 3 + k] += y[k];
    }
}

/* M (n x n, zeroed here), Q (n) at (q, v); either may be NULL; row: the time row (drivers, load vectors) */
static void bodies(Sys *s, const double *q, const double *v, const double *row, double *M, double *Q)
{
    int n = s->n;
    if (M) memset(M, 0, (size_t)n * n * sizeof(double));
    for (int b = 0; b < s->nr; b++) rigid_eval(s, b, q, v, M, Q);
    for (int b = 0; b < s->nf; b++) flex_eval(s, &s->flex[b], q, v, M, Q, s->fw);
    planar_bodies(s, M, Q);                   /* sets its bodies' Q (the weight): before their loads */
    if (Q && s->nl) rigid_loads(s, q, v, row, Q);
}

static void dqv_dv(Sys *s, const double *q, const double *v, double *D)
{
    memset(D, 0, (size_t)s->n * s->n * sizeof(double));
    for (int b = 0; b < s->nr; b++) rigid_dqv(s, b, q, v, D);
    for (int b = 0; b < s->nf; b++) flex_dqv(s, &s->flex[b], q, v, D, s->fw);
}

/* K_el = d([k] delta + stiffening force)/d delta on the elastic coordinates (n x n, zeroed) at (q, v):
   [k] + the axial-strain stiffness, or [k] + sum_i c_i(q, v) K_g,i ("omega", FlexibleBody.elastic_stiffness) */
static void elastic_stiffness(Sys *s, const double *q, const double *v, double *K)
{
    int n = s->n;
    memset(K, 0, (size_t)n * n * sizeof(double));
    for (int b = 0; b < s->nf; b++) {
        const Flex *f = &s->flex[b];
        int o = f->off + 7, ne = f->ne;
        for (int i = 0; i < ne; i++)
            for (int j = 0; j < ne; j++) K[(size_t)(o + i) * n + o + j] = f->Kdd[i * ne + j];
        if (f->axial) axial_terms(f, q + o, NULL, K + (size_t)o * n + o, n);
        if (f->nkg) omega_terms(s, f, q, v, NULL, K + (size_t)o * n + o, n);
    }
}

/* y = M x for the block-diagonal, symmetric M: y_i = sum_j M_ji x_j over the blocks (rows of M, contiguous) */
static void mass_times(const Sys *s, const double *M, const double *x, double *y)
{
    int n = s->n;
    memset(y, 0, n * sizeof(double));
    for (int b = 0; b < s->nblk; b++) {
        int o = s->blk[2 * b], nb = s->blk[2 * b + 1];
        for (int j = o; j < o + nb; j++) {
            const double *Mj = M + (size_t)j * n;
            double xj = x[j];
            for (int i = o; i < o + nb; i++) y[i] += Mj[i] * xj;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* LU with partial pivoting (row-major, in place); solves A x = b                               */

static void lu_factor(double *A, int N, int *piv, int *last)
{
    /* last[i]: one past the last nonzero of row i, kept through the elimination (fill-in included),
       so that the updates skip the zeros at the end of the rows */
    for (int i = 0; i < N; i++) {
        int e = N;
        while (e > 0 && A[(size_t)i * N + e - 1] == 0.0) e--;
        last[i] = e;
    }
    for (int k = 0; k < N; k++) {
        int p = k;
        double big = fabs(A[(size_t)k * N + k]);
        for (int i = k + 1; i < N; i++) {
            double x = fabs(A[(size_t)i * N + k]);
            if (x > big) { big = x; p = i; }
        }
        piv[k] = p;
        if (p != k) {
            double *rk = A + (size_t)k * N, *rp = A + (size_t)p * N;
            for (int j = 0; j < N; j++) { double t = rk[j]; rk[j] = rp[j]; rp[j] = t; }
            int t = last[k]; last[k] = last[p]; last[p] = t;
        }
        double *rk = A + (size_t)k * N;
        double inv = 1.0 / rk[k];
        int e = last[k];
        for (int i = k + 1; i < N; i++) {
            double *ri = A + (size_t)i * N;
            if (ri[k] == 0.0) continue;
            double l = ri[k] * inv;
            ri[k] = l;
            for (int j = k + 1; j < e; j++) ri[j] -= l * rk[j];
            if (e > last[i]) last[i] = e;
        }
    }
}

/* solve with T = the factors transposed (T[j N + i] = LU[i, j]): column-oriented substitutions, whose
   inner loops run over contiguous memory without a chain of dependent additions, each over the
   nonzero range of its column: rows j+1 .. hi[j]-1 of L, lo[j] .. j-1 of U */
static void lu_solve(const double *T, int N, const int *piv, const int *lo, const int *hi, double *b)
{
    for (int k = 0; k < N; k++) {
        int p = piv[k];
        if (p != k) { double t = b[k]; b[k] = b[p]; b[p] = t; }
    }
    for (int j = 0; j < N; j++) {
        double bj = b[j];
        if (bj == 0.0) continue;
        const double *c = T + (size_t)j * N;
        for (int i = j + 1; i < hi[j]; i++) b[i] -= c[i] * bj;
    }
    for (int j = N - 1; j >= 0; j--) {
        const double *c = T + (size_t)j * N;
        double bj = b[j] / c[j];
        b[j] = bj;
        if (bj == 0.0) continue;
        for (int i = lo[j]; i < j; i++) b[i] -= c[i] * bj;
    }
}

/* the nonzero ranges of the columns of L and U from T (lu_solve) */
static void column_ranges(const double *T, int N, int *lo, int *hi)
{
    for (int j = 0; j < N; j++) {
        const double *c = T + (size_t)j * N;
        int a = 0, b = N;
        while (a < j && c[a] == 0.0) a++;
        while (b > j + 1 && c[b - 1] == 0.0) b--;
        lo[j] = a;
        hi[j] = b;
    }
}

static void transpose(const double *A, int N, double *T)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) T[(size_t)j * N + i] = A[(size_t)i * N + j];
}

/* ------------------------------------------------------------------------------------------ */
/* building the system from Python                                                             */

static int header(const i64 *h, Sys *s)
{
    s->n = (int)h[0]; s->m = (int)h[1]; s->nr = (int)h[2]; s->nf = (int)h[3]; s->nnorm = (int)h[4];
    s->nmark = (int)h[5]; s->W = (int)h[6]; s->E = (int)h[7]; s->npt = (int)h[8]; s->nd1 = (int)h[9];
    s->nd2 = (int)h[10]; s->nds = (int)h[11]; s->nang = (int)h[12];
    s->nl = (int)h[13]; s->nvec = (int)h[14];
    s->pl.nb = (int)h[15]; s->pl.nrev = (int)h[16]; s->pl.npri = (int)h[17]; s->pl.ncd = (int)h[18];
    s->nlaw = s->nang + s->pl.ncd;
    s->tw = 3 * (s->nlaw + s->nvec);
    for (int k = 1; k < 19; k++)
        if (h[k] < 0) return 0;
    return s->n > 0 && (s->nmark == 0 || s->W >= 7 + s->E);   /* a marker's Jacobian: R, p, then E columns */
}

/* the index arrays of the rigid bodies, norms, markers, joints and loads point into q (n, and the
   ground's TAIL after it), C (m rows) and the markers: checked once when the system is built, so that
   no evaluation reads or writes out of bounds (a ValueError naming the array instead) */
static int check_indices(const Sys *s)
{
    i64 n = s->n, m = s->m, nq = s->n + TAIL, nm = s->nmark;
    if (in_range(s->r_off, s->nr, 1, 1, 0, n - 6, "rigid offsets")
        || in_range(s->norm, s->nnorm, 1, 2, 0, m, "norm rows") || in_range(s->norm + 1, s->nnorm, 1, 2, 0, n - 6, "norm columns")
        || in_range(s->mR, nm, 3, 3, 0, nq, "marker R") || in_range(s->mp, nm, 4, 4, 0, nq, "marker p")
        || in_range(s->me, nm, s->E, s->E, 0, nq, "marker e") || in_range(s->mcols, nm, s->W, s->W, 0, INT64_MAX, "marker columns")
        || in_range(s->pt, s->npt, 1, 3, 0, m - 2, "point rows") || in_range(s->pt + 1, s->npt, 2, 3, 0, nm, "point markers")
        || in_range(s->d1, s->nd1, 1, 3, 0, m, "dot1 rows") || in_range(s->d1 + 1, s->nd1, 2, 3, 0, nm, "dot1 markers")
        || in_range(s->d2, s->nd2, 1, 4, 0, m, "dot2 rows") || in_range(s->d2 + 1, s->nd2, 3, 4, 0, nm, "dot2 markers")
        || in_range(s->ds, s->nds, 1, 3, 0, m, "dist rows") || in_range(s->ds + 1, s->nds, 2, 3, 0, nm, "dist markers")
        || in_range(s->ang, s->nang, 1, 4, 0, m, "angle rows") || in_range(s->ang + 1, s->nang, 3, 4, 0, nm, "angle markers")
        || in_range(s->ld_i, s->nl, 1, 4, 0, N_LOAD_KINDS, "load kinds") || in_range(s->ld_i + 1, s->nl, 1, 4, 0, n - 2, "load offsets")
        || in_range(s->ld_i + 2, s->nl, 1, 4, 0, 2, "load frames") || in_range(s->ld_i + 3, s->nl, 1, 4, 0, s->nvec > 0 ? s->nvec : 1, "load vectors"))
        return -1;
    return 0;
}

/* a flexible body's sizes and index arrays (checked as it is read, before its CSR arrays are taken) */
static int check_flex_sizes(const Sys *s, const Flex *f)
{
    if (f->ne < 0 || f->nel < 0 || f->k < 0 || f->nB < 0 || f->nkg < 0 || f->off < 0 || f->off + 7 + f->ne > s->n) {
        PyErr_Format(PyExc_ValueError, "kernel system: flexible ints: offset %d, n_e %d, elements %d x %d DOFs, "
                     "%d geometric stiffnesses, %d mean-axis rows do not fit n = %d coordinates", f->off, f->ne, f->nel,
                     f->k, f->nkg, f->nB, s->n);
        return -1;
    }
    return 0;
}

/* the item type of a packed array from its pointer: float64 for doubles, int64 for indices */
#define KIND(dst) _Generic((dst), const double *: 'f', const i64 *: 'i')

#define TAKE(dst, type, count, what)                                             \
    do {                                                                         \
        dst = (type)take(s, list, i++, (Py_ssize_t)(count), KIND(dst), what);   \
        if (!dst) goto fail;                                                     \
    } while (0)

static PyObject *py_system(PyObject *self, PyObject *args)
{
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
    Sys *s = calloc(1, sizeof(Sys));
    if (!s) return PyErr_NoMemory();
    Py_ssize_t nlist = PyList_GET_SIZE(list);
    s->bufs = calloc((size_t)nlist + 1, sizeof(Py_buffer));
    if (!s->bufs) { free(s); return PyErr_NoMemory(); }
    Py_ssize_t i = 0;
    const i64 *h;
    const double *g;
    TAKE(h, const i64 *, 19, "header");
    if (!header(h, s)) { PyErr_SetString(PyExc_ValueError, "kernel system: bad header"); goto fail; }
    TAKE(g, const double *, 4, "gravity");
    s->g[0] = g[0]; s->g[1] = g[1]; s->g[2] = g[2]; s->has_g = g[3] != 0.0;
    TAKE(s->r_off, const i64 *, s->nr, "rigid offsets");
    TAKE(s->r_real, const double *, 13 * s->nr, "rigid inertia");
    TAKE(s->norm, const i64 *, 2 * s->nnorm, "norm rows");
    TAKE(s->mR, const i64 *, 3 * s->nmark, "marker R");
    TAKE(s->mp, const i64 *, 4 * s->nmark, "marker p");
    TAKE(s->me, const i64 *, s->E * s->nmark, "marker e");
    TAKE(s->mcols, const i64 *, s->W * s->nmark, "marker columns");
    TAKE(s->mpoint, const i64 *, s->nmark, "marker kind");
    TAKE(s->my0, const double *, 3 * s->nmark, "marker y0");
    TAKE(s->mPhi, const double *, 3 * s->E * s->nmark, "marker Phi");
    TAKE(s->pt, const i64 *, 3 * s->npt, "point rows");
    TAKE(s->d1, const i64 *, 3 * s->nd1, "dot1 rows");
    TAKE(s->d2, const i64 *, 4 * s->nd2, "dot2 rows");
    TAKE(s->ds, const i64 *, 3 * s->nds, "dist rows");
    TAKE(s->dsL, const double *, s->nds, "dist lengths");
    TAKE(s->ang, const i64 *, 4 * s->nang, "angle rows");
    s->flex = calloc((size_t)s->nf + 1, sizeof(Flex));
    if (!s->flex) { PyErr_NoMemory(); goto fail; }
    size_t fw = 1;
    for (int b = 0; b < s->nf; b++) {
        Flex *f = &s->flex[b];
        const i64 *fi;
        const double *fr;
        TAKE(fi, const i64 *, 9, "flexible ints");
        f->off = (int)fi[0]; f->ne = (int)fi[1]; f->nel = (int)fi[2]; f->k = (int)fi[3];
        f->damped = (int)fi[4]; f->axial = (int)fi[5]; f->nkg = (int)fi[6]; f->nB = (int)fi[7]; f->Brow = (int)fi[8];
        if (check_flex_sizes(s, f) < 0) goto fail;
        if (f->k > 64) { PyErr_SetString(PyExc_ValueError, "kernel system: more than 64 DOFs per element"); goto fail; }
        if (f->nkg > 12) { PyErr_SetString(PyExc_ValueError, "kernel system: more than 12 unit geometric stiffnesses"); goto fail; }
        if (f->nB && (f->Brow < 0 || f->Brow + f->nB > s->m)) { PyErr_SetString(PyExc_ValueError, "kernel system: mean-axis rows out of range"); goto fail; }
        TAKE(fr, const double *, 14, "flexible reals");
        f->mass = fr[0];
        memcpy(f->s, fr + 1, 3 * sizeof(double));
        memcpy(f->J, fr + 4, 9 * sizeof(double));
        f->EA = fr[13];
        int ne = f->ne;
        TAKE(f->mO, const double *, 3 * ne, "m_O");
        TAKE(f->d, const double *, 9 * ne, "d");
        TAKE(f->Sp, const i64 *, 9 * ne + 1, "S row pointers");
        TAKE(f->Sj, const i64 *, f->Sp[9 * ne], "S columns");
        if (csr_valid(f->Sp, f->Sj, 9 * (Py_ssize_t)ne, ne, "S") < 0) goto fail;
        TAKE(f->S, const double *, f->Sp[9 * ne], "S values");
        TAKE(f->Mdd, const double *, ne * ne, "[m]");
        TAKE(f->Kdd, const double *, ne * ne, "[k]");
        TAKE(f->Cdd, const double *, f->damped ? ne * ne : 0, "damping");
        TAKE(f->L, const double *, f->nel, "element lengths");
        TAKE(f->a, const double *, f->nel * f->k, "axial rows");
        TAKE(f->G, const double *, f->nel * f->k * f->k, "unit geometric stiffness");
        TAKE(f->idx, const i64 *, f->nel * f->k, "element DOFs");
        TAKE(f->kg_key, const i64 *, f->nkg, "geometric stiffness keys");
        TAKE(f->Kp, const i64 *, f->nkg ? (Py_ssize_t)f->nkg * ne + 1 : 0, "K_g row pointers");
        TAKE(f->Kj, const i64 *, f->nkg ? f->Kp[(size_t)f->nkg * ne] : 0, "K_g columns");
        if (f->nkg && csr_valid(f->Kp, f->Kj, (Py_ssize_t)f->nkg * ne, ne, "K_g") < 0) goto fail;
        TAKE(f->Kv, const double *, f->nkg ? f->Kp[(size_t)f->nkg * ne] : 0, "K_g values");
        TAKE(f->B, const double *, (Py_ssize_t)f->nB * ne, "mean-axis rows");
        if (in_range(f->idx, (Py_ssize_t)f->nel * f->k, 1, 1, 0, INT64_MAX, "element DOFs") < 0) goto fail;   /* >= ne: a fixed DOF, skipped */
        for (int z = 0; z < f->nkg; z++)
            if (f->kg_key[z] < 0 || f->kg_key[z] > 11) { PyErr_SetString(PyExc_ValueError, "kernel system: bad geometric stiffness key"); goto fail; }
        if ((size_t)(28 * ne + 8) > fw) fw = 28 * (size_t)ne + 8;
    }
    TAKE(s->ld_i, const i64 *, 4 * s->nl, "load kinds");
    TAKE(s->ld_r, const double *, 9 * s->nl, "load data");
    if (check_indices(s) < 0) goto fail;
    for (int k = 0; k < s->nl; k++)        /* a load on a RigidBodyEP needs 7 coordinates from its offset */
        if (s->ld_i[4 * k] < LOAD_TORQUE_2D && s->ld_i[4 * k + 1] > s->n - 7) {
            PyErr_Format(PyExc_ValueError, "kernel system: load %d on a RigidBodyEP at coordinate %lld of %d", k,
                         (long long)s->ld_i[4 * k + 1], s->n);
            goto fail;
        }
    s->nblk = s->nr + s->nf;
    s->blk = calloc(2 * (size_t)s->nblk + 2, sizeof(int));
    if (!s->blk) { PyErr_NoMemory(); goto fail; }
    for (int b = 0; b < s->nr; b++) { s->blk[2 * b] = (int)s->r_off[b]; s->blk[2 * b + 1] = 7; }
    for (int b = 0; b < s->nf; b++) { s->blk[2 * (s->nr + b)] = s->flex[b].off; s->blk[2 * (s->nr + b) + 1] = 7 + s->flex[b].ne; }
    s->lo = calloc((size_t)s->m + 1, sizeof(int));
    s->hi = calloc((size_t)s->m + 1, sizeof(int));
    if (!s->lo || !s->hi) { PyErr_NoMemory(); goto fail; }
    s->qe = calloc((size_t)s->n + TAIL, sizeof(double));
    s->mr = calloc(3 * (size_t)s->nmark + 1, sizeof(double));
    s->mJ = calloc(3 * (size_t)s->W * s->nmark + 1, sizeof(double));
    s->fw = calloc(fw, sizeof(double));
    if (!s->qe || !s->mr || !s->mJ || !s->fw) { PyErr_NoMemory(); goto fail; }
    s->qe[s->n + 3] = 1.0;                            /* the ground's Euler parameters */
    if (planar_parse(s, list, i) < 0) goto fail;
    return PyCapsule_New(s, CAPSULE, capsule_destructor);
fail:
    sys_free(s);
    return NULL;
}

static Sys *get_sys(PyObject *cap)
{
    return (Sys *)PyCapsule_GetPointer(cap, CAPSULE);
}

/* writable float64 buffer of at least count items */
static double *wbuf(PyObject *obj, Py_buffer *b, Py_ssize_t count, const char *what)
{
    if (get_array(obj, b, 1, 'f', count, "kernel evaluate", what) < 0) return NULL;
    return (double *)b->buf;
}

/* evaluate(system, q, v, law, M, Q, C, Cq, D, K): the system's arrays at (q, v) (tests, checks) */
static PyObject *py_evaluate(PyObject *self, PyObject *args)
{
    PyObject *cap, *o[9];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOO", &cap, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6], &o[7], &o[8]))
        return NULL;
    Sys *s = get_sys(cap);
    if (!s) return NULL;
    int n = s->n, m = s->m;
    Py_ssize_t cnt[9] = {n, n, s->tw, (Py_ssize_t)n * n, n, m, (Py_ssize_t)m * n, (Py_ssize_t)n * n, (Py_ssize_t)n * n};
    const char *names[9] = {"q", "v", "law", "M", "Q", "C", "Cq", "D", "K"};
    Py_buffer b[9];
    double *p[9];
    int got = 0;
    for (; got < 9; got++) {
        p[got] = wbuf(o[got], &b[got], cnt[got] ? cnt[got] : 0, names[got]);
        if (!p[got]) break;
    }
    if (got == 9) {
        bodies(s, p[0], p[1], p[2], p[3], p[4]);
        constraints(s, p[0], p[2], p[5], p[6]);
        dqv_dv(s, p[0], p[1], p[7]);
        elastic_stiffness(s, p[0], p[1], p[8]);
    }
    for (int i = 0; i < got; i++) PyBuffer_Release(&b[i]);
    if (got < 9) return NULL;
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------------------------ */
/* the sensors of digital controllers (flexmbs/control.py), read at a sample from (q, v)        */

enum { S_ANGLE = 0, S_RATE = 1, S_POSITION = 2, S_VELOCITY = 3, S_OMEGA = 4, N_SENSOR_KINDS = 5 };
#define SENSOR_INTS 4                   /* kind, first coordinate of body i, of body j (-1: the ground), output index */
#define SENSOR_REALS 9                  /* body-fixed vectors (flexmbs.control's sensors say which) */

/* A and omega = 2 E(p) p' (global) of the RigidBodyEP at coordinate o; the ground (o < 0): I and 0 */
static void frame_at(const double *q, const double *v, i64 o, double *A, double *w)
{
    if (o < 0) {
        static const double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        memcpy(A, I, sizeof I);
        w[0] = w[1] = w[2] = 0.0;
        return;
    }
    double E[12];
    ep_A(q + o + 3, A);
    ep_E(q + o + 3, E);
    mv34(E, v + o + 3, w);
    for (int a = 0; a < 3; a++) w[a] *= 2.0;
}

/* the sensed values of the ns sensors at (q, v) into out (control.py: joint_angle, joint_rate, body_position,
   body_velocity, body_angular_velocity of RigidBodyEP bodies and the ground):
     angle     atan2(x_j . y_i, x_j . x_i),  x_j = A_j r[6:9], (x, y)_i = A_i r[0:3], A_i r[3:6]  (not unwrapped)
     rate      (omega_j - omega_i) . A_i r[0:3]
     position  R + A s,  velocity  R' + d(A s)/dp p',  omega  2 E(p) p'            (s = r[0:3]) */
static void sense(const i64 *si, const double *sr, int ns, const double *q, const double *v, double *out)
{
    for (int k = 0; k < ns; k++) {
        const i64 *x = si + SENSOR_INTS * k;
        const double *r = sr + SENSOR_REALS * k;
        double *y = out + x[3];
        double Ai[9], wi[3], Aj[9], wj[3], a[3], b[3], c[3];
        frame_at(q, v, x[1], Ai, wi);
        switch ((int)x[0]) {
        case S_ANGLE:
            frame_at(q, v, x[2], Aj, wj);
            mv3(Aj, r + 6, c);
            mv3(Ai, r, a);
            mv3(Ai, r + 3, b);
            y[0] = atan2(dot3(c, b), dot3(c, a));
            break;
        case S_RATE:
            frame_at(q, v, x[2], Aj, wj);
            mv3(Ai, r, a);
            for (int d = 0; d < 3; d++) c[d] = wj[d] - wi[d];
            y[0] = dot3(c, a);
            break;
        case S_POSITION:
            mv3(Ai, r, a);
            for (int d = 0; d < 3; d++) y[d] = q[x[1] + d] + a[d];
            break;
        case S_VELOCITY: {
            double VJ[12];
            ep_VJ(q + x[1] + 3, r, VJ);
            mv34(VJ, v + x[1] + 3, a);
            for (int d = 0; d < 3; d++) y[d] = v[x[1] + d] + a[d];
            break;
        }
        default:
            for (int d = 0; d < 3; d++) y[d] = wi[d];
        }
    }
}

/* ValueError unless every sensor's kind is known, its bodies' coordinates lie in q (a RigidBodyEP: 7 of
   them; the ground: -1; positions, velocities and angular velocities need a body) and its output in out */
static int check_sensors(const i64 *si, int ns, int n, Py_ssize_t n_out)
{
    static const int width[N_SENSOR_KINDS] = {1, 1, 3, 3, 3};
    for (int k = 0; k < ns; k++) {
        const i64 *x = si + SENSOR_INTS * k;
        int two = x[0] == S_ANGLE || x[0] == S_RATE;
        if (x[0] < 0 || x[0] >= N_SENSOR_KINDS || x[1] < (two ? -1 : 0) || x[1] > n - 7
            || (two && (x[2] < -1 || x[2] > n - 7)) || x[3] < 0 || x[3] + width[x[0]] > n_out) {
            PyErr_Format(PyExc_ValueError, "kernel steps: sensor %d (kind %lld, coordinates %lld, %lld, output %lld) "
                         "does not fit %d coordinates and %zd sensed values", k, (long long)x[0], (long long)x[1],
                         (long long)x[2], (long long)x[3], n, n_out);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* the index-3 generalized-alpha steps (Index3GeneralizedAlpha._step_impl, step for step)      */

enum { OK = 0, NEWTON = 1, NONFINITE_RESIDUAL = 2, DIVERGED = 3, NONFINITE_STATE = 4, STOPPED = 5 };

typedef struct {
    double am, af, gamma, beta, tol, rate, reg, limit, near, keep;
    int max_iter, fd, refactor;        /* refactor: 0 on slow contraction, 1 every step, 2 by the last rate */
} Params;

typedef struct {          /* the integrator's state kept between calls (arrays owned by Python) */
    double *q, *v, *a, *qdd, *lam;
    double *S, *Kt, *Ct, *Kt_rest, *Ct_rest, *dwork;   /* dwork: lu_h, then scratch */
    i64 *flags;           /* has_lu, has_KC, has_elastic; counters: n_rhs, n_jac, n_lu, n_newton */
    int *piv;
} State;

static int all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static double max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (a > m || a != a) m = a;
    }
    return m;
}

/* the contraction rate of a converged step (index3_alpha.converged_rate): |dq_k| / |dq_(k-1)|, or, when
   the last correction is negligible (it meets the tolerance by itself: round-off), that of the two
   before it; 0 without two before it (d_prev, d_prev2 < 0: no such correction) */
static double converged_rate(double d_norm, double d_prev, double d_prev2, int negligible)
{
    if (d_prev < 0.0) return 0.0;
    if (!negligible) return d_norm / fmax(d_prev, 1e-300);
    return d_prev2 < 0.0 ? 0.0 : d_prev / fmax(d_prev2, 1e-300);
}

/* K_t, C_t by forward differences at (q, v, qdd, lam) (Index3GeneralizedAlpha._tangents) */
static void tangents(Sys *s, State *st, const double *law, const double *q, const double *v, const double *qdd,
                     const double *lam, double *M, double *Q, double *C, double *Cq, double *g0, double *g1,
                     double *qq)
{
    int n = s->n, m = s->m;
#define GFUN(qv, out)                                                       \
    do {                                                                    \
        bodies(s, qv, v, law, M, Q);                                        \
        mass_times(s, M, qdd, out);                                         \
        for (int i_ = 0; i_ < n; i_++) out[i_] -= Q[i_];                    \
        if (m) {                                                            \
            constraints(s, qv, law, C, Cq);                                 \
            for (int r_ = 0; r_ < m; r_++) {                                \
                const double *Cr_ = Cq + (size_t)r_ * n;                    \
                for (int j_ = s->lo[r_]; j_ < s->hi[r_]; j_++) out[j_] += Cr_[j_] * lam[r_]; \
            }                                                               \
        }                                                                   \
    } while (0)
    GFUN(q, g0);
    memcpy(qq, q, n * sizeof(double));
    for (int j = 0; j < n; j++) {
        double dj = 1.5e-8 * fmax(1.0, fabs(q[j]));
        qq[j] = q[j] + dj;
        GFUN(qq, g1);
        for (int i = 0; i < n; i++) st->Kt[(size_t)i * n + j] = (g1[i] - g0[i]) / dj;
        qq[j] = q[j];
    }
#undef GFUN
    bodies(s, q, v, law, NULL, g0);
    memcpy(qq, v, n * sizeof(double));
    for (int j = 0; j < n; j++) {
        double dj = 1.5e-8 * fmax(1.0, fabs(v[j]));
        qq[j] = v[j] + dj;
        bodies(s, q, qq, law, NULL, g1);
        for (int i = 0; i < n; i++) st->Ct[(size_t)i * n + j] = -(g1[i] - g0[i]) / dj;
        qq[j] = v[j];
    }
    st->flags[3] += 2 * n + 1;
}

/* scratch layout (doubles): M n^2, Cq m n, D n^2, K n^2, Q n, C m, r N, d N, q1 n, v1 n, a1 n, qdd1 n,
   q_hat n, v_hat n, g0 n, g1 n, qq n, mu m */
static PyObject *py_steps(PyObject *self, PyObject *args)
{
    PyObject *cap, *po, *pstate[11], *psched[3], *pout[5], *pctl[7];
    /* system, params (double[9]), int params (i64[3]), state: q, v, a, qdd, lam, S, Kt, Ct, Kt_rest, Ct_rest,
       dwork, flags, piv; schedule: times, hs, laws; outputs: t_out, x_out, lam_out, x_old, info; control:
       sample_at (i64[k]: 1 after the steps that end at a sample time), sample (a callable sample(step) -> bool,
       or None), held (f64[3 nvec]), held_mask (i64[nvec]), sensor ints (i64[4 ns]), sensor reals (f64[9 ns]),
       sensed (f64, written) */
    PyObject *pint, *pflags, *ppiv;
    if (!PyArg_ParseTuple(args, "OOO(OOOOOOOOOOO)OO(OOO)(OOOOO)(OOOOOOO)", &cap, &po, &pint,
                          &pstate[0], &pstate[1], &pstate[2], &pstate[3], &pstate[4], &pstate[5], &pstate[6],
                          &pstate[7], &pstate[8], &pstate[9], &pstate[10], &pflags, &ppiv,
                          &psched[0], &psched[1], &psched[2], &pout[0], &pout[1], &pout[2], &pout[3], &pout[4],
                          &pctl[0], &pctl[1], &pctl[2], &pctl[3], &pctl[4], &pctl[5], &pctl[6]))
        return NULL;
    Sys *s = get_sys(cap);
    if (!s) return NULL;
    int n = s->n, m = s->m, N = n + m;
    Py_buffer bufs[32];
    int nb = 0;
    PyObject *result = NULL;
#define GET(ptr, type, obj, count, name, kind)                                                      \
    do {                                                                                            \
        if (get_array(obj, &bufs[nb], 1, kind, (Py_ssize_t)(count), "kernel steps", name) < 0) goto done; \
        nb++;                                                                                       \
        ptr = (type)bufs[nb - 1].buf;                                                               \
    } while (0)
    double *pr;
    i64 *pi;
    State st;
    double *times, *hs, *laws, *t_out, *x_out, *lam_out, *x_old;
    i64 *info;
    GET(pr, double *, po, 10, "params", 'f');
    GET(pi, i64 *, pint, 3, "int params", 'i');
    GET(st.q, double *, pstate[0], n, "q", 'f');
    GET(st.v, double *, pstate[1], n, "v", 'f');
    GET(st.a, double *, pstate[2], n, "a", 'f');
    GET(st.qdd, double *, pstate[3], n, "qdd", 'f');
    GET(st.lam, double *, pstate[4], m, "lam", 'f');
    GET(st.S, double *, pstate[5], (size_t)N * N, "S", 'f');
    GET(st.Kt, double *, pstate[6], (size_t)n * n, "Kt", 'f');
    GET(st.Ct, double *, pstate[7], (size_t)n * n, "Ct", 'f');
    GET(st.Kt_rest, double *, pstate[8], (size_t)n * n, "Kt_rest", 'f');
    GET(st.Ct_rest, double *, pstate[9], (size_t)n * n, "Ct_rest", 'f');
    size_t scratch = 3 * (size_t)n * n + (size_t)m * n + 11 * (size_t)n + 3 * (size_t)m + 2 * (size_t)N + 8
                     + (size_t)N * N;
    GET(st.dwork, double *, pstate[10], scratch + 2, "dwork", 'f');
    GET(st.flags, i64 *, pflags, 8, "flags", 'i');
    GET(st.piv, int *, ppiv, 3 * N, "piv", 'j');
    Py_ssize_t k_steps = PyObject_Length(psched[0]);
    if (k_steps < 0) goto done;
    GET(times, double *, psched[0], k_steps, "times", 'f');
    GET(hs, double *, psched[1], k_steps, "hs", 'f');
    GET(laws, double *, psched[2], (size_t)k_steps * s->tw, "laws", 'f');
    Py_ssize_t n_te = PyObject_Length(pout[0]);
    if (n_te < 0) goto done;
    GET(t_out, double *, pout[0], n_te, "t_out", 'f');
    GET(x_out, double *, pout[1], (size_t)n_te * 2 * n, "x_out", 'f');
    GET(lam_out, double *, pout[2], (size_t)n_te * m, "lam_out", 'f');
    GET(x_old, double *, pout[3], 4 * (size_t)n + 1, "x_old", 'f');
    GET(info, i64 *, pout[4], 4, "info", 'i');
    i64 *sample_at = NULL, *held_mask = NULL, *sens_i = NULL;
    double *held = NULL, *sens_r = NULL, *sensed = NULL;
    PyObject *sample = pctl[1] == Py_None ? NULL : pctl[1];
    int ns = 0;
    if (sample) {
        if (!PyCallable_Check(sample)) {
            PyErr_SetString(PyExc_TypeError, "kernel steps: the control's sample must be callable or None");
            goto done;
        }
        GET(sample_at, i64 *, pctl[0], k_steps, "sample_at", 'i');
        GET(held, double *, pctl[2], 3 * (size_t)s->nvec, "held", 'f');
        GET(held_mask, i64 *, pctl[3], s->nvec, "held_mask", 'i');
        Py_ssize_t n_si = PyObject_Length(pctl[4]), n_sensed = PyObject_Length(pctl[6]);
        if (n_si < 0 || n_sensed < 0) goto done;
        ns = (int)(n_si / SENSOR_INTS);
        GET(sens_i, i64 *, pctl[4], SENSOR_INTS * (size_t)ns, "sensor ints", 'i');
        GET(sens_r, double *, pctl[5], SENSOR_REALS * (size_t)ns, "sensor reals", 'f');
        GET(sensed, double *, pctl[6], n_sensed, "sensed", 'f');
        if (check_sensors(sens_i, ns, n, n_sensed) < 0) goto done;
    }
    if (pi[0] < 1 || pi[1] < 0 || pi[1] > 1 || pi[2] < 0 || pi[2] > 2) {
        PyErr_Format(PyExc_ValueError, "kernel steps: int params (max_iter >= 1, fd 0 or 1, refactor 0..2) got "
                     "%lld, %lld, %lld", (long long)pi[0], (long long)pi[1], (long long)pi[2]);
        goto done;
    }
    if (info[1] < 0 || info[1] > n_te) {
        PyErr_Format(PyExc_ValueError, "kernel steps: info[1] (the first output index) is %lld, outside [0, %zd]",
                     (long long)info[1], n_te);
        goto done;
    }
    if (st.flags[0]) {                 /* a kept LU: its pivots and column ranges index rows and columns of N */
        for (int k = 0; k < 3 * N; k++)
            if (st.piv[k] < 0 || st.piv[k] > N || (k < N && st.piv[k] == N)) {
                PyErr_Format(PyExc_ValueError, "kernel steps: piv[%d] = %d is outside the %d rows of the kept LU",
                             k, st.piv[k], N);
                goto done;
            }
    }
#undef GET
    {
        Params P = {pr[0], pr[1], pr[2], pr[3], pr[4], pr[5], pr[6], pr[7], pr[8], pr[9],
                    (int)pi[0], (int)pi[1], (int)pi[2]};
        double *w = st.dwork + 2, *lu_h = st.dwork, *theta = st.dwork + 1;
        double *M = w; w += (size_t)n * n;
        double *Cq = w; w += (size_t)m * n;
        double *D = w; w += (size_t)n * n;
        double *K = w; w += (size_t)n * n;
        double *Q = w; w += n;
        double *C = w; w += m;
        double *r = w; w += N;
        double *d = w; w += N;
        double *q1 = w; w += n;
        double *v1 = w; w += n;
        double *a1 = w; w += n;
        double *qdd1 = w; w += n;
        double *q_hat = w; w += n;
        double *v_hat = w; w += n;
        double *g0 = w; w += n;
        double *g1 = w; w += n;
        double *qq = w; w += n;
        double *mu = w; w += m;
        double *lamb = w; w += m;
        double *LUt = w; w += (size_t)N * N;
        double am = P.am, af = P.af, gamma = P.gamma, beta = P.beta;
        int status = OK;
        Py_ssize_t i_out = info[1], done = 0;
        double d_norm = 0.0;
        int has_elastic = (int)st.flags[2];
        s->held = held;                    /* the held load vectors of this call (NULL: the time rows') */
        s->held_mask = held_mask;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t step = 0; step < k_steps; step++) {
            double t1 = times[step], h = hs[step];
            const double *law = laws + (size_t)step * s->tw;
            double bp = (1 - am) / (h * h * beta * (1 - af)), gp = gamma / (h * beta);
            double t0 = step ? times[step - 1] : x_old[4 * n];
            for (int i = 0; i < n; i++) {
                q_hat[i] = st.q[i] + h * st.v[i] + h * h * (0.5 - beta) * st.a[i];
                v_hat[i] = st.v[i] + h * (1 - gamma) * st.a[i];
            }
            double qdd0_max = max_abs(st.qdd, n);
            if (st.flags[0] && (*lu_h != h || P.refactor == 1 || (P.refactor == 2 && *theta > P.keep))) st.flags[0] = 0;
            int new_tangent = 0, converged = 0;
            for (int attempt = 0; attempt < 2 && !converged; attempt++) {
                for (int i = 0; i < n; i++) {
                    double a_s = (st.qdd[i] - am * st.a[i]) / (1 - am);
                    q1[i] = q_hat[i] + h * h * beta * a_s;
                }
                for (int i = 0; i < m; i++) mu[i] = st.lam[i] / bp;
                double d_prev = -1.0, d_prev2 = -1.0;
                int fresh = 0;                   /* the matrix was built in this attempt */
                for (int it = 0; it < P.max_iter; it++) {
                    for (int i = 0; i < n; i++) {
                        a1[i] = (q1[i] - q_hat[i]) / (h * h * beta);
                        v1[i] = v_hat[i] + h * gamma * a1[i];
                        qdd1[i] = ((1 - am) * a1[i] + am * st.a[i] - af * st.qdd[i]) / (1 - af);
                    }
                    bodies(s, q1, v1, law, M, Q);
                    st.flags[3]++;
                    double mq_max = 0.0, q_max = 0.0, react_max = 0.0, M_max = 0.0;
                    mass_times(s, M, qdd1, r);
                    for (int i = 0; i < n; i++) {
                        double acc = r[i];
                        if (fabs(acc) > mq_max) mq_max = fabs(acc);
                        if (fabs(Q[i]) > q_max) q_max = fabs(Q[i]);
                        r[i] = (acc - Q[i]) / bp;
                    }
                    if (m) {
                        constraints(s, q1, law, C, Cq);
                        for (int j = 0; j < n; j++) d[j] = 0.0;
                        for (int rr = 0; rr < m; rr++) {
                            const double *Cr = Cq + (size_t)rr * n;
                            for (int j = s->lo[rr]; j < s->hi[rr]; j++) d[j] += Cr[j] * mu[rr];
                        }
                        for (int j = 0; j < n; j++) {
                            if (fabs(d[j]) > react_max) react_max = fabs(d[j]);
                            r[j] += d[j];
                        }
                        for (int rr = 0; rr < m; rr++) r[n + rr] = C[rr];
                    }
                    if (!all_finite(r, N)) { status = NONFINITE_RESIDUAL; goto stop; }
                    if (d_prev2 >= 0.0 && d_prev > 0.5 * d_prev2) {
                        double q_scale = fmax(1.0, max_abs(q1, n));
                        M_max = max_abs(M, n * n);
                        double r_scale = fmax(fmax(mq_max / bp, q_max / bp), fmax(react_max, M_max * q_scale));
                        if (max_abs(r, n) <= ROUND_OFF * r_scale && (m == 0 || max_abs(r + n, m) <= ROUND_OFF * q_scale)) {
                            converged = 1;
                            *theta = d_prev / d_prev2;
                            break;
                        }
                    }
                    if (!st.flags[0]) {
                        /* _factor: S from M, C_q here and the (kept or new) tangents */
                        double *S = st.S;
                        for (int i = 0; i < n; i++)
                            for (int j = 0; j < n; j++) S[(size_t)i * N + j] = M[(size_t)i * n + j];
                        if (P.fd) {
                            if (new_tangent || !st.flags[1]) {
                                for (int i = 0; i < m; i++) lamb[i] = mu[i] * bp;
                                tangents(s, &st, law, q1, v1, qdd1, lamb, M, Q, C, Cq, g0, g1, qq);
                                st.flags[4]++;
                                dqv_dv(s, q1, v1, D);
                                for (size_t x = 0; x < (size_t)n * n; x++) st.Ct_rest[x] = st.Ct[x] + D[x];
                                if (has_elastic) {
                                    elastic_stiffness(s, q1, v1, K);
                                    for (size_t x = 0; x < (size_t)n * n; x++) st.Kt_rest[x] = st.Kt[x] - K[x];
                                }
                                st.flags[1] = 1;
                                /* M, C_q were overwritten by the differences: evaluate them again here */
                                bodies(s, q1, v1, law, M, NULL);
                                if (m) constraints(s, q1, law, C, Cq);
                                for (int i = 0; i < n; i++)
                                    for (int j = 0; j < n; j++)
                                        S[(size_t)i * N + j] = M[(size_t)i * n + j] + st.Kt[(size_t)i * n + j] / bp + (gp / bp) * st.Ct[(size_t)i * n + j];
                            } else {
                                dqv_dv(s, q1, v1, D);
                                if (has_elastic) elastic_stiffness(s, q1, v1, K);
                                for (int i = 0; i < n; i++)
                                    for (int j = 0; j < n; j++) {
                                        size_t x = (size_t)i * n + j;
                                        double ct = st.Ct_rest[x] - D[x];
                                        double kt = has_elastic ? st.Kt_rest[x] + K[x] : st.Kt[x];
                                        S[(size_t)i * N + j] += kt / bp + (gp / bp) * ct;
                                    }
                            }
                        }
                        if (m) {
                            for (int rr = 0; rr < m; rr++)
                                for (int j = 0; j < n; j++) {
                                    S[(size_t)j * N + n + rr] = Cq[(size_t)rr * n + j];
                                    S[(size_t)(n + rr) * N + j] = Cq[(size_t)rr * n + j];
                                }
                            double eps = 0.0;
                            if (P.reg > 0) {
                                double mdiag = 0.0, crow = 0.0;
                                for (int i = 0; i < n; i++) mdiag += fabs(M[(size_t)i * n + i]);
                                mdiag = fmax(mdiag / n, 1e-300);
                                for (size_t x = 0; x < (size_t)m * n; x++) crow += Cq[x] * Cq[x];
                                eps = P.reg * fmax(crow / m / mdiag, 1e-300);
                            }
                            for (int rr = 0; rr < m; rr++)
                                for (int c2 = 0; c2 < m; c2++) S[(size_t)(n + rr) * N + n + c2] = rr == c2 ? -eps : 0.0;
                        }
                        lu_factor(st.S, N, st.piv, st.piv + N);
                        transpose(st.S, N, LUt);
                        column_ranges(LUt, N, st.piv + N, st.piv + 2 * N);
                        *lu_h = h;
                        st.flags[0] = 1;
                        st.flags[5]++;
                        new_tangent = 0;
                        fresh = 1;
                    }
                    for (int i = 0; i < N; i++) d[i] = -r[i];
                    lu_solve(LUt, N, st.piv, st.piv + N, st.piv + 2 * N, d);
                    st.flags[6]++;
                    for (int i = 0; i < n; i++) q1[i] += d[i];
                    for (int i = 0; i < m; i++) mu[i] += d[n + i];
                    d_norm = max_abs(d, n);
                    if (!isfinite(d_norm)) break;
                    double a_scale = fmax(fmax(max_abs(qdd1, n), qdd0_max), 1e-300);
                    double q_scale = fmax(1.0, max_abs(q1, n));
                    int stalled = d_prev >= 0.0 && d_norm > 0.5 * d_prev && d_norm <= STALL * q_scale;
                    double err = d_norm;            /* a kept matrix: |d| itself (index3_alpha.py) */
                    if (fresh && d_prev >= 0.0 && d_norm < d_prev) {
                        double theta = d_norm / d_prev;
                        err = theta / (1.0 - theta) * d_norm;
                    }
                    int negligible = bp * d_norm <= P.tol * a_scale || d_norm <= 16 * EPS * q_scale;
                    if (bp * err <= P.tol * a_scale || negligible || stalled) {
                        converged = 1;
                        *theta = converged_rate(d_norm, d_prev, d_prev2, negligible);
                        break;
                    }
                    if (d_prev >= 0.0 && d_norm > P.rate * d_prev) {
                        st.flags[0] = 0;
                        new_tangent = fresh;
                    }
                    d_prev2 = d_prev;
                    d_prev = d_norm;
                }
                if (converged) break;
                if (attempt == 1) { status = NEWTON; goto stop; }
                st.flags[0] = 0;
                new_tangent = 1;
            }
            /* accept: the state before the step becomes x_old (for the dense output) */
            for (int i = 0; i < n; i++) {
                a1[i] = (q1[i] - q_hat[i]) / (h * h * beta);
                v1[i] = v_hat[i] + h * gamma * a1[i];
                qdd1[i] = ((1 - am) * a1[i] + am * st.a[i] - af * st.qdd[i]) / (1 - af);
            }
            memcpy(x_old, st.q, n * sizeof(double));
            memcpy(x_old + n, st.v, n * sizeof(double));
            memcpy(x_old + 2 * n, st.v, n * sizeof(double));
            memcpy(x_old + 3 * n, st.qdd, n * sizeof(double));
            x_old[4 * n] = t0;
            memcpy(st.q, q1, n * sizeof(double));
            memcpy(st.v, v1, n * sizeof(double));
            memcpy(st.a, a1, n * sizeof(double));
            memcpy(st.qdd, qdd1, n * sizeof(double));
            /* lamb: the multipliers at t0, for the outputs inside the step */
            for (int i = 0; i < m; i++) { lamb[i] = st.lam[i]; st.lam[i] = mu[i] * bp; }
            done++;
            /* a non-finite or diverging state ends the run before its outputs (Integrator._check_state) */
            if (!all_finite(st.q, n) || !all_finite(st.v, n)) { status = NONFINITE_STATE; break; }
            if (fmax(max_abs(st.q, n), max_abs(st.v, n)) > P.limit) { status = DIVERGED; break; }
            /* outputs in [t0, t1] (simulate's emit): the step point itself, or the cubic Hermite */
            double near = P.near * (t1 - t0);
            while (i_out < n_te && t_out[i_out] <= t1 + near) {
                double te = t_out[i_out], *xo = x_out + (size_t)i_out * 2 * n, *lo = lam_out + (size_t)i_out * m;
                if (fabs(te - t1) <= near || te == t1) {
                    memcpy(xo, st.q, n * sizeof(double));
                    memcpy(xo + n, st.v, n * sizeof(double));
                    memcpy(lo, st.lam, m * sizeof(double));
                } else if (te == t0) {
                    memcpy(xo, x_old, 2 * (size_t)n * sizeof(double));
                    memcpy(lo, lamb, m * sizeof(double));
                } else {
                    double hh = t1 - t0, sx = (te - t0) / hh;
                    double h00 = (1 + 2 * sx) * (1 - sx) * (1 - sx), h10 = sx * (1 - sx) * (1 - sx);
                    double h01 = sx * sx * (3 - 2 * sx), h11 = sx * sx * (sx - 1);
                    for (int i = 0; i < n; i++) {
                        xo[i] = h00 * x_old[i] + h01 * st.q[i] + hh * (h10 * x_old[2 * n + i] + h11 * st.v[i]);
                        xo[n + i] = h00 * x_old[n + i] + h01 * st.v[i] + hh * (h10 * x_old[3 * n + i] + h11 * st.qdd[i]);
                    }
                    /* the multipliers between step points: linear in t (Index3GeneralizedAlpha.dense_multipliers) */
                    for (int i = 0; i < m; i++) lo[i] = (1 - sx) * lamb[i] + sx * st.lam[i];
                }
                i_out++;
            }
            /* a controller's sample at t1: its sensors here, then its law in Python (it writes held) */
            if (sample && sample_at[step]) {
                if (ns) sense(sens_i, sens_r, ns, st.q, st.v, sensed);
                Py_BLOCK_THREADS
                PyObject *go = PyObject_CallFunction(sample, "n", step);
                int more = go ? PyObject_IsTrue(go) : -1;
                Py_XDECREF(go);
                Py_UNBLOCK_THREADS
                if (more != 1) { status = STOPPED; break; }
            }
        }
    stop:
        Py_END_ALLOW_THREADS
        s->held = NULL;
        s->held_mask = NULL;
        info[0] = done;
        info[1] = i_out;
        info[2] = status;
        if (status == NONFINITE_RESIDUAL) {
            /* the state the numpy path takes in this case: q1 with non-finite velocities */
            memcpy(x_old, q1, n * sizeof(double));
            memcpy(x_old + n, v1, n * sizeof(double));
        }
        /* a sample that raised (the Python side catches the law's errors): its exception, after the steps */
        result = PyErr_Occurred() ? NULL : PyFloat_FromDouble(d_norm);
    }
done:
    for (int i = 0; i < nb; i++) PyBuffer_Release(&bufs[i]);
    return result;
}

static PyMethodDef methods[] = {
    {"system", py_system, METH_VARARGS, "system(arrays) -> capsule: a packed flexmbs System (flexmbs.compiled)."},
    {"evaluate", py_evaluate, METH_VARARGS,
     "evaluate(system, q, v, law, M, Q, C, Cq, D, K): M, Q, C, C_q, dQ_v/dv and K_el at (q, v)."},
    {"steps", py_steps, METH_VARARGS, "steps(...): index-3 generalized-alpha steps (flexmbs.compiled)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_flexmbs_kernel",
                                    "Compiled index-3 steps of flexmbs systems (flexmbs.compiled).", -1, methods};

PyMODINIT_FUNC PyInit__flexmbs_kernel(void)
{
    PyObject *mod = PyModule_Create(&module);
    if (mod && PyModule_AddIntConstant(mod, "VERSION", 3) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}

/* swfgen.c - synthetic SWF workloads after the Lublin-Feitelson model of
 * rigid parallel jobs (U. Lublin, D. G. Feitelson, "The workload on parallel
 * supercomputers: modeling the characteristics of rigid jobs", JPDC 63(11),
 * 2003), with the model's published parameters for the whole sample (batch
 * and interactive jobs together):
 *
 *   size: serial with probability 0.244; otherwise log2(size) is two-stage
 *     uniform: on [0.8, umed] with probability 0.86, else on [umed, uhi],
 *     uhi = log2(nodes), umed = uhi - 2.5; with probability 0.576 (of all
 *     jobs) the log is rounded, so the size is a power of two.
 *   runtime: ln(runtime) is hyper-gamma, gamma(4.2, 0.94) with probability
 *     p = -0.0054 * size + 0.78 (clamped to [0, 1]), else gamma(312, 0.03):
 *     bigger jobs run longer. Draws above 12 (about 45 h) are redrawn.
 *   arrivals: ln(inter-arrival in seconds) is gamma(10.2303 * 1.0225,
 *     0.4871) (draws above 13 redrawn), in "average" time; the daily cycle
 *     turns it into clock time: the day is 48 half-hour slots, slot s gets
 *     the mass of gamma(8.1737, 3.9631) on [k - 0.5, k + 0.5] where
 *     k = s + 1 counted cyclically from 11 (so the quietest slot is near
 *     05:00 and the busiest near 14:00); the weights are scaled to mean 1
 *     and a gap of g average seconds takes as much clock time as it needs
 *     to collect g weighted seconds. Time 0 is midnight.
 *
 * Beyond the model: -l L divides the inter-arrival times by L (L > 1 is
 * more load); the requested time is the user's estimate, the runtime
 * rounded up to the next of 1, 5, 15, 30 min, 1, 2, 4, 8, 16, 24, 48 h (the
 * round values users type), so estimates are exact to 100 % over; user ids
 * (not in the model) follow a Zipf law over 32 users, for fair share.
 *
 *   swfgen [-n nodes] [-j jobs] [-s seed] [-l load] > trace.swf */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SERIAL_PROB 0.244
#define POW2_PROB 0.576
#define U_LOW 0.8
#define U_PROB 0.86
#define RT_A1 4.2
#define RT_B1 0.94
#define RT_A2 312.0
#define RT_B2 0.03
#define RT_PA -0.0054
#define RT_PB 0.78
#define RT_LN_MAX 12.0
#define ARR_A (10.2303 * 1.0225)
#define ARR_B 0.4871
#define ARR_LN_MAX 13.0
#define DAY_A 8.1737
#define DAY_B 3.9631
#define DAY_FROM 11
#define SLOTS 48
#define SLOT_S 1800.0
#define USERS 32

/* ---- xoshiro256** seeded by splitmix64 ----------------------------------- */

struct rng {
    uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static void rng_seed(struct rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rng_next(struct rng *r)
{
    uint64_t *s = r->s, out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* Uniform on (0, 1): never 0, so its logarithm is finite. */
static double uniform(struct rng *r)
{
    return ((double)(rng_next(r) >> 11) + 0.5) * 0x1p-53;
}

static double normal(struct rng *r)
{
    double u, v, s;

    do { /* Marsaglia's polar method, one of the pair */
        u = 2 * uniform(r) - 1;
        v = 2 * uniform(r) - 1;
        s = u * u + v * v;
    } while (s >= 1 || s == 0);
    return u * sqrt(-2 * log(s) / s);
}

/* Gamma(shape a, scale b), Marsaglia and Tsang's squeeze (a >= 1; smaller
 * shapes by the a + 1 boost). */
static double gamma_draw(struct rng *r, double a, double b)
{
    double d, c, x, v, u;

    if (a < 1)
        return gamma_draw(r, a + 1, b) * pow(uniform(r), 1 / a);
    d = a - 1.0 / 3;
    c = 1 / sqrt(9 * d);
    for (;;) {
        do {
            x = normal(r);
            v = 1 + c * x;
        } while (v <= 0);
        v = v * v * v;
        u = uniform(r);
        if (u < 1 - 0.0331 * x * x * x * x ||
            log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            return d * v * b;
    }
}

/* ---- the gamma distribution function (for the daily cycle) --------------- */

/* The regularised lower incomplete gamma P(a, x): its series below a + 1,
 * one minus the continued fraction of Q(a, x) above. */
static double gamma_p(double a, double x)
{
    double front;

    if (x <= 0)
        return 0;
    front = exp(-x + a * log(x) - lgamma(a));
    if (x < a + 1) {
        double term = 1 / a, sum = term;

        for (int n = 1; n < 1000 && fabs(term) > fabs(sum) * 1e-15; n++) {
            term *= x / (a + n);
            sum += term;
        }
        return sum * front;
    }
    double tiny = 1e-300, b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;

    for (int i = 1; i < 1000; i++) {
        double an = -i * (i - a), del;

        b += 2;
        d = an * d + b;
        d = fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15)
            break;
    }
    return 1 - front * h;
}

static double gamma_cdf(double x, double shape, double scale)
{
    return gamma_p(shape, x / scale);
}

/* ---- the model ----------------------------------------------------------- */

struct model {
    int nodes;
    double u_med, u_hi, load;
    double day[SLOTS]; /* arrival weight of each half-hour, mean 1 */
    double now;        /* clock time of the last arrival */
    double zipf[USERS];
};

static void model_init(struct model *m, int nodes, double load)
{
    double sum = 0, z = 0;

    m->nodes = nodes;
    m->load = load;
    m->u_hi = log2(nodes);
    m->u_med = m->u_hi - 2.5 > U_LOW ? m->u_hi - 2.5 : U_LOW;
    for (int s = 0; s < SLOTS; s++) {
        int k = s + 1 >= DAY_FROM ? s + 1 : s + 1 + SLOTS;

        m->day[s] =
            gamma_cdf(k + 0.5, DAY_A, DAY_B) - gamma_cdf(k - 0.5, DAY_A, DAY_B);
        sum += m->day[s];
    }
    for (int s = 0; s < SLOTS; s++)
        m->day[s] *= SLOTS / sum;
    m->now = 0;
    for (int u = 0; u < USERS; u++)
        z += 1.0 / (u + 1);
    for (int u = 0; u < USERS; u++) /* cumulative */
        m->zipf[u] = (u ? m->zipf[u - 1] : 0) + 1.0 / (u + 1) / z;
}

static int job_size(const struct model *m, struct rng *r)
{
    double u = uniform(r), par;
    long size;

    if (u < SERIAL_PROB || m->nodes == 1)
        return 1;
    if (m->u_hi <= U_LOW)
        par = m->u_hi;
    else if (uniform(r) < U_PROB)
        par = U_LOW + uniform(r) * (m->u_med - U_LOW);
    else
        par = m->u_med + uniform(r) * (m->u_hi - m->u_med);
    if (u < SERIAL_PROB + POW2_PROB)
        par = round(par);
    size = lround(exp2(par));
    return size < 1 ? 1 : size > m->nodes ? m->nodes : (int)size;
}

static long job_runtime(struct rng *r, int size)
{
    double p = RT_PA * size + RT_PB, g;

    p = p < 0 ? 0 : p > 1 ? 1 : p;
    do {
        g = uniform(r) < p ? gamma_draw(r, RT_A1, RT_B1)
                           : gamma_draw(r, RT_A2, RT_B2);
    } while (g > RT_LN_MAX);
    return lround(exp(g)) < 1 ? 1 : lround(exp(g));
}

/* Advance the clock by one inter-arrival: gather gap weighted seconds,
 * slot by slot. */
static double next_arrival(struct model *m, struct rng *r)
{
    double g, need;

    do
        g = gamma_draw(r, ARR_A, ARR_B);
    while (g > ARR_LN_MAX);
    need = exp(g) / m->load;
    for (;;) {
        double day_s = fmod(m->now, 86400.0);
        int s = (int)(day_s / SLOT_S) % SLOTS;
        double left = (s + 1) * SLOT_S - day_s, got = left * m->day[s];

        if (got >= need) {
            m->now += need / m->day[s];
            return m->now;
        }
        need -= got;
        m->now += left;
    }
}

static long requested(long run)
{
    static const long round_s[] = {60,    300,   900,   1800,  3600,  7200,
                                   14400, 28800, 57600, 86400, 172800};

    for (size_t i = 0; i < sizeof(round_s) / sizeof(round_s[0]); i++)
        if (run <= round_s[i])
            return round_s[i];
    return run;
}

static int user_of(const struct model *m, struct rng *r)
{
    double u = uniform(r);

    for (int i = 0; i < USERS; i++)
        if (u < m->zipf[i])
            return i + 1;
    return USERS;
}

static void header(const struct model *m, long jobs, uint64_t seed)
{
    printf("; Version: 2.2\n"
           "; Computer: synthetic, %d nodes\n"
           "; Installation: swfgen (Loom tests/bench)\n"
           "; Note: Lublin & Feitelson, JPDC 63(11) 2003, rigid jobs, "
           "whole-sample parameters\n"
           "; Note: size: serial %.3f, power of two %.3f, log2 two-stage "
           "uniform [%.1f, %.2f] p %.2f else [%.2f, %.2f]\n"
           "; Note: runtime: ln ~ hyper-gamma (%.1f, %.2f) p = %.4f*size + "
           "%.2f else (%.0f, %.2f), ln <= %.0f\n"
           "; Note: arrivals: ln gap ~ gamma(%.4f, %.4f), ln <= %.0f, "
           "divided by load %.3f; daily cycle gamma(%.4f, %.4f) over 48 "
           "half-hours from slot %d\n"
           "; Note: requested time: runtime rounded up to 1m 5m 15m 30m 1h "
           "2h 4h 8h 16h 24h 48h; users: Zipf over %d\n"
           "; Note: seed %llu\n"
           "; UnixStartTime: 0\n"
           "; MaxJobs: %ld\n"
           "; MaxRecords: %ld\n"
           "; MaxNodes: %d\n"
           "; MaxProcs: %d\n",
           m->nodes, SERIAL_PROB, POW2_PROB, U_LOW, m->u_med, U_PROB, m->u_med,
           m->u_hi, RT_A1, RT_B1, RT_PA, RT_PB, RT_A2, RT_B2, RT_LN_MAX, ARR_A,
           ARR_B, ARR_LN_MAX, m->load, DAY_A, DAY_B, DAY_FROM, USERS,
           (unsigned long long)seed, jobs, jobs, m->nodes, m->nodes);
}

static int usage(void)
{
    fprintf(stderr, "usage: swfgen [-n nodes] [-j jobs] [-s seed] "
                    "[-l load]\n");
    return 2;
}

static int number(const char *s, double lo, double hi, double *v)
{
    char *end;

    errno = 0;
    *v = strtod(s, &end);
    return end != s && *end == '\0' && errno == 0 && *v >= lo && *v <= hi ? 0
                                                                          : -1;
}

int main(int argc, char **argv)
{
    double nodes = 128, jobs = 1000, seed = 1, load = 1;
    struct model m;
    struct rng r;
    int c;

    while ((c = getopt(argc, argv, "n:j:s:l:")) != -1) {
        if ((c == 'n' && number(optarg, 1, 1 << 24, &nodes) < 0) ||
            (c == 'j' && number(optarg, 0, 1e9, &jobs) < 0) ||
            (c == 's' && number(optarg, 0, 9007199254740992.0, &seed) < 0) ||
            (c == 'l' && number(optarg, 1e-3, 1e3, &load) < 0) || c == '?')
            return usage();
    }
    if (optind != argc)
        return usage();
    model_init(&m, (int)nodes, load);
    rng_seed(&r, (uint64_t)seed);
    header(&m, (long)jobs, (uint64_t)seed);
    for (long i = 1; i <= (long)jobs; i++) {
        double at = floor(next_arrival(&m, &r));
        int size = job_size(&m, &r);
        long run = job_runtime(&r, size);

        printf("%ld %.0f -1 %ld %d -1 -1 %d %ld -1 1 %d 1 -1 -1 -1 -1 -1\n", i,
               at, run, size, size, requested(run), user_of(&m, &r));
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}

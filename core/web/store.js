// store.js - the dashboard's live data: what each view reads, fetched
// once and again only when the event stream says that it changed. No DOM
// here: the benchmark of open dashboards runs this file in Node.
// SPDX-License-Identifier: MIT
import {ApiError} from './api.js';

export class Store {
    constructor(api) {
        this.api = api;
        this.clusters = [];       // GET /v1/clusters, kept current by events
        this.state = null;        // the last state event
        this.live = 'connecting'; // 'live', 'reconnecting', 'stopped'
        this.watches = new Map(); // key -> {source, load, v, data, error, busy, again}
        this.listeners = new Set();
        this.abort = null;
        this.fetches = 0;         // requests made for the watches
    }

    on(fn) {
        this.listeners.add(fn);
        return () => this.listeners.delete(fn);
    }

    emit(what) {
        for (const fn of this.listeners)
            fn(what);
    }

    async start() {
        this.clusters = (await this.api.get('/v1/clusters')).items;
        this.emit('clusters');
        this.connect();
    }

    stop() {
        this.live = 'stopped';
        if (this.abort)
            this.abort.abort();
    }

    // Read the stream; when it ends or fails, read it again after a pause
    // that grows to 30 s. A refused token stops it: the user logs in again.
    async connect() {
        let pause = 1000;
        while (this.live !== 'stopped') {
            this.abort = new AbortController();
            try {
                await this.api.events(doc => {
                    pause = 1000;
                    this.onState(doc);
                }, this.abort.signal);
            } catch (e) {
                if (this.live === 'stopped')
                    return;
                if (e instanceof ApiError && e.status === 401) {
                    this.live = 'stopped';
                    this.emit('auth');
                    return;
                }
            }
            if (this.live === 'stopped')
                return;
            this.live = 'reconnecting';
            this.emit('live');
            await new Promise(r => setTimeout(r, pause));
            pause = Math.min(pause * 2, 30000);
        }
    }

    // The version of a source in a state event: 'jobs', 'reservations',
    // 'maintenance', 'diff', 'nodes:CLUSTER', or 'once' (never changes).
    version(source, doc = this.state) {
        if (!doc || source === 'once')
            return source === 'once' ? 'once' : null;
        if (source.startsWith('nodes:')) {
            const c = doc.clusters.find(x => x.name === source.slice(6));
            return c ? c.nodes_v : null;
        }
        if (source === 'jobs')
            return doc.jobs.v;
        return doc[source];
    }

    onState(doc) {
        const known = new Set(this.clusters.map(c => c.name));
        this.state = doc;
        if (this.live !== 'live') {
            this.live = 'live';
            this.emit('live');
        }
        for (const c of doc.clusters) {
            const mine = this.clusters.find(x => x.name === c.name);
            if (mine)
                Object.assign(mine, {state: c.state, last_poll: c.last_poll,
                                     error: c.error, nodes: c.nodes});
        }
        if (doc.clusters.some(c => !known.has(c.name)))
            this.api.get('/v1/clusters').then(d => {
                this.clusters = d.items;
                this.emit('clusters');
            }).catch(() => {});
        this.emit('state');
        for (const [key, w] of this.watches)
            if (w.v !== this.version(w.source))
                this.refresh(key);
    }

    // Keep data[key] loaded by load() (async, returns the data), again
    // whenever source changes. Returns a function that drops the watch.
    watch(key, source, load) {
        const w = {source, load, v: undefined, data: undefined, error: null,
                   busy: false, again: false};
        this.watches.set(key, w);
        this.refresh(key);
        return () => {
            if (this.watches.get(key) === w)
                this.watches.delete(key);
        };
    }

    data(key) {
        const w = this.watches.get(key);
        return w ? w.data : undefined;
    }

    error(key) {
        const w = this.watches.get(key);
        return w ? w.error : null;
    }

    // Load one watch; a change that comes while it loads loads it again
    // after, so that at most one request per watch is in flight.
    async refresh(key) {
        const w = this.watches.get(key);
        if (!w)
            return;
        if (w.busy) {
            w.again = true;
            return;
        }
        w.busy = true;
        do {
            w.again = false;
            const v = this.version(w.source);
            try {
                this.fetches++;
                w.data = await w.load();
                w.error = null;
                w.v = v;
            } catch (e) {
                w.error = e;
                w.v = v;
                if (e instanceof ApiError && e.status === 401)
                    this.emit('auth');
            }
            if (this.watches.get(key) === w)
                this.emit(key);
        } while (w.again && this.watches.get(key) === w);
        w.busy = false;
    }
}

// What each view reads: the views call these, and so does the benchmark
// of open dashboards (tests/bench/web.sh), so that it loads loomd as the
// dashboards do. Each returns a function that drops its watches.

// Fabric: every cluster's nodes.
export function watchFabric(store) {
    const drops = store.clusters.map(c => store.watch(
        `nodes:${c.name}`, `nodes:${c.name}`,
        async () => (await store.api.get(`/v1/nodes?cluster=${encodeURIComponent(c.name)}`)).items));
    return () => drops.forEach(d => d());
}

// Jobs: one page of the list (query: the API's parameters, without limit).
export const PAGE = 50;
export function jobsPath(q, after) {
    const p = new URLSearchParams();
    for (const k of ['cluster', 'state', 'owner', 'account'])
        if (q[k])
            p.set(k, q[k]);
    p.set('limit', String(q.limit || PAGE));
    if (after)
        p.set('after', String(after));
    return `/v1/jobs?${p}`;
}
export function watchJobs(store, q, after) {
    return store.watch('jobs', 'jobs', () => store.api.get(jobsPath(q, after)));
}

// One job and what it wrote.
export function watchJob(store, id) {
    return store.watch('job', 'jobs', () => store.api.get(`/v1/jobs/${id}`));
}

// Timeline of a cluster: its nodes, its running and waiting jobs, its
// reservations (maintenance windows among them).
export function watchTimeline(store, cluster) {
    const c = encodeURIComponent(cluster);
    const drops = [
        store.watch('tl:nodes', `nodes:${cluster}`,
                    async () => (await store.api.get(`/v1/nodes?cluster=${c}`)).items),
        store.watch('tl:jobs', 'jobs', async () => {
            const run = await store.api.all(`/v1/jobs?cluster=${c}&state=running&limit=10000`, 20000);
            const wait = await store.api.all(`/v1/jobs?state=pending&limit=10000`, 20000);
            return run.concat(wait.filter(j => j.planned_cluster === cluster));
        }),
        store.watch('tl:resv', 'reservations',
                    async () => (await store.api.get(`/v1/reservations?cluster=${c}`)).items),
        store.watch('tl:maint', 'maintenance',
                    async () => (await store.api.get(`/v1/maintenance?cluster=${c}`)).items),
    ];
    return () => drops.forEach(d => d());
}

// Goal versus actual: the mismatches and the maintenance requests.
export function watchGoal(store) {
    const drops = [
        store.watch('diff', 'diff', async () => (await store.api.get('/v1/state/diff')).items),
        store.watch('maint', 'maintenance', async () => (await store.api.get('/v1/maintenance')).items),
    ];
    return () => drops.forEach(d => d());
}

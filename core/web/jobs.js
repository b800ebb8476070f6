// jobs.js - the Jobs view: a table of the fabric's jobs with filters and
// pages, saved views, a form to submit, and a job's details in the side
// panel: why it waits, its planned start, queue position and priority
// factors, its output, and the operations the token's roles allow.
// SPDX-License-Identifier: MIT
import {watchJobs, PAGE} from './store.js';
import {h, clear, put, fields, errorBox, ago, local, duration, JOB_STATES} from './util.js';

const ENDED = ['completed', 'failed', 'cancelled'];
const SERVER = ['state', 'cluster', 'owner', 'account'];   // the API filters
const BROWSER = ['source', 'array'];                      // filtered here
const SAVED = 'loom.jobs.views';

function savedViews() {
    try {
        return JSON.parse(localStorage.getItem(SAVED)) || {};
    } catch (e) {
        return {};
    }
}

// May this token operate on job j (the API enforces it; this hides what
// it would refuse)?
export function mayOperate(api, j) {
    const sub = api.claims && api.claims.sub;
    return api.has('admin') || j.owner === sub || j.submitted_by === sub;
}

function matches(j, q) {
    if (q.source && j.source !== q.source)
        return false;
    if (q.array && String(j.array_job_id || '') !== q.array && j.id !== q.array)
        return false;
    return true;
}

export function mount(root, ctx, args) {
    const {store, api} = ctx;
    const q = Object.fromEntries(new URLSearchParams(args.query || ''));
    let cursor = q.after ? Number(q.after) : null; // null: the newest page
    const back = [];
    let scanned = 0;
    delete q.after;

    const input = (k, attrs) => h('input', {name: k, value: q[k] || '', ...attrs});
    const select = (k, values) => h('select', {name: k},
        h('option', {value: ''}, `any ${k}`),
        values.map(v => h('option', {value: v, selected: q[k] === v}, v)));
    const form = h('form.filters', {onchange: apply, onsubmit: ev => { ev.preventDefault(); apply(); }},
        select('state', JOB_STATES),
        select('cluster', store.clusters.map(c => c.name)),
        input('owner', {placeholder: 'owner', size: 10}),
        input('account', {placeholder: 'account', size: 10}),
        select('source', ['local', 'grid', 'maintenance', 'cluster']),
        input('array', {placeholder: 'array job id', size: 8}),
        h('button', {type: 'submit'}, 'Filter'));
    const views = h('select.views', {'aria-label': 'saved views', onchange: ev => {
        const v = savedViews()[ev.target.value];
        if (v)
            location.hash = `#jobs?${new URLSearchParams(v)}`;
    }});
    const saveBtn = h('button', {type: 'button', onclick: () => {
        const name = prompt('Save these filters as:');
        if (!name)
            return;
        const all = savedViews();
        all[name] = q;
        localStorage.setItem(SAVED, JSON.stringify(all));
        fillViews();
    }}, 'Save view');
    function fillViews() {
        put(views, h('option', {value: ''}, 'saved views'),
                            Object.keys(savedViews()).map(k => h('option', {value: k}, k)));
    }
    fillViews();
    const pager = h('div.pager');
    const table = h('div.table');
    const note = h('p.muted');
    const submitBox = api.has('admin', 'user', 'gateway') ? submitForm(ctx) : null;
    put(root, h('div.toolbar', form, views, saveBtn), submitBox, note, table, pager);

    function apply() {
        const fd = new FormData(form);
        for (const k of [...SERVER, ...BROWSER]) {
            const v = String(fd.get(k) || '').trim();
            if (v)
                q[k] = v;
            else
                delete q[k];
        }
        history.replaceState(null, '', `#jobs${Object.keys(q).length ? `?${new URLSearchParams(q)}` : ''}`);
        cursor = null;
        back.length = 0;
        rewatch();
    }

    // A page: the API's filters, then the browser's over as many pages as
    // it takes to fill one (at most 20 pages read).
    async function load() {
        // the highest id comes only to those who see every job; the
        // others' newest page is their first
        const maxId = (store.state && store.state.jobs.max_id) || 0;
        let after = cursor === null ? Math.max(0, maxId - PAGE) : cursor;
        const browser = BROWSER.some(k => q[k]);
        const filtered = SERVER.some(k => q[k]);
        if (cursor === null && (browser || filtered))
            after = 0;
        const items = [];
        let next = null, reads = 0;
        scanned = 0;
        do {
            const p = new URLSearchParams();
            for (const k of SERVER)
                if (q[k])
                    p.set(k, q[k]);
            p.set('limit', String(PAGE));
            p.set('after', String(after));
            const d = await api.get(`/v1/jobs?${p}`);
            scanned += d.items.length;
            for (const j of d.items)
                if (matches(j, q) && items.length < PAGE)
                    items.push(j);
            next = d.next ? Number(new URLSearchParams(d.next.split('?')[1]).get('after')) : null;
            if (items.length >= PAGE && items.length)
                next = Number(items[items.length - 1].id);
            after = next;
        } while (browser && next && items.length < PAGE && ++reads < 20);
        return {items, next, after: cursor};
    }

    let drop = () => {};
    function rewatch() {
        drop();
        drop = store.watch('jobs', 'jobs', load);
    }

    function row(j) {
        const when = j.state === 'pending' && j.planned_start ? `planned ${ago(j.planned_start)}`
            : j.start_time ? local(j.start_time) : '-';
        return h('tr', {dataset: {job: j.id, state: j.state}, onclick: () => { location.hash = `#jobs/${j.id}`; }},
                 h('td.num', j.id), h('td', j.name), h('td', j.owner), h('td', j.account || '-'),
                 h('td', j.source), h('td', h('span.badge', {dataset: {state: j.state}}, j.state)),
                 h('td', j.cluster || j.planned_cluster || '-'), h('td.num', j.request.nodes),
                 h('td', when), h('td.reason', j.reason || ''));
    }

    function render() {
        const d = store.data('jobs'), e = store.error('jobs');
        if (e)
            return put(table, errorBox(e));
        if (!d)
            return;
        put(table, h('table.grid.jobs',
            h('thead', h('tr', ['id', 'name', 'owner', 'account', 'source', 'state', 'cluster',
                                'nodes', 'start', 'reason'].map(t => h('th', t)))),
            h('tbody', d.items.map(row))));
        note.textContent = BROWSER.some(k => q[k])
            ? `source and array are filtered in the browser, over the ${scanned} jobs read for this page`
            : d.items.length ? '' : 'no jobs';
        put(pager, 
            h('button', {disabled: cursor === null && !back.length, onclick: () => {
                cursor = back.length ? back.pop() : 0;
                rewatch();
            }}, '← older'),
            h('button', {disabled: !d.next, onclick: () => {
                back.push(cursor === null ? 0 : cursor);
                cursor = d.next;
                rewatch();
            }}, 'newer →'),
            h('button', {onclick: () => { cursor = null; back.length = 0; rewatch(); }}, 'newest'),
            h('span.muted', d.items.length ? `jobs ${d.items[0].id} to ${d.items[d.items.length - 1].id}` : ''));
    }

    const off = store.on(what => { if (what === 'jobs') render(); });
    rewatch();
    return () => { off(); drop(); };
}

function submitForm(ctx) {
    const {api, store} = ctx;
    const out = h('div.result');
    const f = h('form.submit', {onsubmit: async ev => {
        ev.preventDefault();
        const fd = new FormData(f);
        const body = {
            name: String(fd.get('name') || '') || null,
            script: String(fd.get('script')),
            request: {
                cluster: String(fd.get('cluster')) || null,
                nodes: Number(fd.get('nodes')),
                cpus_per_node: Number(fd.get('cpus')),
                memory_mb: Number(fd.get('memory')),
                walltime_s: Math.round(Number(fd.get('walltime')) * 60),
            },
        };
        if (fd.get('workdir'))
            body.workdir = String(fd.get('workdir'));
        // a retry of the same form sends the same key: one job only
        f.dataset.key = f.dataset.key || `dash-${Date.now()}-${Math.random().toString(36).slice(2)}`;
        try {
            const r = await fetch(api.url('/v1/jobs'), {method: 'POST', body: JSON.stringify(body),
                headers: {Authorization: `Bearer ${api.token}`, 'Content-Type': 'application/json',
                          'Idempotency-Key': f.dataset.key}});
            const d = await r.json();
            if (!r.ok)
                throw new Error(d.error ? d.error.message : `HTTP ${r.status}`);
            delete f.dataset.key;
            put(out, h('span.ok', `job ${d.id} submitted`));
            location.hash = `#jobs/${d.id}`;
        } catch (e) {
            put(out, errorBox(e));
        }
    }},
        h('label', 'name ', h('input', {name: 'name', value: 'dashboard', size: 12})),
        h('label', 'cluster ', h('select', {name: 'cluster'}, h('option', {value: ''}, 'any'),
                                 store.clusters.map(c => h('option', {value: c.name}, c.name)))),
        h('label', 'nodes ', h('input', {name: 'nodes', type: 'number', min: 1, value: 1, size: 4})),
        h('label', 'cpus/node ', h('input', {name: 'cpus', type: 'number', min: 1, value: 1, size: 4})),
        h('label', 'memory MB ', h('input', {name: 'memory', type: 'number', min: 1, value: 100, size: 6})),
        h('label', 'walltime min ', h('input', {name: 'walltime', type: 'number', min: 1, value: 10, size: 5})),
        h('label', 'workdir ', h('input', {name: 'workdir', placeholder: "the account's home", size: 18})),
        h('label.wide', 'script', h('textarea', {name: 'script', rows: 4, cols: 60},
                                    '#!/bin/sh\necho "job $LOOM_JOB_ID on $(hostname)"\n')),
        h('button', {type: 'submit'}, 'Submit'), out);
    return h('details.card', h('summary', 'Submit a job'), f);
}

// The side panel of job id, kept current while it is open; its output
// is read on from where it stopped every 2 s until the job has ended.
export function jobPanel(panel, ctx, id) {
    const {store, api} = ctx;
    const body = h('div.body', 'loading ...');
    const out = h('pre.output', {'aria-label': 'output'});
    let offset = 0, eof = false, timer = null, stream = 'stdout';
    put(panel, h('header', h('h2', `job ${id}`),
                          h('button.close', {onclick: () => ctx.closePanel(), 'aria-label': 'close'}, '×')),
                        body);

    async function readOutput() {
        timer = null;
        try {
            const d = await api.get(`/v1/jobs/${id}/output?stream=${stream}&offset=${offset}`);
            if (d.data)
                out.append(document.createTextNode(d.data));
            offset = d.next_offset;
            eof = d.eof;
            out.dataset.eof = String(eof);
        } catch (e) {
            if (!out.textContent)
                out.textContent = e.message;
            eof = true;
        }
        if (eof && !out.textContent)
            out.textContent = '(no output)';
        if (!eof && panel.isConnected && panel.dataset.job === id)
            timer = setTimeout(readOutput, 2000);
    }

    function factors(pf) {
        if (!pf)
            return null;
        return h('div.factors', Object.entries(pf).map(([k, v]) =>
            h('div.factor', h('span', k), h('meter', {min: k === 'priority' ? -1 : 0, max: k === 'total' ? Math.max(1, v) : 1, value: v}),
              h('span.num', Number(v).toFixed(3)))));
    }

    function ops(j) {
        if (!mayOperate(api, j))
            return null;
        const op = (label, method, path) => h('button', {onclick: async () => {
            if (label === 'Cancel' && !confirm(`Cancel job ${j.id}?`))
                return;
            try {
                await api.call(method, path);
                store.refresh('job');
            } catch (e) {
                body.prepend(errorBox(e));
            }
        }}, label);
        const b = [];
        if (!ENDED.includes(j.state))
            b.push(op('Cancel', 'DELETE', `/v1/jobs/${j.id}`));
        if (j.state === 'pending')
            b.push(op('Hold', 'POST', `/v1/jobs/${j.id}/hold`));
        if (j.state === 'held')
            b.push(op('Release', 'POST', `/v1/jobs/${j.id}/release`));
        if (j.state === 'running')
            b.push(op('Suspend', 'POST', `/v1/jobs/${j.id}/suspend`));
        if (j.state === 'suspended')
            b.push(op('Resume', 'POST', `/v1/jobs/${j.id}/resume`));
        return b.length ? h('div.actions', b) : null;
    }

    function render() {
        if (panel.dataset.job !== id)
            return;
        const j = store.data('job'), e = store.error('job');
        if (e)
            return put(body, errorBox(e));
        if (!j)
            return;
        const r = j.request;
        const waiting = ['pending', 'held'].includes(j.state);
        const streams = j.stderr && j.stderr !== j.stdout
            ? h('div.streams', ['stdout', 'stderr'].map(s => h('button', {disabled: s === stream, onclick: () => {
                stream = s;
                offset = 0;
                out.textContent = '';
                clearTimeout(timer);
                readOutput();
                render();
            }}, s))) : null;
        put(body, 
            fields([['name', j.name], ['state', h('span.badge', {dataset: {state: j.state}}, j.state)],
                    ['reason', j.reason], ['owner', j.owner], ['account', j.account],
                    ['source', j.source], ['submitted by', j.submitted_by],
                    waiting ? ['planned start', j.planned_start ? `${local(j.planned_start)} (${ago(j.planned_start)})` : null] : null,
                    waiting ? ['planned cluster', j.planned_cluster] : null,
                    waiting ? ['queue position', j.queue_position] : null,
                    ['cluster', j.cluster], ['native id', j.native_id], ['nodes', (j.nodes || []).length > 24
                        ? `${j.nodes.length}: ${j.nodes.slice(0, 24).join(', ')} …` : (j.nodes || []).join(', ')],
                    ['request', `${r.nodes} node(s) × ${r.cpus_per_node} cpu, ${r.memory_mb} MB, ` +
                                `${r.gpus} gpu, walltime ${duration(r.walltime_s)}` +
                                (r.cluster ? `, cluster ${r.cluster}` : '') + (r.queue ? `, queue ${r.queue}` : '') +
                                (r.features.length ? `, features ${r.features.join(',')}` : '') +
                                (r.reservation ? `, reservation ${r.reservation}` : '')],
                    ['submitted', local(j.submit_time)], ['started', local(j.start_time)],
                    ['ended', local(j.end_time)], ['exit code', j.exit_code],
                    j.array_job_id ? ['array', `${j.array_job_id}_${j.array_task_id ?? '[' + (j.array || '') + ']'}`] : null,
                    j.command ? ['command', j.command.join(' ')] : null,
                    ['stdout', j.stdout]]),
            waiting && j.priority_factors ? [h('h3', 'Priority factors'), factors(j.priority_factors)] : null,
            j.script ? [h('h3', 'Script'), h('pre.script', j.script)] : null,
            ops(j),
            h('h3', 'Output'), streams, out);
        if (!timer && !eof && j.state !== 'pending' && j.state !== 'held')
            readOutput();
        if (eof === true && !ENDED.includes(j.state))
            eof = false; // it runs again (requeued): read on
    }

    panel.dataset.job = id;
    const drop = store.watch('job', 'jobs', () => api.get(`/v1/jobs/${id}`));
    const off = store.on(what => { if (what === 'job') render(); });
    return () => { off(); drop(); clearTimeout(timer); delete panel.dataset.job; };
}

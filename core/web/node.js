// node.js - a node's record in the side panel: its state and resources,
// goal versus actual attribute by attribute, its annotations, the jobs on
// it, and (operators, admins) drain and up, pause and resume.
// SPDX-License-Identifier: MIT
import {h, clear, put, fields, errorBox, ago, local} from './util.js';

function same(a, b) {
    if (Array.isArray(a) && Array.isArray(b))
        return a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');
    return String(a) === String(b);
}

function show(v) {
    if (v === undefined)
        return '-';
    return Array.isArray(v) ? v.join(', ') : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

export async function nodePanel(panel, ctx, id) {
    const {api} = ctx;
    const [cluster, name] = [id.slice(0, id.indexOf('/')), id.slice(id.indexOf('/') + 1)];
    const path = `${encodeURIComponent(cluster)}/${encodeURIComponent(name)}`;
    const body = h('div.body', 'loading ...');
    put(panel, h('header', h('h2', `node ${id}`),
                          h('button.close', {onclick: () => ctx.closePanel(), 'aria-label': 'close'}, '×')),
                        body);
    let n, goal = null, actual = null, jobs = [];
    try {
        n = await api.get(`/v1/nodes/${path}`);
        [goal, actual, jobs] = await Promise.all([
            api.get(`/v1/goal/nodes/${path}`).catch(e => e.status === 404 ? null : Promise.reject(e)),
            api.get(`/v1/actual/nodes/${path}`).catch(e => e.status === 404 ? null : Promise.reject(e)),
            Promise.all(['starting', 'running', 'suspended'].map(s => api.all(
                `/v1/jobs?cluster=${encodeURIComponent(cluster)}&state=${s}&limit=10000`, 50000)))
                .then(ls => ls.flat().filter(j => (j.nodes || []).includes(name))),
        ]);
    } catch (e) {
        put(body, errorBox(e));
        return;
    }
    const ga = goal ? goal.attributes : {}, aa = actual ? actual.attributes : {};
    const attrs = [...new Set([...Object.keys(ga), ...Object.keys(aa)])].sort();
    const rows = attrs.map(k => {
        const a = aa[k], g = ga[k];
        const ok = g === undefined || (a && same(g, a.value));
        return h(ok ? 'tr' : 'tr.mismatch', h('td', k), h('td', show(g)),
                 h('td', a ? show(a.value) : 'unknown'),
                 h('td', a ? `${a.source}, ${ago(a.time)}` : '-'));
    });
    const actions = [];
    if (api.has('admin', 'operator')) {
        const setState = async state => {
            const asks = state !== 'up' && state !== 'resume';
            const reason = asks ? prompt(`Reason to ${state} ${id}:`, 'set from the dashboard') : null;
            if (asks && reason === null)
                return;
            try {
                await api.call('PUT', `/v1/nodes/${path}/state`, {state, reason});
                nodePanel(panel, ctx, id);
            } catch (e) {
                body.prepend(errorBox(e));
            }
        };
        actions.push(h('div.actions', h('button', {onclick: () => setState('drain')}, 'Drain'),
                       h('button', {onclick: () => setState('up')}, 'Up'),
                       n.state === 'paused'
                           ? h('button', {onclick: () => setState('resume')}, 'Resume')
                           : h('button', {onclick: () => setState('pause')}, 'Pause')));
    }
    put(body, 
        fields([['state', h('span.badge', {dataset: {state: n.state}}, n.state)],
                ['reason', n.reason],
                ['cpus', `${n.cpus_alloc} of ${n.cpus} allocated`],
                ['memory', `${n.memory_alloc_mb} of ${n.memory_mb} MB allocated`],
                ['gpus', `${n.gpus_alloc} of ${n.gpus} allocated`],
                ['features', n.features.join(', ')],
                ['queues', n.queues.join(', ')],
                ['reservation', n.reservation]]),
        actions,
        h('h3', 'Goal versus actual'),
        attrs.length ? h('table.grid', h('thead', h('tr', h('th', 'attribute'), h('th', 'goal'),
                                                      h('th', 'actual'), h('th', 'reported'))),
                         h('tbody', rows))
            : h('p.muted', 'no goal set and no attribute reported'),
        goal ? h('p.muted', `goal updated ${local(goal.updated)}`) : null,
        h('h3', 'Annotations'),
        Object.keys(n.annotations || {}).length
            ? fields(Object.entries(n.annotations).map(([k, v]) => [k, show(v)]))
            : h('p.muted', 'none'),
        h('h3', `Jobs on ${name}`),
        jobs.length ? h('ul.jobs', jobs.map(j => h('li', h('a', {href: `#jobs/${j.id}`}, `job ${j.id}`),
                                                   ` ${j.name} (${j.owner} as ${j.account || '-'}, ${j.state})`)))
            : h('p.muted', 'none'));
}

// goal.js - the Goal versus actual view: the mismatches side by side with
// the maintenance that repairs them and its state; nodes picked here get
// a maintenance request (a flexible window Loom places), and every
// request is followed through its steps.
// SPDX-License-Identifier: MIT
import {watchGoal} from './store.js';
import {h, clear, put, errorBox, ago, local} from './util.js';

const STEPS = ['requested', 'planned', 'draining', 'in-progress', 'verifying', 'done'];
const OPEN = ['requested', 'planned', 'draining', 'in-progress', 'verifying'];

function show(v) {
    return v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(', ')
        : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

// "2026-11-26T10:00" of a datetime-local input, as RFC 3339 UTC.
function utc(v) {
    return v ? new Date(v).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
}

export function mount(root, ctx) {
    const {store, api} = ctx;
    const ops = api.has('admin', 'operator');
    const picked = new Set();
    const table = h('div.table');
    const reqs = h('div.requests');
    const msg = h('div.result', {role: 'status'});
    const form = ops ? h('form.maint.card', {onsubmit: schedule},
        h('h3', 'Schedule maintenance for the nodes picked'),
        h('p.picked.muted', 'no node picked'),
        h('label', 'action ', h('input', {name: 'action', value: 'node-off', size: 12, list: 'actions'})),
        h('datalist', {id: 'actions'}),
        h('label', 'reason ', h('input', {name: 'reason', size: 28, placeholder: 'what is done, and why'})),
        h('label', 'not before ', h('input', {name: 'not_before', type: 'datetime-local'})),
        h('label', 'deadline ', h('input', {name: 'deadline', type: 'datetime-local'})),
        h('label', 'duration (s) ', h('input', {name: 'duration_s', type: 'number', min: 1, value: 600, size: 6})),
        api.has('admin') ? h('label', h('input', {name: 'force', type: 'checkbox'}), ' force (cancel the jobs in the way)') : null,
        h('button', {type: 'submit'}, 'Schedule'), msg) : h('p.muted', 'scheduling maintenance needs the operator or admin role');
    put(root, h('h3', 'Mismatches'), table, form, h('h3', 'Maintenance requests'), reqs);

    async function schedule(ev) {
        ev.preventDefault();
        const fd = new FormData(form);
        if (!picked.size)
            return put(msg, errorBox(new Error('pick the nodes first')));
        const win = {duration_s: Number(fd.get('duration_s'))};
        if (fd.get('not_before'))
            win.not_before = utc(fd.get('not_before'));
        if (fd.get('deadline'))
            win.deadline = utc(fd.get('deadline'));
        const body = {nodes: [...picked], action: String(fd.get("action") || "node-off"), window: win};
        if (fd.get('reason'))
            body.reason = String(fd.get('reason'));
        if (fd.get('force'))
            body.force = true;
        try {
            const m = await api.call('POST', '/v1/maintenance', body);
            put(msg, h('span.ok', `maintenance ${m.id} ${m.state}: ${local(m.start)} to ${local(m.end)}`));
            picked.clear();
            render();
        } catch (e) {
            put(msg, errorBox(e));
        }
    }

    function render() {
        const diff = store.data('diff'), maint = store.data('maint') || [];
        const e = store.error('diff') || store.error('maint');
        if (e)
            put(table, errorBox(e));
        else if (diff) {
            const byId = new Map(maint.map(m => [m.id, m]));
            put(table, diff.length ? h('table.grid.diff',
                h('thead', h('tr', ['', 'node', 'attribute', 'goal', 'actual', 'since', 'recovery', 'maintenance']
                    .map(t => h('th', t)))),
                h('tbody', diff.map(d => {
                    const m = d.maintenance ? byId.get(d.maintenance) : null;
                    return h('tr', {dataset: {node: d.node, attribute: d.attribute}},
                        h('td', ops ? h('input', {type: 'checkbox', 'aria-label': `pick ${d.node}`,
                                                  checked: picked.has(d.node), onchange: ev => {
                            ev.target.checked ? picked.add(d.node) : picked.delete(d.node);
                            render();
                        }}) : null),
                        h('td', h('a', {href: '#', onclick: ev => { ev.preventDefault(); ctx.openNode(d.node); }}, d.node)),
                        h('td', d.attribute), h('td.goal', show(d.goal)), h('td.actual', show(d.actual)),
                        h('td', ago(d.since)), h('td', d.action || '-'),
                        h('td', m ? h('span.badge', {dataset: {state: m.state}}, `${m.id} ${m.state}`) : d.maintenance || '-'));
                }))) : h('p.muted', 'goal and actual state agree on every node'));
        }
        if (ops) {
            const p = form.querySelector('.picked');
            p.textContent = picked.size ? `picked: ${[...picked].join(', ')}` : 'no node picked';
            const dl = form.querySelector('datalist');
            put(dl, [...new Set(['node-off', ...maint.map(m => m.action)])].map(a => h('option', {value: a})));
        }
        const sorted = [...maint].sort((a, b) => Number(b.id) - Number(a.id));
        put(reqs, sorted.length ? sorted.map(request) : h('p.muted', 'none'));
    }

    function request(m) {
        const seen = new Map((m.history || []).map(s => [s.state, s.time]));
        const end = m.state === 'failed' || m.state === 'cancelled' ? m.state : null;
        const steps = (end ? [...STEPS.slice(0, -1), end] : STEPS).map(s =>
            h(`li.${s === m.state ? 'current' : seen.has(s) ? 'past' : 'future'}`, {title: seen.has(s) ? local(seen.get(s)) : ''},
              s, seen.has(s) ? h('small', local(seen.get(s)).slice(11)) : null));
        const cancel = ops && OPEN.includes(m.state) ? h('button', {onclick: async () => {
            if (!confirm(`Cancel maintenance ${m.id}?`))
                return;
            try {
                await api.call('DELETE', `/v1/maintenance/${m.id}`);
            } catch (e) {
                put(msg, errorBox(e));
            }
        }}, 'Cancel') : null;
        return h('section.card.request', {dataset: {maint: m.id, state: m.state}},
            h('div.head', h('h4', `maintenance ${m.id}`), h('span.badge', {dataset: {state: m.state}}, m.state),
              h('span.meta', `${m.action} on ${m.nodes.join(', ')} · ${local(m.start)} to ${local(m.end)}` +
                             (m.reason ? ` · ${m.reason}` : '') + (m.rule ? ` · rule ${m.rule}` : '')), cancel),
            h('ol.steps', steps),
            m.error ? h('div.error', m.error) : null);
    }

    const drop = watchGoal(store);
    const off = store.on(what => { if (what === 'diff' || what === 'maint') render(); });
    return () => { off(); drop(); };
}

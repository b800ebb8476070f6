// timeline.js - the Timeline view: a cluster's nodes on a time axis from
// an hour ago to 2, 6 or 24 hours ahead, with the jobs that run on each (until
// their walltime), the reservations and maintenance windows that hold it,
// and a row of the planned starts of the jobs that wait for the cluster:
// when a node is free, and what a maintenance window waits for.
// SPDX-License-Identifier: MIT
import {watchTimeline} from './store.js';
import {h, clear, put, epoch, local, ago} from './util.js';

const BEFORE = 3600, ROW = 18, LABEL = 110, TOP = 24;
const RANGES = {'next 2 h': 2, 'next 6 h': 6, 'next 24 h': 24};
const COLORS = {job: '#f2994a', planned: '#f2c94c', resv: '#9b8ae6', maint: '#3d5a99', now: '#d64545'};

export function mount(root, ctx, args) {
    const {store} = ctx;
    const names = store.clusters.map(c => c.name);
    let cluster = names.includes(args.query) ? args.query : names[0];
    let onlyBusy = false, after = 24 * 3600;
    const pick = h('select', {'aria-label': 'cluster', onchange: ev => {
        cluster = ev.target.value;
        history.replaceState(null, '', `#timeline?${encodeURIComponent(cluster)}`);
        rewatch();
    }}, names.map(n => h('option', {value: n, selected: n === cluster}, n)));
    const range = h('select', {'aria-label': 'time range', onchange: ev => {
        after = Number(ev.target.value) * 3600;
        draw();
    }}, Object.entries(RANGES).map(([t, v]) => h('option', {value: v, selected: v === 24}, t)));
    const busy = h('label', h('input', {type: 'checkbox', onchange: ev => { onlyBusy = ev.target.checked; draw(); }}),
                   ' only nodes with something on them');
    const canvas = h('canvas.timeline', {role: 'img'});
    const tip = h('div.tip', {role: 'status'});
    const key = h('div.legend', Object.entries({job: 'running job (to its walltime)', planned: 'planned start',
                                                resv: 'reservation', maint: 'maintenance window'})
        .map(([k, t]) => h('span.chip', h('i.swatch', {style: `background:${COLORS[k]}`}), t)));
    const list = h('ul.windows');
    put(root, h('div.toolbar', pick, range, busy, key), h('div.scroll', canvas), tip,
                       h('h3', 'Reservations and maintenance windows'), list);
    let bars = [];

    function rows() {
        const nodes = store.data('tl:nodes') || [], jobs = store.data('tl:jobs') || [];
        const resv = store.data('tl:resv') || [], maint = store.data('tl:maint') || [];
        const now = Date.now() / 1000;
        const by = new Map(nodes.map(n => [n.name, []]));
        const planned = [];
        for (const j of jobs) {
            if (j.state === 'pending') {
                if (j.planned_start)
                    planned.push({kind: 'planned', from: epoch(j.planned_start),
                                  to: epoch(j.planned_start) + j.request.walltime_s,
                                  text: `job ${j.id} ${j.name} (${j.owner} as ${j.account || '-'}), ${j.request.nodes} node(s), planned ${local(j.planned_start)}`});
                continue;
            }
            const from = epoch(j.start_time) || now;
            for (const n of j.nodes || [])
                if (by.has(n))
                    by.get(n).push({kind: 'job', from, to: from + j.request.walltime_s,
                                    text: `job ${j.id} ${j.name} (${j.owner} as ${j.account || '-'}) until ${local(new Date((from + j.request.walltime_s) * 1000))} at the latest`});
        }
        const mreq = new Map(maint.map(m => [m.reservation, m]));
        for (const r of resv) {
            if (r.state === 'done' || r.state === 'cancelled')
                continue;
            const m = mreq.get(r.id);
            for (const id of r.nodes) {
                const n = id.slice(id.indexOf('/') + 1);
                if (by.has(n))
                    by.get(n).push({kind: r.purpose === 'maintenance' ? 'maint' : 'resv', from: epoch(r.start), to: epoch(r.end),
                                    text: m ? `maintenance ${m.id} (${m.action}, ${m.state}): ${m.reason || ''}`
                                        : `reservation ${r.id} of ${r.owner} (${r.state})${r.reason ? ': ' + r.reason : ''}`});
            }
        }
        let out = [...by.entries()].map(([name, items]) => ({name, items}));
        if (onlyBusy)
            out = out.filter(r => r.items.length);
        if (planned.length)
            out.unshift({name: 'planned', items: planned, stacked: true});
        return out;
    }

    function draw() {
        const now = Date.now() / 1000, t0 = now - BEFORE, t1 = now + after;
        const rs = rows();
        const width = Math.max(600, root.clientWidth - 8), plot = width - LABEL;
        const x = t => LABEL + Math.max(0, Math.min(1, (t - t0) / (t1 - t0))) * plot;
        const dpr = window.devicePixelRatio || 1;
        const height = TOP + rs.length * ROW;
        canvas.width = Math.ceil(width * dpr);
        canvas.height = Math.ceil(height * dpr);
        canvas.style.width = `${width}px`;
        canvas.style.height = `${height}px`;
        canvas.setAttribute('aria-label', `timeline of ${cluster}: ${rs.length} rows`);
        const g = canvas.getContext('2d');
        g.setTransform(dpr, 0, 0, dpr, 0, 0);
        g.font = '11px sans-serif';
        g.fillStyle = '#fff';
        g.fillRect(0, 0, width, height);
        g.strokeStyle = '#e4e4e4';
        g.fillStyle = '#555';
        for (let hr = Math.ceil(t0 / 3600) * 3600; hr <= t1; hr += 3600) {
            const xx = x(hr);
            g.beginPath();
            g.moveTo(xx, TOP - 4);
            g.lineTo(xx, height);
            g.stroke();
            const d = new Date(hr * 1000);
            if (after <= 6 * 3600 || d.getHours() % 3 === 0)
                g.fillText(`${String(d.getHours()).padStart(2, '0')}:00`, xx + 2, 12);
        }
        bars = [];
        rs.forEach((r, i) => {
            const y = TOP + i * ROW;
            g.fillStyle = i % 2 ? '#fafafa' : '#fff';
            g.fillRect(LABEL, y, plot, ROW);
            g.fillStyle = '#333';
            g.fillText(r.name, 4, y + 13);
            r.items.forEach((it, k) => {
                if (it.to < t0 || it.from > t1)
                    return;
                const bx = x(it.from), bw = Math.max(2, x(it.to) - bx);
                const sub = r.stacked ? 3 : 0, by = y + 2 + (r.stacked ? (k % 4) * sub : 0);
                g.fillStyle = COLORS[it.kind];
                g.fillRect(bx, by, bw, ROW - 4 - (r.stacked ? 3 * sub : 0));
                bars.push({x: bx, y: by, w: bw, h: ROW - 4, it});
            });
        });
        g.strokeStyle = COLORS.now;
        g.beginPath();
        g.moveTo(x(now), TOP - 8);
        g.lineTo(x(now), height);
        g.stroke();
        g.fillStyle = COLORS.now;
        g.fillText('now', x(now) + 3, TOP - 10);
        const resv = (store.data('tl:resv') || []).filter(r => r.state === 'planned' || r.state === 'active');
        const maint = new Map((store.data('tl:maint') || []).map(m => [m.reservation, m]));
        put(list, resv.length ? resv.map(r => {
            const m = maint.get(r.id);
            return h('li', {dataset: {resv: r.id, purpose: r.purpose}},
                     `${m ? `maintenance ${m.id} (${m.action}, ${m.state})` : `reservation ${r.id} (${r.owner})`} on ` +
                     `${r.nodes.map(n => n.slice(n.indexOf('/') + 1)).join(', ')}: ` +
                     `${local(r.start)} to ${local(r.end)} (${ago(r.start)})`);
        }) : h('li.muted', 'none'));
    }

    canvas.addEventListener('mousemove', ev => {
        const r = canvas.getBoundingClientRect();
        const px = ev.clientX - r.left, py = ev.clientY - r.top;
        const b = bars.find(b => px >= b.x && px <= b.x + b.w && py >= b.y && py <= b.y + b.h);
        tip.textContent = b ? b.it.text : '';
    });

    let drop = () => {};
    function rewatch() {
        drop();
        drop = watchTimeline(store, cluster);
    }
    const off = store.on(what => { if (what.startsWith('tl:')) draw(); });
    const tick = setInterval(draw, 30000); // the axis moves on
    rewatch();
    draw();
    return () => { off(); drop(); clearInterval(tick); };
}

// fabric.js - the Fabric view: every cluster with its adaptor, state, last
// poll and error, and a grid of its nodes coloured by state, drawn on a
// canvas (one rectangle per node, one fill per state: 16,000 nodes draw in
// a few milliseconds). A click on a node opens its record.
// SPDX-License-Identifier: MIT
import {watchFabric} from './store.js';
import {h, clear, put, ago, NODE_STATES, NODE_COLORS} from './util.js';

function cellSize(n) {
    return n <= 64 ? 18 : n <= 256 ? 10 : 6;
}

function counts(nodes) {
    const c = {};
    for (const n of nodes)
        c[n.state] = (c[n.state] || 0) + 1;
    return c;
}

export function legend() {
    return h('div.legend', NODE_STATES.map(s => h('span.chip', {dataset: {state: s}},
        h('i.swatch', {style: `background:${NODE_COLORS[s]}`}), s)));
}

// Draw nodes on canvas in rows that fill width; returns the layout the
// clicks are mapped with.
function draw(canvas, nodes, width) {
    const cell = cellSize(nodes.length), gap = cell > 8 ? 2 : 1, step = cell + gap;
    const cols = Math.max(1, Math.floor(width / step));
    const rows = Math.max(1, Math.ceil(nodes.length / cols));
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.ceil(cols * step * dpr);
    canvas.height = Math.ceil(rows * step * dpr);
    canvas.style.width = `${cols * step}px`;
    canvas.style.height = `${rows * step}px`;
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, cols * step, rows * step);
    const by = new Map();
    nodes.forEach((n, i) => {
        const s = NODE_COLORS[n.state] ? n.state : 'unknown';
        if (!by.has(s))
            by.set(s, []);
        by.get(s).push(i);
    });
    for (const [s, idx] of by) {
        g.fillStyle = NODE_COLORS[s];
        g.beginPath();
        for (const i of idx)
            g.rect((i % cols) * step, Math.floor(i / cols) * step, cell, cell);
        g.fill();
    }
    return {cols, step, cell};
}

export function mount(root, ctx) {
    const {store} = ctx;
    const t0 = performance.now();
    const cards = new Map(); // cluster name -> {el, head, chips, canvas, layout, nodes}
    let drawMs = 0, ready = false;
    const find = h('input', {type: 'search', placeholder: 'find a node: cluster/name',
                             'aria-label': 'find a node', id: 'find-node'});
    const form = h('form.find', {onsubmit: ev => {
        ev.preventDefault();
        const v = find.value.trim();
        if (v.includes('/'))
            ctx.openNode(v);
    }}, find, h('button', {type: 'submit'}, 'Open'));
    const grid = h('div.clusters');
    put(root, h('div.toolbar', legend(), form), grid);

    function header(c) {
        const card = cards.get(c.name);
        put(card.head, 
            h('h2', c.name),
            h('span.badge', {dataset: {state: c.state}}, c.state),
            h('span.meta', `${c.adaptor} · ${c.nodes} nodes · polled ${ago(c.last_poll)}`),
            c.error ? h('div.error', c.error) : null);
    }

    function chips(card) {
        const n = counts(card.nodes);
        put(card.chips, ...NODE_STATES.filter(s => n[s]).map(s =>
            h('span.count', {dataset: {state: s}}, h('i.swatch', {style: `background:${NODE_COLORS[s]}`}),
              `${s} ${n[s]}`)));
    }

    function render(name) {
        const card = cards.get(name);
        const nodes = store.data(`nodes:${name}`);
        if (!card || !nodes)
            return;
        card.nodes = nodes;
        const t = performance.now();
        card.layout = draw(card.canvas, nodes, card.el.clientWidth - 24);
        drawMs += performance.now() - t;
        card.canvas.setAttribute('aria-label', `${name}: ${nodes.length} nodes`);
        chips(card);
        if (!ready && [...cards.values()].every(c => c.nodes)) {
            ready = true;
            root.dataset.readyMs = String(Math.round(performance.now() - t0));
            root.dataset.drawMs = String(drawMs.toFixed(1));
        }
    }

    function build() {
        clear(grid);
        cards.clear();
        for (const c of store.clusters) {
            const canvas = h('canvas.nodes', {role: 'img'});
            const card = {el: h('section.card.cluster', {dataset: {cluster: c.name}}),
                          head: h('div.head'), chips: h('div.counts'), canvas, nodes: null};
            card.el.append(card.head, card.chips, canvas);
            canvas.addEventListener('click', ev => {
                const i = hit(card, ev);
                if (i !== null)
                    ctx.openNode(card.nodes[i].id);
            });
            canvas.addEventListener('mousemove', ev => {
                const i = hit(card, ev);
                canvas.title = i === null ? '' : `${card.nodes[i].name}: ${card.nodes[i].state}`;
            });
            grid.append(card.el);
            cards.set(c.name, card);
            header(c);
        }
    }

    function hit(card, ev) {
        if (!card.layout || !card.nodes)
            return null;
        const r = card.canvas.getBoundingClientRect();
        const col = Math.floor((ev.clientX - r.left) / card.layout.step);
        const row = Math.floor((ev.clientY - r.top) / card.layout.step);
        const i = row * card.layout.cols + col;
        return col < card.layout.cols && i >= 0 && i < card.nodes.length ? i : null;
    }

    build();
    let drop = watchFabric(store);
    const off = store.on(what => {
        if (what === 'clusters') {
            drop();
            build();
            drop = watchFabric(store);
        } else if (what === 'state') {
            for (const c of store.clusters)
                if (cards.has(c.name))
                    header(c);
        } else if (what.startsWith('nodes:')) {
            render(what.slice(6));
        }
    });
    let width = root.clientWidth;
    const onResize = () => {
        if (root.clientWidth !== width) {
            width = root.clientWidth;
            for (const name of cards.keys())
                render(name);
        }
    };
    window.addEventListener('resize', onResize);
    for (const name of cards.keys())
        render(name);
    return () => {
        off();
        drop();
        window.removeEventListener('resize', onResize);
    };
}

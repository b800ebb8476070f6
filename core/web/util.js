// util.js - small helpers of the dashboard's views: elements, times.
// SPDX-License-Identifier: MIT

// h('div.card', {onclick: f, title: 't'}, child, 'text', ...): an element.
// Text is always set as text, never parsed as HTML.
export function h(spec, attrs, ...children) {
    const [tag, ...classes] = spec.split('.');
    const el = document.createElement(tag || 'div');
    if (classes.length)
        el.className = classes.join(' ');
    if (attrs === null || typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs)) {
        children.unshift(attrs);
        attrs = null;
    }
    for (const [k, v] of Object.entries(attrs || {})) {
        if (v === undefined || v === null || v === false)
            continue;
        if (k.startsWith('on'))
            el.addEventListener(k.slice(2), v);
        else if (k === 'dataset')
            Object.assign(el.dataset, v);
        else if (k === 'style') // property by property: the page's CSP
            for (const d of String(v).split(';')) { // refuses style text
                const i = d.indexOf(':');
                if (i > 0)
                    el.style.setProperty(d.slice(0, i).trim(), d.slice(i + 1).trim());
            }
        else if (k in el && k !== 'list')
            el[k] = v;
        else
            el.setAttribute(k, v === true ? '' : v);
    }
    add(el, children);
    return el;
}

function add(el, children) {
    for (const c of children) {
        if (c === null || c === undefined || c === false)
            continue;
        if (Array.isArray(c))
            add(el, c);
        else
            el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
}

export function clear(el) {
    while (el.firstChild)
        el.firstChild.remove();
    return el;
}

// Replace el's content with children (as h() takes them: arrays, text,
// null and false left out).
export function put(el, ...children) {
    clear(el);
    add(el, children);
    return el;
}

export function epoch(t) {
    return t ? Date.parse(t) / 1000 : null;
}

// "3 s ago", "in 2 min", "5 h ago".
export function ago(t, now = Date.now() / 1000) {
    if (!t)
        return '-';
    const d = Math.round(now - epoch(t));
    const a = Math.abs(d);
    const s = a < 90 ? `${a} s` : a < 5400 ? `${Math.round(a / 60)} min`
        : a < 172800 ? `${Math.round(a / 3600)} h` : `${Math.round(a / 86400)} d`;
    return d >= 0 ? `${s} ago` : `in ${s}`;
}

// A time as the user's local "YYYY-MM-DD HH:MM:SS".
export function local(t) {
    if (!t)
        return '-';
    const d = new Date(t);
    const p = n => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ` +
        `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function duration(s) {
    if (s === null || s === undefined)
        return '-';
    const hh = Math.floor(s / 3600), mm = Math.floor(s % 3600 / 60), ss = s % 60;
    return hh ? `${hh}:${String(mm).padStart(2, '0')}:${String(ss).padStart(2, '0')}`
        : `${mm}:${String(ss).padStart(2, '0')}`;
}

// The node states and their colours (the same in loom.css's legend).
export const NODE_STATES = ['idle', 'mixed', 'allocated', 'reserved', 'draining',
                            'drained', 'down', 'maint', 'paused', 'unknown'];
export const NODE_COLORS = {
    idle: '#8fd19e', mixed: '#f2c94c', allocated: '#f2994a', reserved: '#9b8ae6',
    draining: '#e8a0a0', drained: '#b0b0b0', down: '#d64545', maint: '#3d5a99',
    paused: '#63c5da', unknown: '#e0e0e0',
};

export const JOB_STATES = ['pending', 'held', 'starting', 'running', 'suspended',
                           'completed', 'failed', 'cancelled'];

// A definition list of [label, value] rows; a value may be an element.
export function fields(rows) {
    return h('dl.fields', rows.filter(r => r).map(([k, v]) => [
        h('dt', k), h('dd', v === null || v === undefined || v === '' ? '-' : v)]));
}

export function errorBox(e) {
    return h('div.error', {role: 'alert'}, e.message || String(e));
}

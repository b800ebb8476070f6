// app.js - the dashboard: log in with a token (kept for this browser
// session only), the views (#fabric, #jobs, #timeline, #goal), the side
// panel of a node or a job, and the state of the live updates.
// SPDX-License-Identifier: MIT
import {Api, tokenClaims} from './api.js';
import {Store} from './store.js';
import {h, clear, put, errorBox} from './util.js';
import * as fabric from './fabric.js';
import * as jobs from './jobs.js';
import * as timeline from './timeline.js';
import * as goal from './goal.js';
import {nodePanel} from './node.js';

const KEY = 'loom.token';
const VIEWS = {fabric: ['Fabric', fabric], jobs: ['Jobs', jobs], timeline: ['Timeline', timeline],
               goal: ['Goal vs actual', goal]};
const main = document.getElementById('main');
const nav = document.getElementById('nav');
const panel = document.getElementById('panel');
const who = document.getElementById('who');
const live = document.getElementById('live');
let ctx = null, unmount = null, unpanel = null;

function base() {
    return new URL('.', location.href).toString();
}

function login(message) {
    if (ctx)
        ctx.store.stop();
    ctx = null;
    clear(nav);
    clear(who);
    panel.hidden = true;
    const input = h('textarea', {id: 'token', rows: 3, cols: 60, required: true, autocomplete: 'off',
                                 spellcheck: false, placeholder: 'loom1.…'});
    const form = h('form.login.card', {onsubmit: async ev => {
        ev.preventDefault();
        const t = input.value.trim();
        if (!tokenClaims(t)) {
            form.querySelector('.error')?.remove();
            form.append(errorBox(new Error('this is not a Loom token (loom1.…) nor a JSON Web Token')));
            return;
        }
        sessionStorage.setItem(KEY, t);
        start(t);
    }},
        h('h2', 'Log in to Loom'),
        h('p', 'Paste a token (', h('code', 'loomctl token create'), '). It is kept for this browser ' +
          'session only, and sent to loomd alone.'),
        input, h('button', {type: 'submit'}, 'Log in'),
        message ? errorBox(new Error(message)) : null);
    put(main, form);
    input.focus();
}

async function start(token) {
    const api = new Api(base(), token);
    const store = new Store(api);
    try {
        await store.start();
    } catch (e) {
        sessionStorage.removeItem(KEY);
        return login(e.status === 401 || e.status === 403 ? `loomd refused the token: ${e.message}` : e.message);
    }
    ctx = {api, store, openNode, closePanel};
    store.on(what => {
        if (what === 'auth') {
            sessionStorage.removeItem(KEY);
            login('the token was refused or has expired: log in again');
        } else if (what === 'live' || what === 'state') {
            showLive();
        }
    });
    const c = api.claims;
    put(who, `${c.sub} (${c.roles.join(', ')})`,
                      h('button', {onclick: () => { sessionStorage.removeItem(KEY); login(); }}, 'Log out'));
    put(nav, Object.entries(VIEWS).map(([k, [t]]) => h('a', {href: `#${k}`, dataset: {view: k}}, t)));
    showLive();
    route();
}

function showLive() {
    if (!ctx)
        return;
    const s = ctx.store;
    live.dataset.live = s.live;
    live.textContent = s.live === 'live' ? 'live' : s.live === 'reconnecting' ? 'reconnecting …' : s.live;
}

function openNode(id) {
    closePanel();
    panel.hidden = false;
    nodePanel(panel, ctx, id);
}

function closePanel() {
    if (unpanel)
        unpanel();
    unpanel = null;
    panel.hidden = true;
    clear(panel);
    if (location.hash.match(/^#jobs\/\d+/))
        history.replaceState(null, '', '#jobs');
}

// #view, #view?query, #jobs/ID
function route() {
    if (!ctx)
        return;
    const m = location.hash.match(/^#(\w+)(?:\/(\d+))?(?:\?(.*))?$/) || [];
    const view = VIEWS[m[1]] ? m[1] : 'fabric';
    if (m[2] && view === 'jobs') {
        if (unpanel)
            unpanel();
        panel.hidden = false;
        unpanel = jobs.jobPanel(panel, ctx, m[2]);
    }
    if (main.dataset.view === view && main.dataset.query === (m[3] || '') && m[2])
        return; // the panel only
    if (unmount)
        unmount();
    if (main.dataset.view !== view && !m[2])
        closePanel();
    main.dataset.view = view;
    main.dataset.query = m[3] || '';
    for (const a of nav.querySelectorAll('a'))
        a.classList.toggle('active', a.dataset.view === view);
    const root = h('div.view', {id: `view-${view}`});
    put(main, root);
    unmount = VIEWS[view][1].mount(root, ctx, {query: m[3] ? decodeURIComponent(m[3]) : ''});
}

window.addEventListener('hashchange', route);
document.addEventListener('keydown', ev => { if (ev.key === 'Escape' && ctx) closePanel(); });

// A token may come once in the fragment (#token=..., never sent to
// loomd): it goes to sessionStorage and out of the address bar.
const frag = location.hash.match(/^#token=(.+)$/);
if (frag) {
    sessionStorage.setItem(KEY, decodeURIComponent(frag[1]));
    history.replaceState(null, '', location.pathname);
}
const saved = sessionStorage.getItem(KEY);
if (saved)
    start(saved);
else
    login();

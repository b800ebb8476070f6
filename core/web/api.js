// api.js - the REST API of loomd as the dashboard uses it: the token, the
// calls, and the stream of events (GET /v1/events) read with fetch, which
// can send the token in a header (EventSource cannot). No DOM here: the
// benchmark of open dashboards runs this file in Node.
// SPDX-License-Identifier: MIT

// The claims of a token, as far as the browser can read them (loomd
// verifies them; the dashboard only shows what the roles may do): Loom's
// own "loom1.PAYLOAD.SIG" and JSON Web Tokens "HEADER.PAYLOAD.SIG".
export function tokenClaims(token) {
    const parts = String(token || '').trim().split('.');
    const payload = parts[0] === 'loom1' ? parts[1] : parts.length === 3 ? parts[1] : null;
    if (!payload)
        return null;
    try {
        const b64 = payload.replace(/-/g, '+').replace(/_/g, '/');
        const text = typeof atob === 'function' ? atob(b64)
            : Buffer.from(b64, 'base64').toString('binary');
        const c = JSON.parse(decodeURIComponent(escape(text)));
        if (parts[0] !== 'loom1') // a grid token acts as a gateway
            return {sub: `${c.iss},${c.sub}`, roles: ['gateway'], exp: c.exp};
        return {sub: c.sub, roles: c.roles || [], exp: c.exp};
    } catch (e) {
        return null;
    }
}

export class ApiError extends Error {
    constructor(status, body, path) {
        const e = body && body.error;
        super(e ? e.message : `HTTP ${status} on ${path}`);
        this.status = status;
        this.code = e ? e.code : null;
        this.field = e ? e.field : null;
    }
}

export class Api {
    // base: the URL the dashboard was loaded from (loomd, or a proxy in
    // front of it): paths are taken relative to it, so that a proxy may
    // serve Loom under a prefix.
    constructor(base, token) {
        this.base = base;
        this.token = token;
        this.claims = tokenClaims(token);
    }

    url(path) {
        return new URL(path.replace(/^\//, ''), this.base).toString();
    }

    has(...roles) {
        return !!this.claims && roles.some(r => this.claims.roles.includes(r));
    }

    async call(method, path, body, signal) {
        const headers = {Authorization: `Bearer ${this.token}`};
        if (body !== undefined)
            headers['Content-Type'] = 'application/json';
        let r;
        try {
            r = await fetch(this.url(path), {
                method, headers, signal, cache: 'no-store',
                body: body === undefined ? undefined : JSON.stringify(body),
            });
        } catch (e) {
            if (e.name === 'AbortError')
                throw e;
            throw new ApiError(0, null, `${path}: loomd did not answer (${e.message})`);
        }
        const text = await r.text();
        let doc = null;
        try {
            doc = text ? JSON.parse(text) : null;
        } catch (e) {
            throw new ApiError(r.status, null, path);
        }
        if (!r.ok)
            throw new ApiError(r.status, doc, path);
        return doc;
    }

    get(path, signal) {
        return this.call('GET', path, undefined, signal);
    }

    // Every item of a paged list (GET /v1/jobs follows "next"), at most max.
    async all(path, max = 100000) {
        let items = [], next = path;
        while (next && items.length < max) {
            const d = await this.get(next);
            items = items.concat(d.items);
            next = d.next;
        }
        return items;
    }

    // Read the event stream until it ends or signal aborts: onState(doc)
    // for each state event. Resolves when the stream ends (loomd stopped,
    // the token expired); rejects with ApiError on a refused request.
    async events(onState, signal) {
        const r = await fetch(this.url('/v1/events'), {
            headers: {Authorization: `Bearer ${this.token}`,
                      Accept: 'text/event-stream'},
            signal, cache: 'no-store',
        });
        if (!r.ok) {
            let doc = null;
            try {
                doc = await r.json();
            } catch (e) { /* not JSON: say the status */ }
            throw new ApiError(r.status, doc, '/v1/events');
        }
        const reader = r.body.getReader();
        const dec = new TextDecoder();
        let buf = '';
        for (;;) {
            const {value, done} = await reader.read();
            if (done)
                return;
            buf += dec.decode(value, {stream: true});
            let cut;
            while ((cut = buf.indexOf('\n\n')) >= 0) {
                const block = buf.slice(0, cut);
                buf = buf.slice(cut + 2);
                let event = 'message', data = '';
                for (const line of block.split('\n')) {
                    if (line.startsWith('event:'))
                        event = line.slice(6).trim();
                    else if (line.startsWith('data:'))
                        data += line.slice(5).trim();
                }
                if (event === 'state' && data)
                    onState(JSON.parse(data));
            }
        }
    }
}

// dashboards.mjs - N open dashboards without a browser, for web.sh: each
// runs the dashboard's own data layer (core/web/api.js and store.js, the
// same code as in the page) with the watches of one view, so that loomd
// sees the requests the open pages make: the event stream, and a fetch of
// what changed. Usage: node dashboards.mjs WEBDIR URL TOKEN N
// It prints "live N" once every dashboard has its first event, then every
// 5 s "fetches N events N"; it runs until it is killed.
// SPDX-License-Identifier: MIT
const [dir, url, token, n] = process.argv.slice(2);
const {Api} = await import(`${dir}/api.js`);
const store_ = await import(`${dir}/store.js`);
const {Store, watchFabric, watchJobs, watchTimeline, watchGoal} = store_;

const views = [
    s => watchFabric(s),
    s => watchJobs(s, {}, null),
    s => watchTimeline(s, s.clusters[s.clusters.length - 1].name),
    s => watchGoal(s),
];
const stores = [];
let events = 0;
for (let i = 0; i < Number(n); i++) {
    const s = new Store(new Api(`${url}/`, token));
    s.on(w => { if (w === 'state') events++; });
    await s.start();
    views[i % views.length](s);
    stores.push(s);
}
while (!stores.every(s => s.live === 'live'))
    await new Promise(r => setTimeout(r, 100));
console.log(`live ${stores.length}`);
setInterval(() => {
    console.log(`fetches ${stores.reduce((a, s) => a + s.fetches, 0)} events ${events}`);
}, 5000);

// dashboard.js - drives the dashboard in headless Chromium (Playwright's
// playwright-core, Debian's chromium) for 0017-dashboard.t: prints "ok -
// NAME", "not ok - NAME" and "# ..." lines that the test turns into TAP.
// Environment: LOOM_URL, ADMIN (token), ADMIN_ACCOUNT (its jobs'
// account), READER (token), USER (a user's token), USER_JOB (the id of the
// user's one job), USER_ACCOUNT (its account), SHOTS (directory of the
// screenshots), PROFILE (an empty --user-data-dir), PW (the
// playwright-core directory), CLUSTERS (how many clusters the fabric has),
// JOBS (a file: the ids of the jobs submitted and cancelled are written
// to it).
// SPDX-License-Identifier: MIT
'use strict';
const fs = require('fs');
const path = require('path');
const {chromium} = require(process.env.PW);

const URL_ = process.env.LOOM_URL + '/';
const SHOTS = process.env.SHOTS;
const CLUSTERS = Number(process.env.CLUSTERS);
const {ADMIN_ACCOUNT, USER_JOB, USER_ACCOUNT} = process.env;
let page, failed = 0;

function ok(cond, name, diag) {
    console.log(`${cond ? 'ok' : 'not ok'} - ${name}`);
    if (!cond) {
        failed++;
        if (diag)
            console.log(String(diag).split('\n').map(l => `# ${l}`).join('\n'));
    }
    return cond;
}

// step NAME FN: FN's failure (a time-out waiting for the page) is a
// failed test point with its message, and a screenshot of the moment.
async function step(name, fn) {
    try {
        await fn();
        ok(true, name);
        return true;
    } catch (e) {
        ok(false, name, e.message.split('\n').slice(0, 6).join('\n'));
        await shot(`failed-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`).catch(() => {});
        return false;
    }
}

async function shot(name, full = false) {
    await page.screenshot({path: path.join(SHOTS, `${name}.png`), fullPage: full});
}

const text = sel => page.locator(sel).first().innerText();

// the text of the counts of a cluster's card ("idle 3 maint 1")
const counts = c => text(`section.cluster[data-cluster="${c}"] .counts`);

async function waitText(sel, re, timeout = 60000) {
    await page.waitForFunction(([s, r]) => {
        const el = document.querySelector(s);
        return el && new RegExp(r).test(el.innerText);
    }, [sel, re.source], {timeout, polling: 250});
}

async function main() {
    const ctx = await chromium.launchPersistentContext(process.env.PROFILE, {
        executablePath: '/usr/bin/chromium', headless: true,
        viewport: {width: 1400, height: 900},
        args: ['--no-sandbox', '--headless', '--disable-gpu', '--no-first-run',
               '--disable-background-networking', '--disable-component-update',
               '--disable-sync'],
    });
    page = ctx.pages()[0] || await ctx.newPage();
    const errors = [];
    page.on('pageerror', e => errors.push(e.message));
    page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('dialog', d => d.accept());

    // ---- log in ---------------------------------------------------------
    await step('the page asks for a token', async () => {
        await page.goto(URL_);
        await page.waitForSelector('form.login textarea#token', {timeout: 20000});
        await shot('01-login');
    });
    await step('a bad token is refused by the page', async () => {
        await page.fill('#token', 'not-a-token');
        await page.click('form.login button');
        await waitText('form.login .error', /not a Loom token/, 5000);
    });
    await step('the admin token logs in; the fabric shows every cluster', async () => {
        await page.fill('#token', process.env.ADMIN);
        await page.click('form.login button');
        await page.waitForSelector('#view-fabric[data-ready-ms]', {timeout: 60000});
        const n = await page.locator('section.cluster').count();
        if (n !== CLUSTERS)
            throw new Error(`${n} cluster cards, not ${CLUSTERS}`);
        await page.evaluate(() => { window.loomTestMark = 1; }); // gone on a reload
    });
    const ready = Number(await page.getAttribute('#view-fabric', 'data-ready-ms'));
    const draw = Number(await page.getAttribute('#view-fabric', 'data-draw-ms'));
    const nodes = await page.evaluate(() => [...document.querySelectorAll('canvas.nodes')]
        .reduce((s, c) => s + Number(c.getAttribute('aria-label').split(': ')[1].split(' ')[0]), 0));
    console.log(`# render: ${nodes} nodes in ${CLUSTERS} clusters: ${ready} ms from the view's start ` +
                `until every grid was fetched and drawn, of which ${draw} ms drawing the canvases`);
    ok(nodes >= 16000, `the node grids hold every node (${nodes})`);
    ok(ready > 0 && ready < 10000, `... fetched and drawn within 10 s (${ready} ms)`);
    await step('the slurm cluster: up, script adaptor, 4 idle nodes', async () => {
        await waitText('section.cluster[data-cluster="slurm"] .head', /up/);
        await waitText('section.cluster[data-cluster="slurm"] .counts', /idle 4/);
        const head = await text('section.cluster[data-cluster="slurm"] .head');
        if (!/script · 4 nodes · polled/.test(head))
            throw new Error(`the card's head says: ${head}`);
        await shot('02-fabric', true);
    });
    await step("a node's record opens with goal versus actual", async () => {
        await page.fill('#find-node', 'slurm/n2');
        await page.click('form.find button');
        await waitText('#panel', /Goal versus actual[\s\S]*kernel\s+6\.1\s+5\.10/);
        await shot('03-node');
        await page.click('#panel button.close');
    });

    // ---- a job submitted, completed; one cancelled ------------------------
    let done = null, gone = null;
    await step('a job submitted from the Jobs view', async () => {
        await page.click('#nav a[data-view=jobs]');
        await page.click('details.card summary');
        await page.fill('form.submit input[name=name]', 'dash-hello');
        await page.selectOption('form.submit select[name=cluster]', 'slurm');
        await page.fill('form.submit input[name=walltime]', '5');
        await page.fill('form.submit textarea[name=script]', '#!/bin/sh\necho dashboard says hi\n');
        await page.click('form.submit button[type=submit]');
        await page.waitForFunction(() => /^#jobs\/\d+$/.test(location.hash), null, {timeout: 20000});
        done = (await page.evaluate(() => location.hash)).split('/')[1];
        fs.writeFileSync(process.env.JOBS, `${done}\n`);
    });
    await step('... reaches completed without a reload, and its output shows', async () => {
        await waitText('#panel dl.fields', /state\s+completed/, 90000);
        await waitText('#panel pre.output', /dashboard says hi/, 30000);
        await waitText('#panel dl.fields', new RegExp(`account\\s+${ADMIN_ACCOUNT}(\\s|$)`), 5000);
        await shot('04-job-completed');
    });
    await step('a second job runs, and Cancel cancels it', async () => {
        await page.fill('form.submit input[name=name]', 'dash-cancel');
        await page.fill('form.submit textarea[name=script]', '#!/bin/sh\nsleep 300\n');
        await page.click('form.submit button[type=submit]');
        await page.waitForFunction(d => /^#jobs\/\d+$/.test(location.hash) && location.hash !== `#jobs/${d}`,
                                   done, {timeout: 20000});
        gone = (await page.evaluate(() => location.hash)).split('/')[1];
        fs.appendFileSync(process.env.JOBS, `${gone}\n`);
        await waitText('#panel dl.fields', /state\s+running/, 60000);
        await page.click('#panel .actions button:text("Cancel")');
        await waitText('#panel dl.fields', /state\s+cancelled/, 60000);
        await shot('05-job-cancelled');
    });
    await step('the jobs table shows both, completed and cancelled', async () => {
        await page.click('#panel button.close');
        await waitText(`table.jobs tr[data-job="${done}"]`, /dash-hello[\s\S]*completed/, 20000);
        await waitText(`table.jobs tr[data-job="${gone}"]`, /dash-cancel[\s\S]*cancelled/, 20000);
        await page.selectOption('form.filters select[name=state]', 'cancelled');
        await page.waitForFunction(g => {
            const rows = [...document.querySelectorAll('table.jobs tbody tr')];
            return rows.length && rows.every(r => r.dataset.state === 'cancelled') &&
                rows.some(r => r.dataset.job === g);
        }, gone, {timeout: 20000});
        await shot('06-jobs-filtered');
        await page.selectOption('form.filters select[name=state]', '');
    });

    // ---- maintenance from goal versus actual --------------------------------
    let mid = null;
    await step('goal versus actual lists the mismatch of slurm/n2', async () => {
        await page.click('#nav a[data-view=goal]');
        await waitText('table.diff tr[data-node="slurm/n2"]', /kernel\s+6\.1\s+5\.10/, 30000);
    });
    await step('maintenance scheduled for slurm/n2 there', async () => {
        await page.check('table.diff tr[data-node="slurm/n2"] input[type=checkbox]');
        await page.fill('form.maint input[name=reason]', 'swap the PSU (dashboard)');
        await page.fill('form.maint input[name=duration_s]', '30');
        await page.click('form.maint button[type=submit]');
        await waitText('form.maint .result', /maintenance \d+/, 20000);
        mid = (await text('form.maint .result')).match(/maintenance (\d+)/)[1];
        await page.waitForSelector(`section.request[data-maint="${mid}"]`, {timeout: 20000});
        await shot('07-goal-maintenance');
    });
    await step('... on the timeline of slurm, on n2', async () => {
        await page.click('#nav a[data-view=timeline]');
        await page.selectOption('#view-timeline select', 'slurm');
        await waitText('ul.windows', new RegExp(`maintenance ${mid} \\(node-off, [a-z-]+\\) on n2`), 20000);
        await shot('08-timeline');
    });
    await step('... and slurm/n2 turns maint on the fabric', async () => {
        await page.click('#nav a[data-view=fabric]');
        await waitText('section.cluster[data-cluster="slurm"] .counts', /maint 1/, 60000);
        await page.fill('#find-node', 'slurm/n2');
        await page.click('form.find button');
        await waitText('#panel dl.fields', /state\s+maint/, 20000);
        await shot('09-fabric-maint');
        await page.click('#panel button.close');
    });
    await step('... the request goes through its steps to done', async () => {
        await page.click('#nav a[data-view=goal]');
        await page.waitForSelector(`section.request[data-maint="${mid}"][data-state="done"]`, {timeout: 120000});
        const steps = await text(`section.request[data-maint="${mid}"] ol.steps`);
        if (!/planned[\s\S]*in-progress[\s\S]*done/.test(steps))
            throw new Error(`steps: ${steps}`);
        await shot('10-goal-done');
    });
    await step('... and slurm/n2 is back: 4 idle nodes', async () => {
        await page.click('#nav a[data-view=fabric]');
        await waitText('section.cluster[data-cluster="slurm"] .counts', /^\s*idle 4\s*$/, 60000);
        await shot('11-fabric-back');
    });
    ok(await page.evaluate(() => window.loomTestMark === 1), 'all of it without reloading the page');
    ok(await page.getAttribute('#live', 'data-live') === 'live', 'the live updates are on');

    // ---- a reader sees, and is offered nothing it may not do ----------------
    const reader = await ctx.newPage(); // a tab of its own: its own sessionStorage
    page = reader;
    reader.on('pageerror', e => errors.push(e.message));
    reader.on('dialog', d => d.accept());
    await step('a reader logs in in another tab', async () => {
        await reader.goto(URL_);
        await reader.fill('#token', process.env.READER);
        await reader.click('form.login button');
        await reader.waitForSelector('#view-fabric[data-ready-ms]', {timeout: 60000});
    });
    await step('... the reader is offered no submit, cancel or maintenance', async () => {
        await reader.goto(`${URL_}#jobs/${done}`);
        await waitText('#panel dl.fields', /dash-hello/, 20000);
        if (await reader.locator('details.card summary').count())
            throw new Error('a submit form is offered');
        if (await reader.locator('#panel .actions button').count())
            throw new Error('job operations are offered');
        await reader.click('#nav a[data-view=goal]');
        await waitText('#view-goal', /scheduling maintenance needs the operator or admin role/, 20000);
        if (await reader.locator('table.diff input[type=checkbox]').count())
            throw new Error('nodes can be picked for maintenance');
        await shot('12-reader');
    });

    // ---- a user sees its own jobs only, as the API shows them --------------
    const user = await ctx.newPage();
    page = user;
    user.on('pageerror', e => errors.push(e.message));
    await step('a user logs in in a third tab', async () => {
        await user.goto(URL_);
        await user.fill('#token', process.env.USER);
        await user.click('form.login button');
        await user.waitForSelector('#view-fabric[data-ready-ms]', {timeout: 60000});
    });
    await step(`... its jobs table holds its one job, as ${USER_ACCOUNT}, and none of the admin's`, async () => {
        await user.click('#nav a[data-view=jobs]');
        await waitText(`table.jobs tr[data-job="${USER_JOB}"]`, new RegExp(`\\t${USER_ACCOUNT}\\t`), 20000);
        const ids = await user.evaluate(() => [...document.querySelectorAll('table.jobs tbody tr')]
            .map(r => r.dataset.job));
        if (ids.join() !== USER_JOB)
            throw new Error(`the table holds jobs ${ids.join()}`);
        if (!await user.locator('details.card summary').count())
            throw new Error('no submit form is offered to a user');
    });
    await step("... and the admin's job is not found for it", async () => {
        await user.goto(`${URL_}#jobs/${done}`);
        await waitText('#panel .error', new RegExp(`no job '${done}'`), 20000);
        await shot('13-user');
    });
    ok(errors.length === 0, 'no errors in the pages', errors.join('\n'));
    await ctx.close();
}

main().catch(e => {
    ok(false, 'the browser ran', e.stack);
}).finally(() => process.exit(failed ? 1 : 0));

// Drives Debian's headless chromium through the flexq dashboard while the
// tutorial runs (started by ../dashboard_test.py) and checks what a person
// would look at. Usage: node dashboard.mjs URL OUTDIR PROFILE_DIR
// Exit 0 when every check passed, 1 otherwise; screenshots in OUTDIR.
import { chromium } from "playwright-core";

const [url, outdir, profile] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => {
  if (!ok) { failures.push(what); console.error("FAIL:", what); }
  return ok;
};
const offsite = [];

const ctx = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  viewport: { width: 1366, height: 860 },
  // Playwright polls its predicates with eval, which the page's CSP forbids;
  // the offsite check below watches every request instead.
  bypassCSP: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const page = ctx.pages()[0] || await ctx.newPage();
page.on("request", (r) => {
  const u = new URL(r.url());
  if (!(u.protocol === "data:" || u.hostname === "127.0.0.1")) offsite.push(r.url());
});
page.on("pageerror", (e) => check(false, "page error: " + e.message));
page.on("console", (m) => console.error("console:", m.text()));

async function waitFor(what, fn, arg, timeout = 90000) {
  try {
    await page.waitForFunction(fn, arg, { timeout, polling: 250 });
    return true;
  } catch (e) {
    return check(false, what + ": " + e.message.split("\n")[0]);
  }
}
const shot = (name) => page.screenshot({ path: `${outdir}/dashboard-${name}.png`, fullPage: true });

try {
  // Overview: both flavors of the TPU resource in use at the same time.
  await page.goto(url + "/#/");
  await waitFor("overview shows TPU usage on on-demand and dws", () => {
    const used = (f) => {
      const e = document.querySelector(`.cq [data-flavor="${f}"] [data-resource="google.com/tpu"] .used`);
      return e ? parseFloat(e.textContent) : 0;
    };
    return used("on-demand") > 0 && used("dws") > 0;
  });
  await shot("overview").catch(() => {});

  // Jobs: job 1 on on-demand, job 2 on dws.
  await page.goto(url + "/#/jobs");
  await waitFor("jobs table: job 1 on on-demand, job 2 on dws", () => {
    const fl = (j) => {
      const e = document.querySelector(`tr[data-job="${j}"] td.flavor`);
      return e ? e.textContent.trim() : "";
    };
    return fl("rayjob-tpu-v6e-dws-1") === "on-demand" && fl("rayjob-tpu-v6e-dws-2") === "dws";
  });
  await shot("jobs");

  // Job 1: a loss chart with points and the log's lines.
  await page.click('tr[data-job="rayjob-tpu-v6e-dws-1"] a');
  await waitFor("job 1 shows a loss chart with points and log lines", () =>
    document.querySelectorAll("svg.chart circle.pt").length >= 2 &&
    /Epoch \d+: Loss/.test((document.getElementById("log") || {}).textContent || ""), undefined, 180000);
  await shot("job");

  // Capacity: the ProvisioningRequest of job 2.
  await page.goto(url + "/#/capacity");
  await waitFor("capacity page lists the ProvisioningRequest", () =>
    document.querySelectorAll("#prs tr[data-pr]").length >= 1);
  await shot("capacity");

  await page.goto(url + "/#/events");
  await waitFor("events page lists events", () =>
    document.querySelectorAll("#events tbody tr").length > 3);
  await shot("events");

  // Without JavaScript: the plain tables.
  const plain = await ctx.newPage();
  await plain.route("**/*.js", (r) => r.abort());
  await plain.goto(url + "/ui/jobs");
  const txt = await plain.textContent("table");
  check(/rayjob-tpu-v6e-dws-1/.test(txt) && /on-demand/.test(txt), "no-JS jobs table lists job 1 on on-demand");
  await plain.screenshot({ path: `${outdir}/dashboard-ui-jobs.png`, fullPage: true });
} catch (e) {
  check(false, "browser: " + e.message);
} finally {
  check(offsite.length === 0, "requests left 127.0.0.1: " + offsite.join(" "));
  await ctx.close();
}
console.log(failures.length ? `${failures.length} check(s) failed` : "ok");
process.exit(failures.length ? 1 : 0);

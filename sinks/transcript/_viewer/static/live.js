// corral transcripts serve: the session page's one script (no build step, no CDN).
// - Deep links: #turn-<id> and #seq-<n> are anchors the renderer writes; an event
//   folded into a block (a text delta mid-message) has none, so #seq-<n> falls back
//   to the block holding it: the last anchor whose sequence is not above n. The
//   element a link points at is outlined.
// - Live sessions: the page listens to /session/<id>/events (server-sent events);
//   on each new event it fetches the page again and swaps the transcript in.
"use strict";

function anchorFor(hash) {
  const wanted = /^#seq-(\d+)$/.exec(hash);
  if (!wanted) return null;
  const n = Number(wanted[1]);
  let best = null;
  for (const el of document.querySelectorAll('[id^="seq-"]')) {
    const seq = Number(el.id.slice(4));
    if (seq <= n && (best === null || seq >= Number(best.id.slice(4)))) best = el;
  }
  return best;
}

function followHash() {
  for (const old of document.querySelectorAll(".corral-target")) {
    old.classList.remove("corral-target");
    old.style.outline = "";
  }
  if (!location.hash) return;
  const target = document.getElementById(location.hash.slice(1)) || anchorFor(location.hash);
  if (!target) return;
  target.classList.add("corral-target"); // what the link points at, outlined
  target.style.outline = "2px solid #f5a623";
  target.scrollIntoView();
}

async function refresh() {
  const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  const reply = await fetch(location.pathname, { cache: "no-store" });
  if (!reply.ok) return;
  const fresh = new DOMParser().parseFromString(await reply.text(), "text/html");
  const mine = document.getElementById("corral-transcript");
  const theirs = fresh.getElementById("corral-transcript");
  if (mine && theirs) mine.replaceChildren(...theirs.childNodes);
  if (atBottom) window.scrollTo(0, document.body.scrollHeight);
}

function listen(nav) {
  const source = new EventSource(`${nav.dataset.events}?after=${nav.dataset.after}`);
  const status = document.getElementById("corral-live");
  let pending = null;
  source.addEventListener("transcript", (message) => {
    nav.dataset.after = message.lastEventId;
    if (pending === null) pending = setTimeout(() => { pending = null; refresh(); }, 200);
  });
  source.addEventListener("ended", (message) => {
    source.close();
    const ended = JSON.parse(message.data).state;
    const badge = nav.querySelector(".state");
    if (badge) {
      badge.textContent = ended;
      badge.className = `state state-${ended}`;
    }
    if (status) status.textContent = `ended: ${ended}`;
    refresh();
  });
}

window.addEventListener("hashchange", followHash);
document.addEventListener("DOMContentLoaded", () => {
  followHash();
  const nav = document.getElementById("corral-viewer");
  if (nav && nav.dataset.live === "yes") listen(nav);
});

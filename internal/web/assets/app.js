// The page's only script: it posts the forms without leaving the page, shows each reply, and
// swaps in the parts the server pushes (server-sent events) without losing what is being typed.
// Every part is HTML the server drew with html/template from text it made harmless first.
(() => {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const status = $('status');
  const live = $('live');

  function say(msg, good) {
    status.textContent = msg;
    status.className = good ? 'ok' : 'bad';
  }

  async function post(form, submitter) {
    const data = new URLSearchParams(new FormData(form, submitter));
    const buttons = form.querySelectorAll('button');
    buttons.forEach((b) => { b.disabled = true; });
    try {
      const r = await fetch(form.getAttribute('action'), {
        method: 'POST', body: data, credentials: 'same-origin', headers: { Accept: 'application/json' },
      });
      let reply = {};
      try { reply = await r.json(); } catch (e) { reply = {}; }
      say(reply.message || (r.status + ' ' + r.statusText), r.ok);
      if (r.ok && form.id === 'send') { form.elements.text.value = ''; }
    } catch (e) {
      say('the request did not reach wcomm web: ' + e, false);
    } finally {
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  document.addEventListener('submit', (e) => {
    const form = e.target;
    if (!(form instanceof HTMLFormElement)) return;
    e.preventDefault();
    post(form, e.submitter);
  });

  async function loadScreen(d) {
    const pre = d.querySelector('pre');
    try {
      const r = await fetch('/screen?pane=' + encodeURIComponent(d.dataset.pane), { credentials: 'same-origin' });
      const reply = await r.json();
      pre.textContent = reply.message || '';
    } catch (e) {
      pre.textContent = 'the screen could not be read: ' + e;
    }
  }
  document.addEventListener('toggle', (e) => {
    const d = e.target;
    if (d instanceof HTMLDetailsElement && d.classList.contains('screen') && d.open) loadScreen(d);
  }, true);

  function fragment(html) {
    const t = document.createElement('template');
    t.innerHTML = html;
    return t.content;
  }

  // The questions: a card already shown stays as it is (a half-typed answer, the focus), new
  // ones come in at their place, answered ones leave.
  function swapQuestions(html) {
    const box = $('questions');
    const next = fragment(html);
    const cards = Array.from(next.querySelectorAll('article[data-q]'));
    if (cards.length === 0) { box.replaceChildren(next); return; }
    const have = new Map();
    Array.from(box.children).forEach((n) => {
      if (n.dataset && n.dataset.q) have.set(n.dataset.q, n); else n.remove();
    });
    const want = new Set(cards.map((c) => c.dataset.q));
    have.forEach((n, id) => { if (!want.has(id)) { n.remove(); have.delete(id); } });
    let prev = null;
    for (const c of cards) {
      const node = have.get(c.dataset.q) || c;
      const at = prev ? prev.nextElementSibling : box.firstElementChild;
      if (at !== node) box.insertBefore(node, at);
      prev = node;
    }
  }

  // The panes: drawn again whole, with the screens that were open opened again.
  function swapPanes(html) {
    const box = $('panes');
    const open = Array.from(box.querySelectorAll('details.screen[open]')).map((d) => d.dataset.pane);
    const active = document.activeElement;
    const focused = active && box.contains(active) && active.closest('[data-pane]') ? active.closest('[data-pane]').dataset.pane : null;
    box.replaceChildren(fragment(html));
    for (const id of open) {
      const d = box.querySelector('details.screen[data-pane="' + CSS.escape(id) + '"]');
      if (d) d.open = true;
    }
    if (focused) {
      const s = box.querySelector('details.screen[data-pane="' + CSS.escape(focused) + '"] summary');
      if (s) s.focus();
    }
  }

  function connect() {
    const es = new EventSource('/events');
    es.addEventListener('view', (e) => {
      const v = JSON.parse(e.data);
      swapPanes(v.panes);
      swapQuestions(v.questions);
      $('feed').replaceChildren(fragment(v.feed));
      $('problems').replaceChildren(fragment(v.problems));
      document.body.dataset.version = String(v.version);
      live.textContent = 'live';
    });
    es.addEventListener('open', () => { live.textContent = 'live'; });
    es.addEventListener('error', () => { live.textContent = 'reconnecting…'; });
  }
  connect();
})();

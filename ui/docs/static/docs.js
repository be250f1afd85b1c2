// The manual's page script: the console's theme choice (same localStorage
// key, cycled by the button), anchor links on headings, and search over
// every page's title and headings as you type (/docs/index.json); without
// script the search form submits to /docs/?q=.
(function () {
  var KEY = 'netmon.theme'
  var root = document.documentElement
  function mode() { try { return localStorage.getItem(KEY) || 'system' } catch (e) { return 'system' } }
  function apply() {
    var m = mode()
    if (m === 'light' || m === 'dark') root.setAttribute('data-theme', m)
    else root.removeAttribute('data-theme')
    var b = document.getElementById('docs-theme')
    if (b) b.textContent = 'Theme: ' + m
  }
  apply()
  document.addEventListener('DOMContentLoaded', function () {
    apply()
    var btn = document.getElementById('docs-theme')
    btn.addEventListener('click', function () {
      var next = { system: 'light', light: 'dark', dark: 'system' }[mode()] || 'system'
      try { localStorage.setItem(KEY, next) } catch (e) { /* storage unavailable */ }
      apply()
    })
    document.querySelectorAll('main h2[id], main h3[id]').forEach(function (h) {
      var a = document.createElement('a')
      a.className = 'anchor'
      a.href = '#' + h.id
      a.textContent = '#'
      a.setAttribute('aria-label', 'Link to this section')
      h.appendChild(a)
    })
    var input = document.getElementById('docs-q')
    var list = document.getElementById('docs-hits')
    var index = null
    function load(then) {
      if (index) return then()
      fetch('/docs/index.json').then(function (r) { return r.json() }).then(function (j) { index = j; then() })
    }
    function show() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean)
      list.textContent = ''
      if (!words.length) { list.hidden = true; return }
      function hit(s) { s = s.toLowerCase(); return words.every(function (w) { return s.indexOf(w) >= 0 }) }
      var n = 0
      index.forEach(function (p) {
        var items = []
        if (hit(p.title)) items.push({ href: '/docs/' + p.slug, text: p.title, page: 'page' })
        ;(p.headings || []).forEach(function (h) { if (hit(h.text)) items.push({ href: '/docs/' + p.slug + '#' + h.id, text: h.text, page: 'in ' + p.title }) })
        items.forEach(function (it) {
          if (n++ >= 30) return
          var li = document.createElement('li')
          var a = document.createElement('a')
          a.href = it.href
          a.textContent = it.text + ' '
          var s = document.createElement('span')
          s.className = 'in'
          s.textContent = it.page
          a.appendChild(s)
          li.appendChild(a)
          list.appendChild(li)
        })
      })
      if (!n) {
        var li = document.createElement('li')
        li.textContent = 'No title or heading matches'
        li.className = 'in'
        list.appendChild(li)
      }
      list.hidden = false
    }
    input.addEventListener('input', function () { load(show) })
    input.addEventListener('keydown', function (e) {
      if (e.key === 'Escape') { list.hidden = true }
    })
    document.addEventListener('click', function (e) { if (!list.contains(e.target) && e.target !== input) list.hidden = true })
  })
})()

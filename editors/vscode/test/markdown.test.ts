import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown, safeHref } from '../src/markdown';

test('markdown renders', () => {
  const h = renderMarkdown('# Title\n\nSome **bold** and `code`.\n\n```go\nfmt.Println("<hi>")\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
  assert.match(h, /<h1[^>]*>Title<\/h1>/);
  assert.match(h, /<strong>bold<\/strong>/);
  assert.match(h, /<code>code<\/code>/);
  assert.match(h, /&lt;hi&gt;/);
  assert.match(h, /<table>/);
});

test('raw HTML from the model is shown as text', () => {
  const h = renderMarkdown('hello <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n<div onclick="x()">block</div>\n');
  assert.doesNotMatch(h, /<script/i);
  assert.doesNotMatch(h, /<img/i);
  assert.doesNotMatch(h, /<div/i);
  assert.match(h, /&lt;script&gt;/);
});

test('links are limited to safe schemes; images become links', () => {
  const h = renderMarkdown('[a](javascript:alert(1)) [b](https://example.com "t") [c](src/a.go) ![i](https://e.com/x.png) [d](data:text/html,x)');
  assert.doesNotMatch(h, /javascript:/);
  assert.doesNotMatch(h, /data:/);
  assert.match(h, /<a href="https:\/\/example.com" title="t">b<\/a>/);
  assert.match(h, /<a href="src\/a.go">c<\/a>/);
  assert.doesNotMatch(h, /<img/);
  assert.equal(safeHref('vbscript:x'), undefined);
  assert.equal(safeHref('//evil.com/x'), undefined);
  assert.equal(safeHref('mailto:a@b.c'), 'mailto:a@b.c');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_ATTACHMENTS,
  MAX_ATTACHMENT_BYTES,
  MAX_TOTAL_BYTES,
  IMAGE_EXTENSIONS,
  addAttachments,
  dataURL,
  formatBytes,
  fromDataURL,
  imageType,
  isImage,
  mimeFor,
  pastedName,
  refusal,
  refusedMessage,
  toParams,
  type PendingAttachment,
} from '../src/attachments';

const pic = (name: string, size = 100, mimeType = 'image/png'): PendingAttachment => ({ name, mimeType, data: 'AAAA', size });

test('the limits are the server\'s: 10 pictures, 32 MiB each; all of them fit in one 64 MiB message as base64', () => {
  assert.equal(MAX_ATTACHMENTS, 10);
  assert.equal(MAX_ATTACHMENT_BYTES, 32 << 20);
  assert.ok((MAX_TOTAL_BYTES * 4) / 3 < 63 << 20);
  assert.ok(MAX_TOTAL_BYTES >= MAX_ATTACHMENT_BYTES);
  assert.deepEqual(IMAGE_EXTENSIONS, ['png', 'jpg', 'jpeg', 'gif', 'webp', 'bmp']);
});

test('picture types: by the browser\'s type, else by the file name', () => {
  assert.equal(imageType('Shot.PNG'), 'image/png');
  assert.equal(imageType('photo.jpeg'), 'image/jpeg');
  assert.equal(imageType('a.jpg'), 'image/jpeg');
  assert.equal(imageType('notes.txt'), '');
  assert.equal(imageType('noext'), '');
  assert.ok(isImage({ name: 'x', type: 'image/webp' }));
  assert.ok(isImage({ name: 'x.bmp', type: '' }));
  assert.ok(isImage({ name: 'x.gif', type: 'application/octet-stream' }));
  assert.ok(!isImage({ name: 'x.svg', type: 'image/svg+xml' }), 'SVG is not a picture the server loads');
  assert.ok(!isImage({ name: 'x.png', type: 'text/plain' }), 'the browser\'s type wins when it has one');
  assert.ok(!isImage({ name: 'x.tiff', type: '' }));
  assert.equal(mimeFor({ name: 'x.png', type: '' }), 'image/png');
  assert.equal(mimeFor({ name: 'x.png', type: 'IMAGE/JPEG' }), 'image/jpeg');
});

test('refusal says why a file is not taken, naming it', () => {
  assert.equal(refusal({ name: 'a.png', type: 'image/png', size: 10 }), undefined);
  assert.match(refusal({ name: 'doc.pdf', type: 'application/pdf', size: 10 })!, /^doc\.pdf is not a picture Zero takes \(PNG, JPEG, GIF, WebP or BMP\)/);
  assert.match(refusal({ name: 'big.png', type: 'image/png', size: MAX_ATTACHMENT_BYTES + 1 })!, /^big\.png is 32\.0 MiB; a picture may have at most 32\.0 MiB/);
  assert.equal(refusal({ name: 'edge.png', type: 'image/png', size: MAX_ATTACHMENT_BYTES }), undefined);
  assert.match(refusal({ name: 'empty.png', type: 'image/png', size: 0 })!, /empty/);
  assert.match(refusal({ name: '', type: 'text/plain', size: 3 })!, /^The pasted item is not a picture/);
});

test('addAttachments: in order, within the count and the total, saying what was left out', () => {
  const nine = Array.from({ length: 9 }, (_, i) => pic(`p${i}.png`));
  const r = addAttachments(nine, [pic('ten.png'), pic('eleven.png'), pic('doc.txt', 5, 'text/plain')]);
  assert.deepEqual(r.pending.map((a) => a.name), [...nine.map((a) => a.name), 'ten.png']);
  assert.deepEqual(r.errors, [
    'At most 10 pictures go with one message: eleven.png was not added.',
    'doc.txt is not a picture Zero takes (PNG, JPEG, GIF, WebP or BMP).',
  ]);
  assert.equal(nine.length, 9, 'the list given is not changed');

  const big = 30 << 20;
  const t = addAttachments([pic('a.png', big)], [pic('b.png', big), pic('c.png', 1000)]);
  assert.deepEqual(t.pending.map((a) => a.name), ['a.png', 'c.png']);
  assert.equal(t.errors.length, 1);
  assert.match(t.errors[0]!, /^b\.png \(30\.0 MiB\) was not added: the pictures of one message may have at most 45\.0 MiB in all/);

  const huge = addAttachments([], [pic('huge.png', MAX_ATTACHMENT_BYTES + 5)]);
  assert.deepEqual(huge.pending, []);
  assert.match(huge.errors[0]!, /huge\.png is 32\.0 MiB/);
});

test('pasted pictures get a name of their own; named files keep theirs', () => {
  assert.equal(pastedName('image.png', 'image/png', 1), 'pasted image 1.png');
  assert.equal(pastedName('', 'image/jpeg', 2), 'pasted image 2.jpg');
  assert.equal(pastedName('IMAGE.JPG', 'image/jpeg', 3), 'pasted image 3.jpg');
  assert.equal(pastedName('diagram.png', 'image/png', 4), 'diagram.png');
});

test('data: URLs: only of picture types; read back from FileReader\'s', () => {
  assert.equal(dataURL('image/png', 'AAAA'), 'data:image/png;base64,AAAA');
  assert.equal(dataURL('IMAGE/GIF', 'R0lG'), 'data:image/gif;base64,R0lG');
  assert.equal(dataURL('image/svg+xml', 'PHN2Zz4='), undefined);
  assert.equal(dataURL('text/html', 'PGI+'), undefined);
  assert.deepEqual(fromDataURL('data:image/png;base64,iVBOR'), { mimeType: 'image/png', data: 'iVBOR' });
  assert.deepEqual(fromDataURL('data:;base64,AAAA'), { mimeType: '', data: 'AAAA' });
  assert.deepEqual(fromDataURL('data:image/png;name=x.png;base64,AAAA'), { mimeType: 'image/png', data: 'AAAA' });
  assert.equal(fromDataURL('data:text/plain,hello'), undefined);
  assert.equal(fromDataURL('https://example.com/x.png'), undefined);
});

test('sizes', () => {
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(42 * 1024 * 1024 + 200 * 1024), '42.2 MiB');
});

test('toParams: what zero/prompt takes', () => {
  assert.deepEqual(toParams([{ name: 'a.png', mimeType: 'image/png', data: 'AAAA', size: 3 }]), [{ name: 'a.png', mimeType: 'image/png', data: 'AAAA' }]);
});

test('refusedMessage: the server\'s invalidParams in words for the person', () => {
  assert.equal(refusedMessage('invalid params: attachments[1].data: x.png: not base64 (illegal base64 data at input byte 0)'), 'Picture 2: x.png: not base64 (illegal base64 data at input byte 0)');
  assert.equal(refusedMessage('invalid params: attachments[0]: not an image: notes.txt is text/plain'), 'Picture 1: not an image: notes.txt is text/plain');
  assert.equal(refusedMessage('invalid params: attachments[0].path: attach ../x.png: it is outside the workspace (/w)'), 'Picture 1: attach ../x.png: it is outside the workspace (/w)');
  assert.equal(refusedMessage('invalid params: attachments: 11 attachments, at most 10 in one message'), '11 attachments, at most 10 in one message');
  assert.equal(refusedMessage('sessionId: unknown session "x"'), 'sessionId: unknown session "x"');
});
